//! The session's transcript as an agent's bridge named it: the file the
//! agent's input points at and the folder where that agent keeps its
//! transcripts (a property of the agent, from its `Protocol`). It travels
//! beside an envelope, never inside its JSON: an event read from text (JSONL,
//! `/v1/events`, the journal, JetStream) has none, so no event can name a
//! file for the `transcript` grant to read.

use std::path::PathBuf;
use std::sync::Arc;

/// The transcript an agent named for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    /// The path the agent's input named, as it named it.
    pub path: PathBuf,
    /// The folder the agent keeps transcripts in, for this user: a read is
    /// refused unless `path` resolves inside it.
    pub root: PathBuf,
}

/// A [`Transcript`] carried beside an envelope: never serialized, and never
/// part of an envelope's equality (two readings of one event are equal).
#[derive(Debug, Clone, Default)]
pub(crate) struct Beside(pub(crate) Option<Arc<Transcript>>);

impl PartialEq for Beside {
    fn eq(&self, _: &Beside) -> bool {
        true
    }
}

impl Eq for Beside {}
