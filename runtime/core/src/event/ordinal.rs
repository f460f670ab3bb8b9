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
use crate::event::recent::Recent;

/// Counters kept at most: past this many open steps (a producer that never
/// ends its steps), the step untouched the longest is forgotten, bounding
/// memory; every other step keeps counting. Keys of events counted after
/// their step was forgotten may repeat earlier ones.
pub(crate) const MAX_OPEN_STEPS: usize = 65_536;

/// Where an event is counted: agent, scope, session, turn, step. The agent is
/// part of it, so one agent's events never move another's ordinals.
type Place = (
    String,
    Option<String>,
    String,
    Option<String>,
    Option<String>,
);

/// Assigns ordinals to a stream of envelopes, in stream order.
#[derive(Debug)]
pub struct Ordinals {
    counts: Recent<Place, HashMap<String, u32>>,
}

impl Default for Ordinals {
    fn default() -> Ordinals {
        Ordinals {
            counts: Recent::new(MAX_OPEN_STEPS),
        }
    }
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
            c.agent.clone(),
            c.subagent.clone(),
            c.session.clone(),
            c.turn.clone(),
            c.step.clone(),
        );
        let kind = envelope.kind.as_str();
        if kind == "step.started" {
            self.counts.remove(&place);
        }
        if envelope.coordinates.ordinal.is_none() {
            let n = self
                .counts
                .get_or_insert_with(&place, HashMap::new)
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
                let (agent, scope, session, turn) = (place.0, place.1, place.2, place.3);
                self.counts
                    .retain(|p| !(p.0 == agent && p.1 == scope && p.2 == session && p.3 == turn));
            }
            // A session's end: nothing of it is counted any more (else every
            // ended session would leave its session-level counts behind).
            "session.completed" | "session.failed" => {
                let (agent, scope, session) = (place.0, place.1, place.2);
                self.counts
                    .retain(|p| !(p.0 == agent && p.1 == scope && p.2 == session));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::envelope::Coordinates;

    fn event(agent: &str, step: &str, n: u64) -> Envelope {
        Envelope::new(
            format!("{agent}-{step}-{n}"),
            "message.received",
            Coordinates::new(agent, "s", n).in_turn("t").in_step(step),
            serde_json::json!({"message": {"id": "m", "role": "user", "content": "hi"}}),
        )
        .unwrap()
    }

    fn ordinal(o: &mut Ordinals, mut e: Envelope) -> u32 {
        o.assign(&mut e);
        e.coordinates.ordinal.unwrap()
    }

    #[test]
    fn agents_count_apart_and_a_flood_of_steps_never_resets_a_busy_one() {
        let mut o = Ordinals::new();
        assert_eq!(ordinal(&mut o, event("a", "st", 0)), 0);
        assert_eq!(
            ordinal(&mut o, event("b", "st", 0)),
            0,
            "another agent's step of the same name"
        );
        assert_eq!(ordinal(&mut o, event("a", "st", 1)), 1);
        // Agent b opens more steps than are kept; agent a keeps sending.
        for i in 0..(MAX_OPEN_STEPS as u64 + 10_000) {
            ordinal(&mut o, event("b", &format!("flood-{i}"), i));
            if i % 1000 == 0 {
                ordinal(&mut o, event("a", "st", i));
            }
        }
        assert!(o.open() <= MAX_OPEN_STEPS);
        let next = ordinal(&mut o, event("a", "st", 0));
        assert_eq!(
            next,
            2 + (MAX_OPEN_STEPS as u32 + 10_000).div_ceil(1000),
            "a kept counting"
        );
    }
}
