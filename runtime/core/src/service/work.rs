//! Work: what travels between the service's threads (commands to the
//! writer, stored events to the dispatcher), the queue bounds that make
//! backpressure, and the small helpers every thread shares.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use sha2::{Digest, Sha256};
use tokio::sync::oneshot;

use crate::delivery::record::Resolution;
use crate::event::envelope::{Envelope, EnvelopeError};
use crate::event::hashing::hash_parts;
use crate::runtime::Runtime;
use crate::service::journal::{Answered, PendingDelivery};
use crate::service::report::{Receipt, Reloaded};

/// Most events committed in one transaction.
pub const MAX_BATCH: usize = 256;
/// Batches (of up to [`MAX_BATCH`] events) waiting for the dispatcher at
/// most; when they are full, the writer waits and receipts slow down: the
/// backpressure that keeps memory flat however fast events come.
pub const DISPATCH_QUEUE: usize = 4;
/// Events waiting for the writer at most. `emit` and `resolve` wait for room
/// (async backpressure); `submit` blocks its thread for room, or, called from
/// inside an async runtime where it must not block, refuses the event as
/// [`EmitError::Overloaded`]. Without this bound a caller that never awaits
/// its receipts could grow the queue without end.
pub const SUBMIT_QUEUE: usize = 1024;
/// Events the service holds in memory at most, however fast they come: the
/// [`SUBMIT_QUEUE`], the batch in the writer's hands, the [`DISPATCH_QUEUE`],
/// and the dispatcher's ack batch (it merges queued batches while it holds
/// fewer than [`MAX_BATCH`] events, so up to two batches less one event).
pub const HELD_AT_MOST: usize = SUBMIT_QUEUE + (DISPATCH_QUEUE + 3) * MAX_BATCH;
/// Event ids remembered for deduplication without a journal (per agent, with
/// each event's digest): re-submissions within this window are no-ops (or
/// refused, [`EmitError::Conflict`], when they say something else); memory stays bounded however long the process runs.
pub const MEMORY_DEDUP_WINDOW: usize = 100_000;

/// Why an event was not taken.
#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    /// The envelope is invalid.
    #[error("event refused: {0}")]
    Invalid(#[from] EnvelopeError),
    /// [`SUBMIT_QUEUE`] events already wait for the writer, and `submit` was
    /// called where it must not block; the event was not stored.
    #[error(
        "event `{0}` was not queued: {SUBMIT_QUEUE} events already wait to be stored; await their receipts (or use `emit`, which waits for room) before submitting more"
    )]
    Overloaded(String),
    /// The service is shutting down (or has stopped); the event was not stored.
    #[error("hookrt is shutting down: event `{0}` was not stored; send it again after restart")]
    ShuttingDown(String),
    /// The agent's event id was taken before by an event that says
    /// something else (its [`Envelope::digest`] differs): refused, so one
    /// caller can never be answered with what another's event decided.
    #[error(
        "event `{id}` of agent `{agent}` was taken before by an event that says something else (another kind, time, place or data); its stored decision is not given for this one"
    )]
    Conflict {
        /// The event id.
        id: String,
        /// The agent.
        agent: String,
    },
    /// The journal failed; the event was not stored.
    #[error("event `{id}` was not stored: {message}")]
    Journal {
        /// The event id.
        id: String,
        /// What the journal said.
        message: String,
    },
}

/// Why a reload did not swap the hooks.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The service is shutting down (or has stopped): the hooks it runs stay.
    #[error("hookrt is shutting down: the new hooks were not swapped in")]
    ShuttingDown,
}

pub(crate) type ReceiptTx = oneshot::Sender<Result<Receipt, EmitError>>;
pub(crate) type ResolutionTx = oneshot::Sender<Option<Resolution>>;

/// What a finished decision or edit event leaves for the batch's commit:
/// its resolution as the journal keeps it (seq, JSON), and whoever waits
/// for it, told only once that commit is done, so no answer is given that
/// the journal could lose ([`crate::service::acker`]).
pub(crate) struct Decided {
    pub(crate) kept: Option<(i64, String)>,
    pub(crate) tell: Option<(ResolutionTx, Option<Resolution>)>,
}

impl Decided {
    /// Tells whoever waits (the journal has it, or could not take it).
    pub(crate) fn tell(self) {
        if let Some((tx, resolution)) = self.tell {
            let _ = tx.send(resolution);
        }
    }
}
pub(crate) type ResolvingRx = (
    oneshot::Receiver<Result<Receipt, EmitError>>,
    oneshot::Receiver<Option<Resolution>>,
);

pub(crate) type ReloadTx = oneshot::Sender<Reloaded>;

/// What `emit`, `flush` and `reload` send the writer.
#[allow(
    clippy::large_enum_variant,
    reason = "nearly every command is an emit: boxing its envelope would cost an allocation per event"
)]
pub(crate) enum Command {
    Emit(Envelope, ReceiptTx, Option<ResolutionTx>),
    Flush(oneshot::Sender<()>),
    /// Swap in these hooks for every event taken after this command.
    Reload(Box<Runtime>, ReloadTx),
}

/// What the writer hands the dispatcher.
pub(crate) enum Msg {
    /// Newly stored events, in journal order.
    Work(Vec<Work>),
    /// Answer once everything before it is delivered.
    Flush(oneshot::Sender<()>),
    /// A re-submitted decision or edit event (journal seq): answer with what
    /// it decided, once everything before it is delivered.
    Lookup(i64, ResolutionTx),
    /// Swap in these hooks once everything before it is delivered (the
    /// events after it were planned for them).
    Reload(Box<Runtime>, ReloadTx),
}

/// One event ready to deliver.
pub(crate) struct Work {
    pub(crate) seq: i64,
    pub(crate) envelope: Envelope,
    pub(crate) deliveries: Vec<PendingDelivery>,
    /// Who waits for what a decision or edit event decides.
    pub(crate) resolve: Option<oneshot::Sender<Option<Resolution>>>,
    /// Answers of its deliveries acked before a restart, in plan order.
    pub(crate) answered: Vec<Answered>,
}

/// Locks `m`, going on past a poisoned lock (a panicking observer must not
/// stop delivery).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How a re-submitted id compares with what was taken under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sighting {
    /// Not seen (within the window): taken now.
    New,
    /// Seen for the same event (same digest).
    Same,
    /// Seen for an event that says something else.
    Other,
}

/// Event ids seen recently (without a journal), per agent, with each
/// event's digest. An entry is 32 bytes (16 of a hash of agent and id, 16 of
/// the event's digest) however long the id, so the window's memory is fixed:
/// at 128 bits a collision is out of any caller's reach.
#[derive(Default)]
pub(crate) struct Seen(HashMap<[u8; 16], [u8; 16]>, VecDeque<[u8; 16]>);

impl Seen {
    /// Remembers `agent`'s `id` with its event's `digest`, or says how it
    /// compares with the event first taken under it.
    pub(crate) fn insert(&mut self, agent: &str, id: &str, digest: [u8; 32]) -> Sighting {
        let key = short(&{
            let mut h = Sha256::new();
            hash_parts(&mut h, &[Some(agent), Some(id)]);
            h.finalize().into()
        });
        let digest = short(&digest);
        if let Some(first) = self.0.get(&key) {
            return if *first == digest {
                Sighting::Same
            } else {
                Sighting::Other
            };
        }
        self.0.insert(key, digest);
        self.1.push_back(key);
        if self.1.len() > MEMORY_DEDUP_WINDOW
            && let Some(old) = self.1.pop_front()
        {
            self.0.remove(&old);
        }
        Sighting::New
    }
}

/// The first 16 bytes of a SHA-256.
fn short(hash: &[u8; 32]) -> [u8; 16] {
    let mut out = [0; 16];
    out.copy_from_slice(&hash[..16]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seen_refuses_an_id_again_within_the_window_and_forgets_the_oldest_past_it() {
        let mut seen = Seen::default();
        let d = [1; 32];
        assert_eq!(seen.insert("a", "first", d), Sighting::New);
        assert_eq!(
            seen.insert("a", "first", d),
            Sighting::Same,
            "a second time within the window"
        );
        assert_eq!(
            seen.insert("a", "first", [2; 32]),
            Sighting::Other,
            "another event under the id"
        );
        assert_eq!(
            seen.insert("b", "first", [2; 32]),
            Sighting::New,
            "another agent's id"
        );
        for i in 2..MEMORY_DEDUP_WINDOW {
            assert_eq!(seen.insert("a", &format!("e{i}"), d), Sighting::New);
        }
        assert_eq!(
            seen.insert("a", "first", d),
            Sighting::Same,
            "still within the window"
        );
        assert_eq!(seen.insert("a", "one more", d), Sighting::New);
        assert_eq!(
            seen.insert("a", "first", d),
            Sighting::New,
            "pushed out by the newest id"
        );
        assert_eq!(seen.0.len(), MEMORY_DEDUP_WINDOW);
        assert_eq!(seen.1.len(), MEMORY_DEDUP_WINDOW);
    }
}
