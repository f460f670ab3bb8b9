//! The worker's sink of the library's event loop (`Runtime::dispatch_into`,
//! retries by the source): each delivery goes to the async side as it ends
//! (counted and printed there), and what the loop concluded about each is
//! kept for the message's ending: a nak with the longest backoff asked, or
//! the dead letter and the cascade. The loop decides; this only records.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hookrt::delivery::{Conclusion, End, Sink};
use hookrt::{Delivery, Outcome, Resolution};

/// One finished delivery (its record without the hook's logs), as reported
/// to the async side.
pub(crate) struct Finished {
    pub(crate) delivery: Delivery,
    pub(crate) at_us: u64,
}

impl Finished {
    pub(crate) fn of(d: Delivery) -> Finished {
        let at_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |t| t.as_micros() as u64);
        let delivery = Delivery {
            logs: Vec::new(),
            console: String::new(),
            ..d
        };
        Finished { delivery, at_us }
    }
}

/// What running a message's deliveries gave.
pub(crate) struct Ran {
    /// What the event decided.
    pub(crate) resolution: Option<Resolution>,
    /// The (hook, handler) deliveries that succeeded.
    pub(crate) succeeded: Vec<(String, String)>,
    /// Those that failed, with what the event loop concluded.
    pub(crate) failed: Vec<Failed>,
    /// A failed delivery has attempts left: the longest backoff asked.
    pub(crate) retry: Option<Duration>,
}

/// A failed delivery and what the event loop concluded.
pub(crate) struct Failed {
    pub(crate) hook: String,
    pub(crate) handler: String,
    pub(crate) outcome: Outcome,
    /// What its final failure leaves (`None`: it has attempts left).
    pub(crate) conclusion: Option<Conclusion>,
}

/// The worker's sink: each delivery to the async side as it ends (counted
/// and printed there), and what the event loop concluded about each.
pub(crate) struct Verdicts {
    tx: Option<tokio::sync::mpsc::UnboundedSender<Finished>>,
    /// The (hook, handler, outcome) of the last attempt reported.
    last: Option<(String, String, Outcome)>,
    ran: Ran,
}

impl Verdicts {
    /// A sink sending each finished delivery to `tx`.
    pub(crate) fn new(tx: tokio::sync::mpsc::UnboundedSender<Finished>) -> Verdicts {
        Verdicts {
            tx: Some(tx),
            last: None,
            ran: Ran {
                resolution: None,
                succeeded: Vec::new(),
                failed: Vec::new(),
                retry: None,
            },
        }
    }

    /// What the run gave, with what the event decided; the sender is
    /// dropped, so the async side stops reading.
    pub(crate) fn into_ran(self, resolution: Option<Resolution>) -> Ran {
        Ran {
            resolution,
            ..self.ran
        }
    }
}

impl Sink for Verdicts {
    fn attempted(&mut self, _: usize, d: Delivery) {
        self.last = Some((d.hook.clone(), d.handler.clone(), d.outcome));
        if let Some(tx) = &self.tx {
            let _ = tx.send(Finished::of(d));
        }
    }

    fn concluded(&mut self, _: usize, end: End<'_>) {
        let conclusion = match end {
            End::Final { conclusion, .. } => Some(conclusion),
            End::Retry { wait, .. } => {
                self.ran.retry = self.ran.retry.max(Some(wait));
                None
            }
            // Not run (a file-edit owner answered before it): nothing to tell.
            _ => return,
        };
        let Some((hook, handler, outcome)) = self.last.take() else {
            return;
        };
        match conclusion {
            Some(Conclusion::Done) => self.ran.succeeded.push((hook, handler)),
            conclusion => self.ran.failed.push(Failed {
                hook,
                handler,
                outcome,
                conclusion,
            }),
        }
    }
}
