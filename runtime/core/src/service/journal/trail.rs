//! The auditor's trail: a hash chain over what the journal records, kept in
//! the journal itself (table `trail`), written in the same transaction as
//! what it records.
//!
//! Every committed event, every delivery's final attempt (grouped: one
//! `deliveries` entry per event per commit) and every resolution is an
//! entry `{seq, kind, event_seq, body, prev, hash}`: `body` is canonical
//! JSON (sorted keys) of what it records, with the component digest of each
//! hook that ran and the effective settings' digest;
//! `hash = SHA-256("hookrt-trail-v1" 0 prev kind 0 body)`, `prev` the hash of
//! the entry before (32 zero bytes for the first). Entries are appended under
//! the journal's write lock, inside `IMMEDIATE` transactions, so the chain's
//! order is the commit order whichever connection writes.
//!
//! Pruning removes the oldest entries with their events and appends a
//! `pruned` entry naming the range and the hash of its last entry, so the
//! chain stays checkable from its first remaining entry.
//! A `checkpoint` entry signs the chain's head (every N entries and at stop,
//! with a key kept outside the journal: `keys.rs`), promising the next within
//! `every` entries. [`verify`](super::verify::verify) checks it all.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use ed25519_dalek::{Signer, SigningKey};
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::keys::public_hex;
use crate::runtime::Runtime;

/// The hash before the first entry.
pub(crate) const GENESIS: [u8; 32] = [0; 32];

/// The table, created with the journal's schema.
pub(crate) const SCHEMA: &str = "
-- The auditor's trail: a hash chain over events, final deliveries and
-- resolutions (docs/journal.md#the-auditors-trail).
CREATE TABLE IF NOT EXISTS trail (
    seq       INTEGER PRIMARY KEY,       -- position in the chain, from 1
    kind      TEXT NOT NULL,             -- 'event' | 'deliveries' | 'resolution' | 'checkpoint' | 'pruned'
    event_seq INTEGER,                   -- the event it records (events.seq); NULL for checkpoint and pruned
    body      TEXT NOT NULL,             -- canonical JSON of what it records
    prev      BLOB NOT NULL,             -- the previous entry's hash (32 zero bytes for the first)
    hash      BLOB NOT NULL              -- SHA-256('hookrt-trail-v1' 0 prev kind 0 body)
);
";

/// What the entries say about the hooks that run: each hook's component
/// digest, the effective settings' digest, and the key that signs
/// checkpoints (with how often).
#[derive(Clone, Default)]
pub struct TrailContext {
    /// Each hook's id and the sha256 of its component.
    pub components: BTreeMap<String, String>,
    /// The sha256 of every hook's effective settings, in registration order.
    pub settings: String,
    /// Signs a checkpoint every `every` entries and at shutdown.
    pub signer: Option<Arc<SigningKey>>,
    /// Entries between two checkpoints.
    pub every: u64,
    /// Which hook set this is (a new one on a reload), and the last one
    /// the chain has a `hooks` entry of (shared by the connections).
    pub generation: u64,
    pub(crate) announced: Arc<std::sync::atomic::AtomicU64>,
}

impl std::fmt::Debug for TrailContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrailContext")
            .field("components", &self.components)
            .field("settings", &self.settings)
            .field("signs", &self.signer.as_ref().map(|k| public_hex(k)))
            .field("every", &self.every)
            .finish()
    }
}

impl TrailContext {
    /// A context that signs with `key` (every `every` entries) and says
    /// nothing of hooks: for what is written without a hook set (`hookrt
    /// journal prune`'s `pruned` entry), and for signing receipts.
    pub fn signing(key: SigningKey, every: u64) -> TrailContext {
        TrailContext {
            signer: Some(Arc::new(key)),
            every,
            generation: 0,
            ..TrailContext::default()
        }
    }
}

/// The context the service's connections share: replaced whole on a
/// reload, so a transaction takes it without copying it.
pub(crate) type SharedContext = Arc<RwLock<Arc<TrailContext>>>;

/// The shared context now.
pub(crate) fn read(shared: &SharedContext) -> Arc<TrailContext> {
    match shared.read() {
        Ok(c) => c.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

/// Entries between two signed checkpoints by default.
pub const DEFAULT_CHECKPOINT_EVERY: u64 = 1000;

/// The auditor's trail: on by default with a journal.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TrailOptions {
    /// Write the hash chain (every event, final delivery and resolution).
    pub on: bool,
    /// The seed of the Ed25519 key that signs the chain's head every
    /// `checkpoint_every` entries and when the service stops (`hookrt
    /// keygen`); `None` signs nothing.
    pub signing_key: Option<[u8; 32]>,
    /// Entries between two signed checkpoints.
    pub checkpoint_every: u64,
}

impl std::fmt::Debug for TrailOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrailOptions")
            .field("on", &self.on)
            .field("signing_key", &self.signing_key.map(|_| "(secret)"))
            .field("checkpoint_every", &self.checkpoint_every)
            .finish()
    }
}

impl Default for TrailOptions {
    fn default() -> Self {
        TrailOptions {
            on: true,
            signing_key: None,
            checkpoint_every: DEFAULT_CHECKPOINT_EVERY,
        }
    }
}

/// What the trail's entries say of `runtime`'s hooks, with `options`' key.
pub fn trail_context(runtime: &Runtime, options: &TrailOptions) -> TrailContext {
    let mut settings = Sha256::new();
    let mut components = std::collections::BTreeMap::new();
    for h in runtime.hooks() {
        settings.update(h.id().as_bytes());
        settings.update([0]);
        settings.update(h.reviewed.1.as_bytes());
        settings.update([0]);
        components.insert(h.id(), h.component_sha256.clone());
    }
    TrailContext {
        components,
        settings: hex::encode(settings.finalize()),
        signer: options
            .signing_key
            .map(|seed| Arc::new(SigningKey::from_bytes(&seed))),
        every: options.checkpoint_every,
        generation: 1,
        announced: Arc::default(),
    }
}

/// An entry to append.
#[derive(Debug)]
pub(crate) struct Entry {
    pub kind: &'static str,
    pub event_seq: Option<i64>,
    pub body: Value,
}

/// The hash of an entry.
pub fn entry_hash(prev: &[u8], kind: &str, body: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"hookrt-trail-v1\0");
    h.update(prev);
    h.update(kind.as_bytes());
    h.update([0]);
    h.update(body.as_bytes());
    h.finalize().into()
}

/// What a checkpoint's signature covers: the head's position and hash, and
/// (from the second format on) the `every` it promises: the next
/// checkpoint comes within that many entries. A first-format checkpoint
/// (`every` `None`) promised nothing.
pub(crate) fn signed_head(seq: i64, hash: &[u8], every: Option<u64>) -> Vec<u8> {
    let mut m = match every {
        None => b"hookrt-trail-checkpoint-v1\0".to_vec(),
        Some(_) => b"hookrt-trail-checkpoint-v2\0".to_vec(),
    };
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(hash);
    if let Some(every) = every {
        m.extend_from_slice(&every.to_be_bytes());
    }
    m
}

/// The chain's head in `tx`: the last entry's position and hash.
fn head(tx: &Connection) -> rusqlite::Result<(i64, [u8; 32])> {
    let last: Option<(i64, Vec<u8>)> = tx
        .query_row(
            "SELECT seq, hash FROM trail ORDER BY seq DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    Ok(match last {
        Some((seq, hash)) => (seq, hash.try_into().unwrap_or(GENESIS)),
        None => (0, GENESIS),
    })
}

/// Appends `entries` to the chain in `tx`, and a signed checkpoint after
/// every `context.every` entries when it has a signer.
pub(crate) fn append(
    tx: &Transaction,
    context: &TrailContext,
    entries: Vec<Entry>,
) -> rusqlite::Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let mut at = head(tx)?;
    let mut insert = tx.prepare_cached(
        "INSERT INTO trail(seq, kind, event_seq, body, prev, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    // The hook set the entries after it were decided by: every hook's
    // component and the settings' digest, once per set (the writes are
    // serialized by the journal's write lock).
    use std::sync::atomic::Ordering;
    if context.announced.load(Ordering::SeqCst) != context.generation {
        // A tail a stopped (or crashed) process left unsigned is signed
        // first, so the checkpoints stay within the `every` the last one
        // promised whatever this process's `every` is.
        if let Some(key) = &context.signer
            && at.0 > 0
            && last_kind(tx)?.as_deref() != Some("checkpoint")
        {
            let body = checkpoint_body(key, context.every, at.0, &at.1);
            push(&mut insert, &mut at, "checkpoint", None, &body)?;
        }
        let body = json!({
            "components": context.components,
            "settings": context.settings,
            "from_event": from_event(tx)?,
            "at_ms": super::now_ms(),
        });
        push_counted(&mut insert, &mut at, context, "hooks", None, &body)?;
        context
            .announced
            .store(context.generation, Ordering::SeqCst);
    }
    for e in entries {
        push_counted(&mut insert, &mut at, context, e.kind, e.event_seq, &e.body)?;
    }
    Ok(())
}

/// The first event the trail records (the journal's note of it, made when
/// the trail began): said in each `hooks` entry, so the chain signs it.
pub(crate) fn from_event(tx: &Connection) -> rusqlite::Result<i64> {
    Ok(tx
        .query_row(
            "SELECT value FROM meta WHERE key = 'trail_from_event'",
            [],
            |r| r.get::<_, String>(0),
        )
        .optional()?
        .and_then(|v| v.parse().ok())
        .unwrap_or(1))
}

/// The last entry's kind.
pub(crate) fn last_kind(tx: &Connection) -> rusqlite::Result<Option<String>> {
    tx.query_row(
        "SELECT kind FROM trail ORDER BY seq DESC LIMIT 1",
        [],
        |r| r.get(0),
    )
    .optional()
}

/// Inserts one entry after the head `at`, then a signed checkpoint when the
/// head's position is a multiple of `context.every` (and it has a signer):
/// so no more than `every` entries ever come between two checkpoints.
fn push_counted(
    insert: &mut rusqlite::CachedStatement<'_>,
    at: &mut (i64, [u8; 32]),
    context: &TrailContext,
    kind: &str,
    event_seq: Option<i64>,
    body: &Value,
) -> rusqlite::Result<()> {
    push(insert, at, kind, event_seq, body)?;
    if let Some(key) = &context.signer
        && context.every > 0
        && (at.0 as u64).is_multiple_of(context.every)
    {
        let body = checkpoint_body(key, context.every, at.0, &at.1);
        push(insert, at, "checkpoint", None, &body)?;
    }
    Ok(())
}

/// Inserts one entry after the head `at`, which becomes the new head.
fn push(
    insert: &mut rusqlite::CachedStatement<'_>,
    at: &mut (i64, [u8; 32]),
    kind: &str,
    event_seq: Option<i64>,
    body: &Value,
) -> rusqlite::Result<()> {
    let text = body.to_string();
    let hash = entry_hash(&at.1, kind, &text);
    insert.execute(params![
        at.0 + 1,
        kind,
        event_seq,
        text,
        &at.1[..],
        &hash[..]
    ])?;
    *at = (at.0 + 1, hash);
    Ok(())
}

/// A checkpoint of the head at `seq` with hash `hash`, promising the next
/// within `every` entries (public for the verifier's fuzz target, which
/// signs chains of its own).
#[doc(hidden)]
pub fn checkpoint_body(key: &SigningKey, every: u64, seq: i64, hash: &[u8]) -> Value {
    let signature = key.sign(&signed_head(seq, hash, Some(every)));
    json!({
        "v": 2,
        "every": every,
        "head": seq,
        "hash": hex::encode(hash),
        "key": public_hex(key),
        "signature": hex::encode(signature.to_bytes()),
        "at_ms": super::now_ms(),
    })
}

/// Appends a signed checkpoint of the head now, if `context` has a signer
/// and the head is not one already.
pub(crate) fn checkpoint(tx: &Transaction, context: &TrailContext) -> rusqlite::Result<()> {
    let Some(key) = &context.signer else {
        return Ok(());
    };
    let last = last_kind(tx)?;
    if last.is_none() || last.as_deref() == Some("checkpoint") {
        return Ok(());
    }
    let (seq, hash) = head(tx)?;
    let body = checkpoint_body(key, context.every, seq, &hash);
    let text = body.to_string();
    let next = entry_hash(&hash, "checkpoint", &text);
    tx.execute(
        "INSERT INTO trail(seq, kind, event_seq, body, prev, hash) VALUES (?1, 'checkpoint', NULL, ?2, ?3, ?4)",
        params![seq + 1, text, &hash[..], &next[..]],
    )?;
    Ok(())
}

/// Records that the events `events` (their `events.seq`) were pruned:
/// removes the trail's entries from the head of the chain (the oldest, up
/// to the first entry of an event that stays), and appends a `pruned` entry
/// naming the events, and the entries' range with its boundary hash, signed
/// at once by a checkpoint when `context` has a signer (a verifier given
/// the key refuses a `pruned` entry no checkpoint signs right after it).
pub(crate) fn prune(
    tx: &Transaction,
    context: &TrailContext,
    events: &[i64],
) -> rusqlite::Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    // What came before is signed as found, so the `pruned` entry and its
    // checkpoint add no more than two entries to the last gap.
    checkpoint(tx, context)?;
    // The first entry that must stay: one of an event still in the journal.
    let keep_from: Option<i64> = tx.query_row(
        "SELECT min(t.seq) FROM trail t WHERE t.event_seq IS NOT NULL AND EXISTS (SELECT 1 FROM events e WHERE e.seq = t.event_seq)",
        [],
        |r| r.get(0),
    )?;
    let first: Option<i64> = tx.query_row("SELECT min(seq) FROM trail", [], |r| r.get(0))?;
    let mut body = json!({"events": ranges(events)});
    if let (Some(first), Some(keep_from)) = (first, keep_from)
        && keep_from > first
    {
        let to = keep_from - 1;
        let boundary: Vec<u8> =
            tx.query_row("SELECT hash FROM trail WHERE seq = ?1", [to], |r| r.get(0))?;
        tx.execute("DELETE FROM trail WHERE seq <= ?1", [to])?;
        body["from"] = json!(first);
        body["to"] = json!(to);
        body["boundary"] = json!(hex::encode(boundary));
    }
    append(
        tx,
        context,
        vec![Entry {
            kind: "pruned",
            event_seq: None,
            body,
        }],
    )?;
    checkpoint(tx, context)
}

/// `seqs` as sorted `[first, last]` runs.
fn ranges(seqs: &[i64]) -> Vec<[i64; 2]> {
    let mut sorted = seqs.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out: Vec<[i64; 2]> = Vec::new();
    for s in sorted {
        match out.last_mut() {
            Some(run) if run[1] + 1 == s => run[1] = s,
            _ => out.push([s, s]),
        }
    }
    out
}

/// The format of the `event`, `deliveries` and `resolution` entries written
/// now (their body's `v`): the second records the event's `seq` (so the
/// chain covers the `event_seq` column), each planned delivery's handler,
/// and each finished delivery's position and answer's digest. Entries
/// without `v` are of the first format (docs/journal.md says what each
/// covers).
pub(crate) const ENTRY_FORMAT: u64 = 2;

/// The body of an event's entry: what it says (its digest), and the
/// deliveries planned for it (`plan`, in position order).
pub(crate) fn event_body(
    seq: i64,
    id: &str,
    agent: &str,
    kind: &str,
    digest: &[u8],
    plan: &[(String, String)],
) -> Value {
    json!({
        "v": ENTRY_FORMAT,
        "seq": seq,
        "event": id,
        "agent": agent,
        "kind": kind,
        "digest": hex::encode(digest),
        "hooks": plan.iter().map(|(hook, _)| hook).collect::<Vec<_>>(),
        "handlers": plan.iter().map(|(_, handler)| handler).collect::<Vec<_>>(),
        "at_ms": super::now_ms(),
    })
}

/// The sha256 (hex) of an optional text (`null` for none): a delivery's
/// answer as the entries hold it.
pub(crate) fn answer_sha256(answer: Option<&str>) -> Value {
    answer.map_or(Value::Null, |a| Value::String(text_sha256(a)))
}

/// The sha256 (hex) of a text: how entries hold what other tables store.
pub fn text_sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}
