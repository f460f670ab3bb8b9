//! Where a consumed message came from and which attempt its delivery is:
//! JetStream's delivery count after the deliveries a re-driven message had
//! before (`Hookrt-Attempt-Base`), raised above the attempt the partition's
//! task last ran the message at (a new consumer leader may hand a message
//! back at a count it already had; docs/worker.md, "A JetStream cluster").

use async_nats::jetstream::Message;

use crate::WorkerError;
use crate::publish::ATTEMPT_BASE_HEADER;

/// Where a message came from and how often it was delivered.
pub(crate) struct Received {
    /// JetStream's delivery count (1 on the first).
    pub(crate) delivered: u32,
    /// This delivery's attempt: the delivery count after the deliveries a
    /// re-driven message had before (`Hookrt-Attempt-Base`), or one above
    /// the attempt this worker last ran the message at, when higher.
    pub(crate) attempt: u32,
    /// Its place in the events stream.
    pub(crate) seq: u64,
    /// The stream it was read from.
    pub(crate) stream: String,
}

impl Received {
    pub(crate) fn of(message: &Message) -> Result<Received, WorkerError> {
        let info = message
            .info()
            .map_err(|e| WorkerError::nats("a message has no JetStream info", e))?;
        let delivered = u32::try_from(info.delivered.max(1)).unwrap_or(u32::MAX);
        // Set by a re-drive; a publisher's own is capped like any attempt.
        let base = header(message, ATTEMPT_BASE_HEADER)
            .and_then(|b| b.parse::<u32>().ok())
            .unwrap_or(0)
            .min(hookrt::event::MAX_ATTEMPT);
        Ok(Received {
            delivered,
            // Never the publisher's own `attempt` (a high one would skip
            // retries), and never wrapping.
            attempt: base.saturating_add(delivered),
            seq: info.stream_sequence,
            stream: info.stream.to_owned(),
        })
    }

    /// This delivery, when this task last ran the same message at attempt
    /// `ran`: at least one attempt above.
    pub(crate) fn after(mut self, ran: Option<u32>) -> Received {
        if let Some(ran) = ran
            && self.attempt <= ran
        {
            tracing::info!(target: "hookrt", seq = self.seq, ran, delivered = self.delivered, "a message came back at a delivery count it had (a cluster's new consumer leader): run at a higher attempt");
            self.attempt = ran.saturating_add(1);
        }
        self
    }

    /// Whether some of the message's deliveries may have run before.
    pub(crate) fn is_repeat(&self) -> bool {
        self.attempt > 1
    }
}

pub(crate) fn header(message: &Message, name: &str) -> Option<String> {
    message
        .headers
        .as_ref()
        .and_then(|h| h.get(name))
        .map(|v| v.as_str().to_owned())
}
