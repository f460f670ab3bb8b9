//! World 0.1.0: observe-only hooks. The host speaks the newest world; a
//! 0.1.0 hook gets the envelope converted down, and its log levels read up.

use super::v0_3_0::{Level, WitDurability, WitEnvelope};

wasmtime::component::bindgen!({
    path: "../../wit/v0.1.0",
    world: "define-hook",
    ownership: Borrowing { duplicate_if_necessary: false },
});

/// The newest envelope converted for a 0.1.0 hook (the same references).
pub(crate) fn envelope_down<'a>(e: &WitEnvelope<'a>) -> hookrt::hook::types::Envelope<'a> {
    use hookrt::hook::types as t;
    let c = &e.coordinates;
    t::Envelope {
        schema_version: e.schema_version,
        id: e.id,
        kind: e.kind,
        timestamp: e.timestamp,
        coordinates: t::Coordinates {
            agent: c.agent,
            session: c.session,
            turn: c.turn,
            step: c.step,
            sequence: c.sequence,
            subagent: c.subagent,
        },
        attempt: e.attempt,
        idempotency_key: e.idempotency_key,
        durability: match e.durability {
            WitDurability::Accepted => t::Durability::Accepted,
            WitDurability::Persisted => t::Durability::Persisted,
        },
        data: e.data,
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
