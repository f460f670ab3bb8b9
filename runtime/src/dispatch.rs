//! Dispatch: running one event through the registry's planned deliveries.
//!
//! Deliveries of one event run one after another in the planned order
//! (specific handlers, then `*` handlers). A failing delivery never stops the
//! ones after it: each is contained by the sandbox and recorded with its
//! outcome. Observe events ignore what handlers return.

use crate::bindings::{WitCoordinates, WitDurability, WitEnvelope};
use crate::delivery::{Delivery, EventReport};
use crate::envelope::{Durability, Envelope, EnvelopeError};
use crate::hook::LoadedHook;
use crate::registry::Registry;
use crate::sandbox::Sandbox;

/// Runs every delivery of `envelope`, telling hooks it is held as `durability`.
pub fn dispatch(sandbox: &Sandbox, registry: &Registry, envelope: &Envelope, durability: Durability) -> Result<EventReport, EnvelopeError> {
    let mut checked = envelope.clone();
    checked.validate()?;
    let envelope = &checked;
    // The WIT record is built once per event and lent to every hook.
    let mut wit = to_wit(envelope, durability)?;
    let deliveries = registry
        .plan(&envelope.kind)
        .into_iter()
        .map(|planned| deliver(sandbox, &registry.hooks()[planned.index], envelope, &mut wit, planned.handler, envelope.attempt).0)
        .collect();
    Ok(EventReport { event_id: envelope.id.clone(), kind: envelope.kind.clone(), deliveries })
}

/// Runs one delivery of `envelope` (already converted to `wit`) to `hook`'s
/// `handler` as attempt `attempt`. The flag is true when the runtime cancelled
/// it (shutdown): then the record is not an outcome of the hook.
pub(crate) fn deliver(
    sandbox: &Sandbox,
    hook: &LoadedHook,
    envelope: &Envelope,
    wit: &mut WitEnvelope,
    handler: &str,
    attempt: u32,
) -> (Delivery, bool) {
    wit.attempt = attempt;
    let r = hook.call(sandbox, wit, handler);
    let d = Delivery {
        event_id: envelope.id.clone(),
        kind: envelope.kind.clone(),
        hook: hook.slug.to_string(),
        handler: handler.to_owned(),
        attempt,
        outcome: r.outcome,
        duration_us: r.duration_us,
        fuel_used: r.fuel_used,
        error: r.error,
        output_truncated: r.output.truncated,
        logs: r.output.logs,
        console: r.output.stdout + &r.output.stderr,
    };
    if !r.cancelled {
        trace_delivery(&d);
    }
    (d, r.cancelled)
}

/// The envelope as the WIT record hooks receive.
pub(crate) fn to_wit(e: &Envelope, durability: Durability) -> Result<WitEnvelope, EnvelopeError> {
    let c = &e.coordinates;
    Ok(WitEnvelope {
        schema_version: e.schema_version,
        id: e.id.clone(),
        kind: e.kind.clone(),
        timestamp: e.timestamp.clone(),
        coordinates: WitCoordinates {
            agent: c.agent.clone(),
            session: c.session.clone(),
            turn: c.turn.clone(),
            step: c.step.clone(),
            sequence: c.sequence,
            subagent: c.subagent.clone(),
        },
        attempt: e.attempt,
        idempotency_key: e.idempotency_key.clone(),
        durability: match durability {
            Durability::Accepted => WitDurability::Accepted,
            Durability::Persisted => WitDurability::Persisted,
        },
        data: e.data_text()?,
    })
}

/// Forwards a delivery's log lines to `tracing` (target `hook`) and records failures.
fn trace_delivery(d: &Delivery) {
    for line in &d.logs {
        let fields: String = line.fields.iter().map(|(k, v)| format!(" {k}={v}")).collect();
        let msg = format!("[{} {} {}] {}{fields}", d.hook, d.event_id, d.handler, line.message);
        match line.level {
            "error" => tracing::error!(target: "hook", "{msg}"),
            "warn" => tracing::warn!(target: "hook", "{msg}"),
            "info" => tracing::info!(target: "hook", "{msg}"),
            "debug" => tracing::debug!(target: "hook", "{msg}"),
            _ => tracing::trace!(target: "hook", "{msg}"),
        }
    }
    if d.output_truncated {
        tracing::warn!(target: "hook", "[{} {} {}] output cut at the hook's output_bytes limit", d.hook, d.event_id, d.handler);
    }
    if let Some(err) = &d.error {
        tracing::warn!(hook = %d.hook, event_id = %d.event_id, handler = %d.handler, outcome = %d.outcome, "delivery failed: {err}");
    }
}
