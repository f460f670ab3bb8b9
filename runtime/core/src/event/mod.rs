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
pub(crate) use eve::StreamPlace;
pub use eve::{EveError, EveStream};
pub use kind::{
    EventKind, GateRule, KINDS, Origin, REWRITABLE, TURN_STOPPING, WILDCARD, gate_rule,
    handled_kind, is_known, is_subscribable, observed_kind, rewritten_kind, subscription_problem,
    takes_context,
};
pub use ordinal::Ordinals;
pub use recent::Recent;
pub use transcript::Transcript;
