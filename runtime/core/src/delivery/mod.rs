//! Layer 4, delivery: one event through its planned hooks. The delivery
//! record, merging decisions, the decision workers, validated edits with
//! rollback, the failure cascade, retries and the final attempt, and
//! dispatch itself.
//!
//! Public here, beyond the records the crate root re-exports: the failure
//! cascade's events, the decision workers, and the one delivery policy
//! every way in applies, so a fleet worker that delivers through JetStream
//! decides retries, dead letters and the cascade exactly as the service
//! does: [`next`] (run it again?) and [`conclude`] (what a final failure
//! leaves).

pub(crate) mod cascade;
pub(crate) mod decision;
pub(crate) mod dispatch;
pub(crate) mod edit;
pub(crate) mod governor;
pub(crate) mod record;
pub(crate) mod retry;
pub(crate) mod threads;

pub use cascade::{Failure, SESSION_FAILED, TURN_FAILED, cascade_event, cascade_line};
pub use decision::Vote;
pub use edit::EditAccount;
pub use retry::{Conclusion, Next, conclude, next};
pub use threads::Threads;
