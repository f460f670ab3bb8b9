//! One attempt of one delivery: the hook is lent the event, its output
//! capped and masked, and its log lines forwarded to `tracing`.

use crate::delivery::record::Delivery;
use crate::event::envelope::Envelope;
use crate::event::scope::Scope;
use crate::hooks::loaded::call::{Call, Services};
use crate::hooks::loaded::load::LoadedHook;
use crate::sandbox::capture::LogLine;
use crate::sandbox::wit::CheckedEvent;

/// Runs one delivery of `envelope` (already checked as `checked`) to
/// `hook`'s `handler` as attempt `attempt`. The hook is lent the record, no
/// copy. The flag is true when the runtime cancelled it (shutdown): then
/// the record is not an outcome of the hook.
pub(crate) fn deliver(
    services: &Services<'_>,
    hook: &LoadedHook,
    envelope: &Envelope,
    checked: &CheckedEvent,
    handler: &str,
    attempt: u32,
) -> (Delivery, Call) {
    let lent = checked.lend(envelope, attempt, hook.scope == Scope::Aggregate);
    let mut r = hook.call(
        services,
        lent,
        envelope.transcript(),
        handler,
        checked.class,
    );
    hook.cap_log_rate(&mut r.output);
    hook.note_cost(r.duration_us);
    let d = Delivery {
        event_id: envelope.id.clone(),
        kind: envelope.kind.clone(),
        hook: hook.id(),
        handler: handler.to_owned(),
        attempt,
        outcome: r.outcome,
        duration_us: r.duration_us,
        fuel_used: r.fuel_used,
        error: r.error.take(),
        output_truncated: r.output.truncated,
        logs: std::mem::take(&mut r.output.logs),
        console: std::mem::take(&mut r.output.stdout) + &r.output.stderr,
    };
    let mut d = d;
    d.mask(services.redactor);
    if !r.cancelled {
        trace_delivery(&d);
    }
    (d, r)
}

/// Forwards a delivery's log lines to `tracing` (target `hook`) and records failures.
fn trace_delivery(d: &Delivery) {
    /// A log line as `tracing` gets it, written out only when a subscriber
    /// takes the event (most deliveries log, and most runs keep no log).
    struct Line<'a>(&'a Delivery, &'a LogLine);
    impl std::fmt::Display for Line<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            let Line(d, line) = self;
            write!(
                f,
                "[{} {} {}] {}",
                d.hook, d.event_id, d.handler, line.message
            )?;
            for (k, v) in &line.fields {
                write!(f, " {k}={v}")?;
            }
            Ok(())
        }
    }
    for line in &d.logs {
        let msg = Line(d, line);
        match line.level {
            "error" => tracing::error!(target: "hook", "{msg}"),
            "warn" => tracing::warn!(target: "hook", "{msg}"),
            "info" => tracing::info!(target: "hook", "{msg}"),
            "debug" => tracing::debug!(target: "hook", "{msg}"),
            _ => tracing::trace!(target: "hook", "{msg}"),
        }
    }
    if d.output_truncated {
        tracing::warn!(target: "hook", "[{} {} {}] output cut at the hook's output limit (output_bytes or log_bytes_per_minute)", d.hook, d.event_id, d.handler);
    }
    if let Some(err) = &d.error {
        tracing::warn!(hook = %d.hook, event_id = %d.event_id, handler = %d.handler, outcome = %d.outcome, "delivery failed: {err}");
    }
}
