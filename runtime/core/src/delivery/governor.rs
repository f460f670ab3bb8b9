//! The loop governor: at most `max_continues` continues of `turn.stopping`
//! in a row per agent, session and scope (`[governor]` in `hookrt.toml`,
//! default [`DEFAULT_MAX_CONTINUES`](crate::hooks::folder::config::DEFAULT_MAX_CONTINUES)).
//!
//! Hooks on `turn.stopping` may keep a turn going (`continue`). A hook that
//! always does would keep the agent working, and spending, forever: users of
//! every agent report such loops. So hookrt counts the continues it gives in
//! a row for each agent, session and scope; once `max_continues` were given,
//! the next is refused: the verdict is `pass`, marked `capped`, the turn
//! stops, and the count starts again. A stop that is not continued resets
//! the count, and so does an event whose data says `continued: false` (the
//! agent's own flag that this stop does not follow a hook's continue, as
//! Claude Code's `stop_hook_active`), so a count left by a lost process
//! cannot cap a later turn.
//!
//! The count lives in the runtime's state store under a name no hook can
//! have (slugs hold no `:`), in the journal database when there is one: so
//! `hookrt claude-hook`, a process per event, counts across processes.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::delivery::decision::GateDecision;
use crate::event::answer::Gate;
use crate::event::envelope::Envelope;
use crate::sandbox::state::StateStore;

/// The state store's name for the governor's counts.
const NAMESPACE: &str = "hookrt:governor";

/// What the governor needs of one `turn.stopping` event.
#[derive(Debug, Clone)]
pub(crate) struct Stop {
    /// The count's key: a digest of agent, session and scope.
    key: String,
    /// The agent says whether this stop follows a hook's continue.
    continued: Option<bool>,
    max: u32,
}

impl Stop {
    /// The stop `e` announces, governed at `max` continues in a row.
    pub(crate) fn of(e: &Envelope, max: u32) -> Stop {
        let c = &e.coordinates;
        let mut h = Sha256::new();
        for part in [&c.agent, &c.session, c.subagent.as_deref().unwrap_or("")] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        Stop {
            key: hex::encode(&h.finalize()[..16]),
            continued: e.data.get("continued").and_then(Value::as_bool),
            max,
        }
    }

    /// Applies the governor to `decision`, counting in `state`.
    pub(crate) fn govern(&self, state: &std::sync::Arc<StateStore>, decision: &mut GateDecision) {
        let access = state.access(NAMESPACE);
        let before = match self.continued {
            Some(false) => 0,
            _ => access
                .get(&self.key)
                .and_then(|v| <[u8; 4]>::try_from(v.as_slice()).ok())
                .map_or(0, u32::from_le_bytes),
        };
        let after = match decision.verdict {
            Gate::Continue(_) if before >= self.max => {
                decision.verdict = Gate::Pass;
                decision.capped = true;
                0
            }
            Gate::Continue(_) => before + 1,
            _ => 0,
        };
        if after == 0 {
            access.delete(&self.key);
        } else if let Err(e) = access.set(&self.key, &after.to_le_bytes()) {
            // Not counted: the next continue is judged from the old count.
            tracing::warn!("loop governor: cannot keep the count of continues: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delivery::decision::Vote;
    use crate::delivery::decision::merge_gates;

    fn stop(continued: Option<bool>) -> Envelope {
        let mut data = serde_json::json!({});
        if let Some(c) = continued {
            data["continued"] = c.into();
        }
        Envelope::new(
            "e1",
            "turn.stopping",
            crate::event::envelope::Coordinates::new("a", "s", 0),
            data,
        )
        .unwrap()
    }

    fn answered(gate: Gate) -> GateDecision {
        merge_gates(
            vec![Vote {
                hook: "looper".into(),
                answer: gate,
                failure: None,
            }],
            Vec::new(),
        )
    }

    #[test]
    fn the_governor_caps_continues_in_a_row_and_starts_again() {
        let state = StateStore::in_memory();
        let verdicts: Vec<(Gate, bool)> = (0..7)
            .map(|_| {
                let mut d = answered(Gate::Continue("again".into()));
                Stop::of(&stop(None), 3).govern(&state, &mut d);
                (d.verdict, d.capped)
            })
            .collect();
        let go = (Gate::Continue("again".into()), false);
        let capped = (Gate::Pass, true);
        assert_eq!(
            verdicts,
            [
                go.clone(),
                go.clone(),
                go.clone(),
                capped.clone(),
                go.clone(),
                go.clone(),
                go
            ]
        );
    }

    #[test]
    fn a_stop_that_is_not_continued_or_says_so_resets_the_count() {
        let state = StateStore::in_memory();
        let gov = |e: &Envelope, g: Gate| {
            let mut d = answered(g);
            Stop::of(e, 2).govern(&state, &mut d);
            d.capped
        };
        assert!(!gov(&stop(None), Gate::Continue("1".into())));
        assert!(!gov(&stop(None), Gate::Continue("2".into())));
        assert!(!gov(&stop(None), Gate::Pass), "a plain stop");
        assert!(!gov(&stop(None), Gate::Continue("1".into())));
        assert!(!gov(&stop(None), Gate::Continue("2".into())));
        // The agent says this stop follows no continue: counted from 0.
        assert!(!gov(&stop(Some(false)), Gate::Continue("1".into())));
        assert!(!gov(&stop(Some(true)), Gate::Continue("2".into())));
        assert!(gov(&stop(Some(true)), Gate::Continue("3".into())));
    }

    #[test]
    fn each_session_and_scope_counts_alone() {
        let state = StateStore::in_memory();
        let mut other = stop(None);
        other.coordinates.session = "t".into();
        let mut sub = stop(None);
        sub.coordinates.subagent = Some("reviewer".into());
        for e in [stop(None), other.clone(), sub.clone()] {
            let mut d = answered(Gate::Continue("x".into()));
            Stop::of(&e, 1).govern(&state, &mut d);
            assert!(!d.capped, "{:?}", e.coordinates);
        }
        let mut d = answered(Gate::Continue("x".into()));
        Stop::of(&sub, 1).govern(&state, &mut d);
        assert!(d.capped);
    }
}
