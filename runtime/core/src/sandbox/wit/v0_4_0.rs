//! World 0.4.0 (the newest): 0.3.0's types and answers, and the grants for
//! what real hooks do (`exec`, `read`, `transcript`, `secret`, `notify`,
//! `write`). The runtime works in these types; each grant's host functions
//! live in its own module under `sandbox/grant/`.

wasmtime::component::bindgen!({
    path: "../../wit/v0.4.0",
    world: "define-hook",
    // What `handle` takes (envelope, context) is lent: records of references
    // into what the runtime holds, so a delivery copies no text on the host.
    ownership: Borrowing { duplicate_if_necessary: false },
});

pub(crate) use crate::sandbox::wit::v0_4_0::hookrt::hook::log::{Field, Level};
pub(crate) use crate::sandbox::wit::v0_4_0::hookrt::hook::types::{
    Context as WitContext, Coordinates as WitCoordinates, Durability as WitDurability,
    Envelope as WitEnvelope, EventClass as WitEventClass, Scope as WitScope,
    Transport as WitTransport,
};
