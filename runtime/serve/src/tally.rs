//! One batch's results: each event's receipt or error, in the body's order,
//! and the counts the answer's status is chosen by.

use hookrt::front::input::LineError;
use hookrt::{EmitError, PendingReceipt, Receipt};
use serde_json::{Value, json};

use crate::metrics::{EventLabels, ServerMetrics};

/// What a caller can do about an emit error, and the metric reason.
pub fn explain(e: &EmitError) -> (&'static str, &'static str) {
    match e {
        EmitError::Invalid(_) => (
            "invalid",
            "fix the event (docs/envelope.md#validation); sending it again unchanged fails again",
        ),
        EmitError::Overloaded(_) => (
            "overloaded",
            "send it again after earlier events are receipted",
        ),
        EmitError::ShuttingDown(_) => ("shutting_down", "send it again to the restarted server"),
        EmitError::Journal { .. } => ("journal", "send it again; its id makes a repeat harmless"),
    }
}

/// Each item's result in a batch, and the counts.
pub struct Tally {
    /// One JSON result per item.
    pub results: Vec<Value>,
    /// Events taken.
    pub taken: usize,
    /// Events the service refused (not the event's fault).
    pub service_errors: usize,
}

impl Tally {
    /// A tally of `n` items.
    pub fn new(n: usize) -> Tally {
        Tally {
            results: vec![Value::Null; n],
            taken: 0,
            service_errors: 0,
        }
    }

    /// Records one event's receipt or error.
    pub fn record(&mut self, metrics: &ServerMetrics, i: usize, r: Result<Receipt, EmitError>) {
        let result = &mut self.results[i];
        match r {
            Ok(receipt) => {
                metrics
                    .events
                    .get_or_create(&EventLabels {
                        durability: receipt.durability.as_str().to_owned(),
                        duplicate: receipt.duplicate.to_string(),
                    })
                    .inc();
                self.taken += 1;
                result["ok"] = json!(true);
                result["receipt"] = json!(receipt);
            }
            Err(e) => {
                let (reason, fix) = explain(&e);
                metrics.refuse(reason);
                if reason != "invalid" {
                    self.service_errors += 1;
                }
                result["ok"] = json!(false);
                result["code"] = json!(reason);
                result["error"] = json!(e.to_string());
                result["fix"] = json!(fix);
            }
        }
    }

    /// Item `i` is no envelope: refused as `malformed`, the others taken.
    pub fn malformed(&mut self, metrics: &ServerMetrics, i: usize, error: &LineError) {
        metrics.refuse("malformed");
        let r = &mut self.results[i];
        r["ok"] = json!(false);
        r["code"] = json!("malformed");
        r["error"] = json!(error.to_string());
        r["fix"] =
            json!("fix this event and send it again; the others were taken (docs/envelope.md)");
    }

    /// Waits for every pending receipt, in order.
    pub async fn settle(
        &mut self,
        pending: &mut Vec<(usize, PendingReceipt)>,
        metrics: &ServerMetrics,
    ) {
        for (i, p) in pending.drain(..) {
            let r = p.receipt().await;
            metrics.queue_depth.dec();
            self.record(metrics, i, r);
        }
    }
}
