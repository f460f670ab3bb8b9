//! World 0.2.0 (the newest): configuration, per-hook state, metrics, HTTP,
//! decisions and edits. The runtime works in these types.

wasmtime::component::bindgen!({
    path: "../../wit/v0.2.0",
    world: "define-hook",
    // What `handle` takes (envelope, context) is lent: records of references
    // into what the runtime holds, so a delivery copies no text on the host.
    ownership: Borrowing { duplicate_if_necessary: false },
});

pub(crate) use hookrt::hook::log::{Field, Level};
pub(crate) use hookrt::hook::types::{
    Approval as WitApproval, Context as WitContext, Coordinates as WitCoordinates,
    Durability as WitDurability, Envelope as WitEnvelope, EventClass as WitEventClass,
    FileEdit as WitFileEdit, Response as WitResponse, Scope as WitScope, Transport as WitTransport,
};
