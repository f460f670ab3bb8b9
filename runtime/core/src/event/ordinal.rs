//! Ordinals: each event's place among the events of its kind in its step,
//! the stable coordinate its idempotency key is derived from.
//!
//! An agent that retries a step re-emits its events under new ids and new
//! stream positions; counting per (scope, session, turn, step, kind) and
//! starting again at each `step.started` gives the retried events the same
//! ordinals, hence the same keys. Events outside a step count per turn (or
//! per session outside a turn).

use std::collections::HashMap;

use crate::event::envelope::Envelope;

/// Counters kept at most: past this many open steps (a producer that never
/// ends its steps), every count starts again, bounding memory. Keys of
/// events counted after such a reset may repeat earlier ones.
pub const MAX_OPEN_STEPS: usize = 65_536;

/// Where an event is counted: scope, session, turn, step.
type Place = (Option<String>, String, Option<String>, Option<String>);

/// Assigns ordinals to a stream of envelopes, in stream order.
#[derive(Debug, Default)]
pub struct Ordinals {
    counts: HashMap<Place, HashMap<String, u32>>,
}

impl Ordinals {
    /// A tracker with nothing counted.
    pub fn new() -> Ordinals {
        Ordinals::default()
    }

    /// How many places (scope, session, turn, step) have counts now: what an
    /// endless stream of sessions that end keeps at zero.
    pub fn open(&self) -> usize {
        self.counts.len()
    }

    /// Sets `envelope`'s ordinal unless it has one. A `step.started` starts
    /// its step's counts again (a retry); a step's, turn's or session's end drops them.
    pub fn assign(&mut self, envelope: &mut Envelope) {
        let c = &envelope.coordinates;
        let place: Place = (
            c.subagent.clone(),
            c.session.clone(),
            c.turn.clone(),
            c.step.clone(),
        );
        let kind = envelope.kind.as_str();
        if kind == "step.started" {
            self.counts.remove(&place);
        }
        if self.counts.len() >= MAX_OPEN_STEPS && !self.counts.contains_key(&place) {
            self.counts.clear();
        }
        if envelope.coordinates.ordinal.is_none() {
            let n = self
                .counts
                .entry(place.clone())
                .or_default()
                .entry(kind.to_owned())
                .or_insert(0);
            envelope.coordinates.ordinal = Some(*n);
            *n = n.saturating_add(1);
        }
        match kind {
            // A step's last event: its counts are done (a retry starts with
            // step.started, which starts them again anyway).
            "step.completed" | "step.failed" => {
                self.counts.remove(&place);
            }
            "turn.completed" | "turn.failed" | "turn.cancelled" => {
                let (scope, session, turn) = (place.0, place.1, place.2);
                self.counts
                    .retain(|p, _| !(p.0 == scope && p.1 == session && p.2 == turn));
            }
            // A session's end: nothing of it is counted any more (else every
            // ended session would leave its session-level counts behind).
            "session.completed" | "session.failed" => {
                let (scope, session) = (place.0, place.1);
                self.counts.retain(|p, _| !(p.0 == scope && p.1 == session));
            }
            _ => {}
        }
    }
}
