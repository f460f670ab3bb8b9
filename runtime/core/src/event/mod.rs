//! Layer 1, events: the vocabulary of kinds, the versioned envelope, scopes
//! and the answer types. Plain data: no Wasmtime, no I/O.

pub(crate) mod answer;
pub(crate) mod clock;
pub(crate) mod data;
pub(crate) mod envelope;
pub(crate) mod eve;
pub(crate) mod hashing;
pub(crate) mod kind;
pub(crate) mod ordinal;
pub(crate) mod recent;
pub(crate) mod scope;
pub(crate) mod transcript;

// The vocabulary and the envelope's parts beyond what the crate root
// re-exports (`Envelope`, `Coordinates`, `Durability`, `EventClass`, ...).
pub use answer::{Answer, CallAnswer, Gate, Permission, Reply};
pub use clock::now_rfc3339;
pub use data::Data;
pub use envelope::{MAX_ATTEMPT, MAX_DATA_BYTES, MAX_ID_LEN, SCHEMA_VERSION, idempotency_key};
pub use eve::{EveError, EveStream, StreamPlace};
pub use kind::{
    CONTEXT_KINDS, CUSTOM_PREFIX, EventKind, GateRule, KINDS, OBSERVE_PREFIX, Origin,
    PERMISSION_REQUESTED, REWRITABLE, REWRITE_PREFIX, TURN_STOPPING, WILDCARD, gate_rule,
    handled_kind, is_known, is_subscribable, observed_kind, rewritten_kind, subscription_problem,
    takes_context, unknown_kind_message,
};
pub use ordinal::{MAX_OPEN_STEPS, Ordinals};
pub use recent::Recent;
pub use transcript::Transcript;
