//! Layer 4, delivery: one event through its planned hooks. The delivery
//! record, merging decisions, the decision workers, validated edits with rollback, the failure
//! cascade, and dispatch itself.

pub(crate) mod cascade;
pub(crate) mod decision;
pub(crate) mod decision_workers;
pub(crate) mod dispatch;
pub(crate) mod edit;
pub(crate) mod record;
