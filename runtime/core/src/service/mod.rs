//! Layer 6, the service: the runtime in the background. The journal, the
//! report and work types, lanes, the event loop's journal-backed sink, the
//! acker, the dispatcher and writer threads, and the public `HookService`.

pub(crate) mod acker;
pub(crate) mod api;
pub(crate) mod dispatcher;
pub(crate) mod journal;
pub(crate) mod lanes;
pub(crate) mod owner;
pub(crate) mod report;
pub(crate) mod sink;
pub(crate) mod work;
pub(crate) mod writer;

// The queue bounds that make backpressure (docs/embedding.md).
pub use work::{DISPATCH_QUEUE, HELD_AT_MOST, MAX_BATCH, MEMORY_DEDUP_WINDOW, SUBMIT_QUEUE};
