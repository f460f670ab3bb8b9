//! World 0.1.0: observe-only hooks. The host speaks the newest world; a
//! 0.1.0 hook gets the envelope converted down, and its log levels read up.

use super::v0_2_0::{Level, WitDurability, WitEnvelope};

wasmtime::component::bindgen!({
    path: "../../wit/v0.1.0",
    world: "define-hook",
});

/// The newest envelope converted for a 0.1.0 hook.
pub(crate) fn envelope_down(e: &WitEnvelope) -> hookrt::hook::types::Envelope {
    use hookrt::hook::types as t;
    let c = &e.coordinates;
    t::Envelope {
        schema_version: e.schema_version,
        id: e.id.clone(),
        kind: e.kind.clone(),
        timestamp: e.timestamp.clone(),
        coordinates: t::Coordinates {
            agent: c.agent.clone(),
            session: c.session.clone(),
            turn: c.turn.clone(),
            step: c.step.clone(),
            sequence: c.sequence,
            subagent: c.subagent.clone(),
        },
        attempt: e.attempt,
        idempotency_key: e.idempotency_key.clone(),
        durability: match e.durability {
            WitDurability::Accepted => t::Durability::Accepted,
            WitDurability::Persisted => t::Durability::Persisted,
        },
        data: e.data.clone(),
    }
}

/// A 0.1.0 log level as the newest one.
pub(crate) fn level_up(l: hookrt::hook::log::Level) -> Level {
    use hookrt::hook::log::Level as L;
    match l {
        L::Trace => Level::Trace,
        L::Debug => Level::Debug,
        L::Info => Level::Info,
        L::Warn => Level::Warn,
        L::Error => Level::Error,
    }
}
