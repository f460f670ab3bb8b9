//! Layer 4, delivery: one event through its planned hooks. The delivery
//! record, merging decisions and the votes they count, an event's run,
//! validated edits with rollback, the failure cascade, one attempt,
//! retries and the final attempt, and the one event loop
//! ([`dispatch`](crate::delivery::dispatch)) with the [`Sink`] every caller
//! plugs in.
//!
//! Public here, beyond the records the crate root re-exports: the failure
//! cascade's events, the decision workers, the one delivery policy
//! ([`next`]: run it again? [`conclude`]: what a final failure leaves), and
//! the loop's [`Sink`], [`End`] and [`Retries`], so a fleet worker that
//! delivers through JetStream runs the loop the service runs and only
//! records what it decided.

pub(crate) mod cascade;
pub(crate) mod context;
pub(crate) mod decision;
pub(crate) mod deliver;
pub(crate) mod dispatch;
pub(crate) mod edit;
pub(crate) mod governor;
pub(crate) mod record;
pub(crate) mod retry;
pub(crate) mod rewrite;
pub(crate) mod run;
pub(crate) mod sink;
pub(crate) mod threads;
pub(crate) mod vote;

pub use cascade::{Failure, cascade_event, cascade_line};
pub use decision::Vote;
pub use edit::EditAccount;
pub use retry::{Conclusion, Next, Retries, conclude, next};
pub use sink::{End, Sink};
pub use threads::Threads;
