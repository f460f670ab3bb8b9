//! World 0.3.0 (the newest): 0.2.0 and the answers agents' hooks give —
//! rewrites, context, gates, permission requests. The runtime works in
//! these types.

wasmtime::component::bindgen!({
    path: "../../wit/v0.3.0",
    world: "define-hook",
    // What `handle` takes (envelope, context) is lent: records of references
    // into what the runtime holds, so a delivery copies no text on the host.
    ownership: Borrowing { duplicate_if_necessary: false },
});

pub(crate) use crate::sandbox::wit::v0_3_0::hookrt::hook::log::{Field, Level};
pub(crate) use crate::sandbox::wit::v0_3_0::hookrt::hook::types::{
    Approval as WitApproval, CallAnswer as WitCallAnswer, Context as WitContext,
    Coordinates as WitCoordinates, Durability as WitDurability, Envelope as WitEnvelope,
    EventClass as WitEventClass, FileEdit as WitFileEdit, Gate as WitGate,
    Permission as WitPermission, Reply as WitReply, Response as WitResponse, Scope as WitScope,
    Transport as WitTransport,
};
