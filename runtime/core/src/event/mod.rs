//! Layer 1, events: the vocabulary of kinds, the versioned envelope, scopes
//! and the answer types. Plain data: no Wasmtime, no I/O.

pub(crate) mod answer;
pub(crate) mod claude;
pub(crate) mod data;
pub(crate) mod envelope;
pub(crate) mod eve;
pub(crate) mod kind;
pub(crate) mod ordinal;
pub(crate) mod scope;
