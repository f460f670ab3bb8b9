//! The failure cascade: what a critical hook's final failure turns into.
//!
//! ```text
//!  any event of a turn ──critical failure──▶ turn.failed (once per turn)
//!  event without a turn ──critical failure──▶ session.failed (once per session)
//!  turn.failed ─────────critical failure──▶ session.failed (once per session)
//!  session.failed ──────any failure───────▶ recorded only: never cascades again
//! ```
//! Optional hooks never cascade: their failures are recorded (dead letters,
//! diagnostics, counters) only. "Once" is enforced by deterministic event ids:
//! the journal (or, without one, the dispatcher's memory) refuses a second
//! event with the same id.

use sha2::{Digest, Sha256};

use crate::event::clock::now_rfc3339;
use crate::event::envelope::{Coordinates, Envelope, idempotency_key};
use crate::event::hashing::hash_parts;
use crate::sandbox::outcome::Outcome;

/// Kind emitted when a critical hook fails on an event of a turn.
pub(crate) const TURN_FAILED: &str = "turn.failed";
/// Kind emitted when a critical hook fails on `turn.failed` or outside a turn.
pub(crate) const SESSION_FAILED: &str = "session.failed";

/// The final failure of one delivery, without any event data.
#[derive(Debug, Clone)]
pub struct Failure<'a> {
    /// The failing hook.
    pub hook: &'a str,
    /// The event it failed on.
    pub event: &'a Envelope,
    /// How it ended.
    pub outcome: Outcome,
    /// The redacted message.
    pub message: &'a str,
}

/// The event a critical hook's final failure causes, if any.
pub fn cascade_event(f: &Failure<'_>) -> Option<Envelope> {
    let c = &f.event.coordinates;
    let (kind, turn) = match (f.event.kind.as_str(), &c.turn) {
        (SESSION_FAILED, _) => return None,
        (TURN_FAILED, _) | (_, None) => (SESSION_FAILED, None),
        (_, Some(turn)) => (TURN_FAILED, Some(turn.clone())),
    };
    let coordinates = Coordinates {
        agent: c.agent.clone(),
        session: c.session.clone(),
        turn,
        step: None,
        sequence: c.sequence,
        ordinal: None,
        subagent: c.subagent.clone(),
    };
    let data = serde_json::json!({
        "reason": format!("critical hook `{}` failed ({})", f.hook, f.outcome),
        "hook": f.hook,
        "event_id": f.event.id,
        "outcome": f.outcome.as_str(),
        "message": f.message,
    });
    let id = cascade_id(kind, &coordinates);
    let key = idempotency_key(kind, &coordinates);
    let mut envelope = Envelope::draft(id, kind.to_owned(), now_rfc3339(), coordinates, data);
    envelope.idempotency_key = key;
    Some(envelope)
}

/// The id of the one cascade event of `kind` for a turn (or session): the
/// same however many critical hooks fail, and across restarts.
fn cascade_id(kind: &str, c: &Coordinates) -> String {
    let mut h = Sha256::new();
    hash_parts(
        &mut h,
        &[
            Some(c.agent.as_str()),
            c.subagent.as_deref(),
            Some(c.session.as_str()),
            c.turn.as_deref(),
        ],
    );
    format!("hookrt-{kind}-{}", &hex::encode(h.finalize())[..24])
}

/// A cascade event as `hookrt run` and `hookrt serve` print it on its own
/// stdout line: `{"cascade": {event_id, kind, session, turn, subagent, reason}}`
/// (docs/failure-cascade.md).
pub fn cascade_line(e: &Envelope) -> serde_json::Value {
    serde_json::json!({"cascade": {
        "event_id": e.id,
        "kind": e.kind,
        "session": e.coordinates.session,
        "turn": e.coordinates.turn,
        "subagent": e.coordinates.subagent,
        "reason": e.data.get("reason"),
    }})
}
