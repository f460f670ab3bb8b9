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
//! `pruned` entry naming the range and the hash of its last entry (the
//! boundary), so the chain stays checkable from its first remaining entry. A
//! `checkpoint` entry carries an Ed25519 signature of the chain's head (the
//! service signs every N entries and when it stops, with a key kept outside
//! the journal). [`verify`] checks it all and names the first entry that
//! does not fit.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, RwLock};

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::runtime::Runtime;

/// The hash before the first entry.
pub const GENESIS: [u8; 32] = [0; 32];

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

/// What a checkpoint's signature covers: the head's position and hash.
fn signed_head(seq: i64, hash: &[u8]) -> Vec<u8> {
    let mut m = b"hookrt-trail-checkpoint-v1\0".to_vec();
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(hash);
    m
}

/// A verifying key's hex.
pub fn public_hex(key: &SigningKey) -> String {
    hex::encode(key.verifying_key().as_bytes())
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
        let body = json!({
            "components": context.components,
            "settings": context.settings,
            "at_ms": super::now_ms(),
        });
        push(&mut insert, &mut at, "hooks", None, &body)?;
        context
            .announced
            .store(context.generation, Ordering::SeqCst);
    }
    for e in entries {
        push(&mut insert, &mut at, e.kind, e.event_seq, &e.body)?;
        if let Some(key) = &context.signer
            && context.every > 0
            && (at.0 as u64).is_multiple_of(context.every)
        {
            let body = checkpoint_body(key, at.0, &at.1);
            push(&mut insert, &mut at, "checkpoint", None, &body)?;
        }
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

/// A checkpoint of the head at `seq` with hash `hash`.
fn checkpoint_body(key: &SigningKey, seq: i64, hash: &[u8]) -> Value {
    let signature = key.sign(&signed_head(seq, hash));
    json!({
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
    let last_kind: Option<String> = tx
        .query_row(
            "SELECT kind FROM trail ORDER BY seq DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if last_kind.is_none() || last_kind.as_deref() == Some("checkpoint") {
        return Ok(());
    }
    let (seq, hash) = head(tx)?;
    let body = checkpoint_body(key, seq, &hash);
    let text = body.to_string();
    let next = entry_hash(&hash, "checkpoint", &text);
    tx.execute(
        "INSERT INTO trail(seq, kind, event_seq, body, prev, hash) VALUES (?1, 'checkpoint', NULL, ?2, ?3, ?4)",
        params![seq + 1, text, &hash[..], &next[..]],
    )?;
    Ok(())
}

/// Removes the trail's entries of the events in `pruned` from the head of
/// the chain (the oldest, up to the first entry of an event that stays),
/// and appends a `pruned` entry with the range and its boundary hash.
pub(crate) fn prune(tx: &Transaction, context: &TrailContext) -> rusqlite::Result<()> {
    // The first entry that must stay: one of an event still in the journal.
    let keep_from: Option<i64> = tx.query_row(
        "SELECT min(t.seq) FROM trail t WHERE t.event_seq IS NOT NULL AND EXISTS (SELECT 1 FROM events e WHERE e.seq = t.event_seq)",
        [],
        |r| r.get(0),
    )?;
    let first: Option<i64> = tx.query_row("SELECT min(seq) FROM trail", [], |r| r.get(0))?;
    let (Some(first), Some(keep_from)) = (first, keep_from) else {
        return Ok(());
    };
    if keep_from <= first {
        return Ok(());
    }
    let to = keep_from - 1;
    let boundary: Vec<u8> =
        tx.query_row("SELECT hash FROM trail WHERE seq = ?1", [to], |r| r.get(0))?;
    tx.execute("DELETE FROM trail WHERE seq <= ?1", [to])?;
    append(
        tx,
        context,
        vec![Entry {
            kind: "pruned",
            event_seq: None,
            body: json!({"from": first, "to": to, "boundary": hex::encode(boundary)}),
        }],
    )
}

/// The body of an event's entry.
pub(crate) fn event_body(
    id: &str,
    agent: &str,
    kind: &str,
    digest: &[u8],
    hooks: &[&str],
) -> Value {
    json!({
        "event": id,
        "agent": agent,
        "kind": kind,
        "digest": hex::encode(digest),
        "hooks": hooks,
        "at_ms": super::now_ms(),
    })
}

/// What [`verify`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Entries checked.
    pub entries: u64,
    /// The first and last entry's position.
    pub first: i64,
    /// The last entry's position.
    pub last: i64,
    /// The head's hash (hex).
    pub head: String,
    /// Checkpoints whose signature verified, and the keys that signed them.
    pub checkpoints: u64,
    /// The keys (hex) that signed checkpoints.
    pub keys: Vec<String>,
    /// Ranges pruned, as `pruned` entries recorded them.
    pub pruned: Vec<(i64, i64)>,
    /// Events in the journal, each with its entry.
    pub events: u64,
}

/// Where the trail does not fit, and why: the first break [`verify`] meets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Break {
    /// The journal has no trail table.
    #[error("the journal has no trail (written by a hookrt before the trail)")]
    NoTrail,
    /// An entry's hash is not what it says.
    #[error("entry {seq} was edited: its hash does not match its contents")]
    Edited {
        /// The entry.
        seq: i64,
    },
    /// Entries are missing between two that remain.
    #[error(
        "entries {from} to {to} are missing: deleted (a pruned range leaves a `pruned` entry, and none names these)"
    )]
    Deleted {
        /// The first missing entry.
        from: i64,
        /// The last missing entry.
        to: i64,
    },
    /// An entry does not follow the one before it.
    #[error("entry {seq} does not follow entry {after}: entries were reordered or replaced")]
    Reordered {
        /// The entry.
        seq: i64,
        /// The entry before it.
        after: i64,
    },
    /// The first remaining entry does not follow the pruned range's boundary.
    #[error(
        "entry {seq} does not follow the pruned range {from} to {to}: the range's boundary hash was changed"
    )]
    Boundary {
        /// The first entry after the range.
        seq: i64,
        /// The range.
        from: i64,
        /// The range's end.
        to: i64,
    },
    /// A checkpoint's signature does not verify.
    #[error("entry {seq} is a checkpoint whose signature does not verify (key {key})")]
    Signature {
        /// The checkpoint entry.
        seq: i64,
        /// The key it names.
        key: String,
    },
    /// A checkpoint signs a head the chain does not have.
    #[error("entry {seq} is a checkpoint of entry {head}, whose hash differs")]
    CheckpointHead {
        /// The checkpoint entry.
        seq: i64,
        /// The head it signs.
        head: i64,
    },
    /// A checkpoint was signed by another key than the one given.
    #[error("entry {seq} is a checkpoint signed by {found}, not by the key given ({want})")]
    WrongKey {
        /// The checkpoint entry.
        seq: i64,
        /// The key it names.
        found: String,
        /// The key expected.
        want: String,
    },
    /// The journal holds an event the trail has no entry for.
    #[error(
        "the trail ends at entry {last}, but event {seq} (`{id}`) has no entry: the trail was truncated, or the entry deleted"
    )]
    Truncated {
        /// The last entry.
        last: i64,
        /// The event's seq.
        seq: i64,
        /// The event's id.
        id: String,
    },
    /// What the journal's tables hold differs from what the trail recorded.
    #[error("entry {seq} records event `{event}`, whose {what} in the journal was changed since")]
    Record {
        /// The entry.
        seq: i64,
        /// The event's id.
        event: String,
        /// What differs (`envelope`, `resolution`).
        what: &'static str,
    },
    /// An entry's body is not JSON.
    #[error("entry {seq} is not readable: {why}")]
    Unreadable {
        /// The entry.
        seq: i64,
        /// Why.
        why: String,
    },
    /// The journal cannot be read.
    #[error("{0}")]
    Sqlite(String),
}

impl From<rusqlite::Error> for Break {
    fn from(e: rusqlite::Error) -> Break {
        Break::Sqlite(e.to_string())
    }
}

/// One entry as stored (or exported): its body is the exact text hashed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Row {
    /// Position in the chain.
    pub seq: i64,
    /// `event`, `delivery`, `resolution`, `checkpoint` or `pruned`.
    pub kind: String,
    /// The event it records (`events.seq`).
    pub event_seq: Option<i64>,
    /// The canonical JSON text of what it records.
    pub body: String,
    /// The previous entry's hash (hex).
    pub prev: String,
    /// This entry's hash (hex).
    pub hash: String,
}

/// Every entry of the trail of `conn`, in order.
fn rows(conn: &Connection) -> Result<Vec<Row>, Break> {
    let has: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'trail'",
        [],
        |r| r.get(0),
    )?;
    if has == 0 {
        return Err(Break::NoTrail);
    }
    let rows = conn
        .prepare("SELECT seq, kind, event_seq, body, prev, hash FROM trail ORDER BY seq")?
        .query_map([], |r| {
            Ok(Row {
                seq: r.get(0)?,
                kind: r.get(1)?,
                event_seq: r.get(2)?,
                body: r.get(3)?,
                prev: hex::encode(r.get::<_, Vec<u8>>(4)?),
                hash: hex::encode(r.get::<_, Vec<u8>>(5)?),
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The entries of `path`'s trail from the first one at or after `since_ms`
/// (every entry without it), for `hookrt journal export`: a segment of the
/// chain [`verify_segment`] checks on its own.
pub fn export(path: &Path, since_ms: Option<i64>) -> Result<Vec<Row>, Break> {
    let conn = open_read_only(path)?;
    let all = rows(&conn)?;
    let Some(since) = since_ms else {
        return Ok(all);
    };
    let start = all.iter().position(|r| {
        serde_json::from_str::<Value>(&r.body)
            .ok()
            .and_then(|b| b["at_ms"].as_i64())
            .is_some_and(|at| at >= since)
    });
    Ok(start.map_or_else(Vec::new, |i| all[i..].to_vec()))
}

fn open_read_only(path: &Path) -> Result<Connection, Break> {
    Ok(Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?)
}

/// Where a run of entries starts: the chain's beginning, after a pruned
/// range, or (an export) wherever its first entry says.
enum Start<'a> {
    Journal(&'a [(i64, i64, String)]),
    Segment,
}

/// Checks `rows` as one run of the chain: each entry's hash, each link,
/// each checkpoint's signature (by `key` when given).
fn check(rows: &[Row], key: Option<&VerifyingKey>, start: Start<'_>) -> Result<Verified, Break> {
    let mut found = Verified {
        entries: 0,
        first: 0,
        last: 0,
        head: hex::encode(GENESIS),
        checkpoints: 0,
        keys: Vec::new(),
        pruned: Vec::new(),
        events: 0,
    };
    // Every entry says what it is: its own hash first.
    for r in rows {
        let prev = hex::decode(&r.prev).unwrap_or_default();
        if hex::encode(entry_hash(&prev, &r.kind, &r.body)) != r.hash {
            return Err(Break::Edited { seq: r.seq });
        }
    }
    let mut expected: Option<(i64, &str)> = None;
    for r in rows {
        let body: Value = serde_json::from_str(&r.body).map_err(|e| Break::Unreadable {
            seq: r.seq,
            why: e.to_string(),
        })?;
        match (&expected, &start) {
            (None, Start::Segment) => {}
            (None, Start::Journal(_)) if r.seq == 1 => {
                if r.prev != hex::encode(GENESIS) {
                    return Err(Break::Reordered { seq: 1, after: 0 });
                }
            }
            (None, Start::Journal(pruned)) => {
                // The chain starts after a pruned range: its boundary.
                let Some((from, to, boundary)) =
                    pruned.iter().rev().find(|(_, to, _)| *to == r.seq - 1)
                else {
                    return Err(Break::Deleted {
                        from: 1,
                        to: r.seq - 1,
                    });
                };
                if r.prev != *boundary {
                    return Err(Break::Boundary {
                        seq: r.seq,
                        from: *from,
                        to: *to,
                    });
                }
            }
            (Some((last, last_hash)), _) => {
                if r.seq != last + 1 {
                    return Err(Break::Deleted {
                        from: last + 1,
                        to: r.seq - 1,
                    });
                }
                if r.prev != *last_hash {
                    return Err(Break::Reordered {
                        seq: r.seq,
                        after: *last,
                    });
                }
            }
        }
        if r.kind == "checkpoint" {
            let head = body["head"].as_i64().unwrap_or(-1);
            let named = body["key"].as_str().unwrap_or("").to_owned();
            let head_hash = body["hash"].as_str().unwrap_or("");
            // The head it signs is the entry just before it.
            if head != r.seq - 1 || head_hash != r.prev {
                return Err(Break::CheckpointHead { seq: r.seq, head });
            }
            if let Some(want) = key {
                let want = hex::encode(want.as_bytes());
                if want != named {
                    return Err(Break::WrongKey {
                        seq: r.seq,
                        found: named,
                        want,
                    });
                }
            }
            let signed = (|| {
                let key =
                    VerifyingKey::from_bytes(&hex::decode(&named).ok()?.try_into().ok()?).ok()?;
                let signature =
                    Signature::from_slice(&hex::decode(body["signature"].as_str()?).ok()?).ok()?;
                let hash = hex::decode(head_hash).ok()?;
                key.verify(&signed_head(head, &hash), &signature).ok()
            })();
            if signed.is_none() {
                return Err(Break::Signature {
                    seq: r.seq,
                    key: named,
                });
            }
            found.checkpoints += 1;
            if !found.keys.contains(&named) {
                found.keys.push(named);
            }
        }
        if found.entries == 0 {
            found.first = r.seq;
        }
        found.entries += 1;
        found.last = r.seq;
        found.head = r.hash.clone();
        expected = Some((r.seq, &r.hash));
    }
    Ok(found)
}

/// Checks an exported run of entries (`hookrt journal export`) on its own:
/// each entry's hash, each link from its first entry on, each checkpoint's
/// signature (by `key` when given).
pub fn verify_segment(rows: &[Row], key: Option<&VerifyingKey>) -> Result<Verified, Break> {
    check(rows, key, Start::Segment)
}

/// Checks the trail of the journal at `path` (opened read-only): every
/// entry's hash, every link, every pruned range's boundary, every
/// checkpoint's signature (by `key` when given), and that every event of
/// the journal has its entry. The first entry that does not fit is the
/// error.
pub fn verify(path: &Path, key: Option<&VerifyingKey>) -> Result<Verified, Break> {
    let conn = open_read_only(path)?;
    let rows = rows(&conn)?;
    // The pruned ranges, as the (chained, so checked) `pruned` entries say.
    let pruned: Vec<(i64, i64, String)> = rows
        .iter()
        .filter(|r| r.kind == "pruned")
        .filter_map(|r| serde_json::from_str::<Value>(&r.body).ok())
        .map(|b| {
            (
                b["from"].as_i64().unwrap_or(0),
                b["to"].as_i64().unwrap_or(0),
                b["boundary"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let mut found = check(&rows, key, Start::Journal(&pruned))?;
    found.pruned = pruned.iter().map(|(f, t, _)| (*f, *t)).collect();
    // Every event the journal holds since the trail began has its entry.
    let from: i64 = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'trail_from_event'",
            [],
            |r| r.get::<_, String>(0),
        )
        .optional()?
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let recorded: std::collections::HashSet<i64> = rows
        .iter()
        .filter(|r| r.kind == "event")
        .filter_map(|r| r.event_seq)
        .collect();
    let mut events = conn.prepare("SELECT seq, id FROM events WHERE seq >= ?1 ORDER BY seq")?;
    let mut held = events.query([from])?;
    while let Some(row) = held.next()? {
        let seq: i64 = row.get(0)?;
        if !recorded.contains(&seq) {
            return Err(Break::Truncated {
                last: found.last,
                seq,
                id: row.get(1)?,
            });
        }
        found.events += 1;
    }
    // What the other tables hold is what the trail recorded: each event's
    // envelope (its digest, computed again) and each decision.
    let mut envelope = conn.prepare("SELECT envelope FROM events WHERE seq = ?1")?;
    let mut decided = conn.prepare("SELECT resolution FROM resolutions WHERE event_seq = ?1")?;
    for r in &rows {
        let Some(event_seq) = r
            .event_seq
            .filter(|_| r.kind == "event" || r.kind == "resolution")
        else {
            continue;
        };
        let body: Value = serde_json::from_str(&r.body).unwrap_or_default();
        let changed = |what| Break::Record {
            seq: r.seq,
            event: body["event"].as_str().unwrap_or_default().to_owned(),
            what,
        };
        if r.kind == "event" {
            let text: Option<String> = envelope.query_row([event_seq], |x| x.get(0)).optional()?;
            if let Some(text) = text {
                let digest = serde_json::from_str::<crate::event::envelope::Envelope>(&text)
                    .map(|e| hex::encode(e.digest()))
                    .unwrap_or_default();
                if body["digest"] != digest.as_str() {
                    return Err(changed("envelope"));
                }
            }
        } else {
            let text: Option<String> = decided.query_row([event_seq], |x| x.get(0)).optional()?;
            if let Some(text) = text
                && body["resolution_sha256"] != text_sha256(&text).as_str()
            {
                return Err(changed("resolution"));
            }
        }
    }
    Ok(found)
}

/// A new signing key, from the system's randomness.
pub fn generate_key() -> std::io::Result<SigningKey> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(std::io::Error::other)?;
    Ok(SigningKey::from_bytes(&seed))
}

/// Reads a signing key file (64 hex digits of its seed).
pub fn read_signing_key(path: &Path) -> Result<SigningKey, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the signing key {}: {e}", path.display()))?;
    let seed: [u8; 32] = hex::decode(text.trim())
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| {
            format!(
                "{} is not a hookrt signing key (64 hex digits; `hookrt keygen` makes one)",
                path.display()
            )
        })?;
    Ok(SigningKey::from_bytes(&seed))
}

/// Reads a verifying (public) key file (64 hex digits).
pub fn read_verifying_key(path: &Path) -> Result<VerifyingKey, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the public key {}: {e}", path.display()))?;
    hex::decode(text.trim())
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .and_then(|b| VerifyingKey::from_bytes(&b).ok())
        .ok_or_else(|| {
            format!(
                "{} is not a hookrt public key (64 hex digits; `hookrt keygen` writes one beside the signing key)",
                path.display()
            )
        })
}

/// The sha256 (hex) of a text: how entries hold what other tables store.
pub fn text_sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// A signed receipt of one decision, for the caller to keep: the event (id,
/// agent, digest), what was decided (the sha256 of its JSON as the journal
/// stores it, `resolution`), the
/// components and settings that decided it, when, and an Ed25519 signature
/// of all of it by `context`'s key. `None` without a key. An auditor checks
/// it offline with the public key ([`check_receipt`]), and against a
/// journal's trail ([`receipt_in_journal`]).
pub fn sign_receipt(
    context: &TrailContext,
    event_id: &str,
    agent: &str,
    event_digest: &[u8],
    resolution: &str,
) -> Option<Value> {
    let key = context.signer.as_ref()?;
    let mut receipt = json!({
        "v": 1,
        "event": event_id,
        "agent": agent,
        "event_digest": hex::encode(event_digest),
        "resolution_sha256": text_sha256(resolution),
        "components": context.components,
        "settings": context.settings,
        "at_ms": super::now_ms(),
        "key": public_hex(key),
    });
    let signature = key.sign(receipt_message(&receipt).as_bytes());
    receipt["signature"] = json!(hex::encode(signature.to_bytes()));
    Some(receipt)
}

/// What a receipt's signature covers: its canonical JSON without the
/// signature.
fn receipt_message(receipt: &Value) -> String {
    let mut unsigned = receipt.clone();
    if let Some(o) = unsigned.as_object_mut() {
        o.remove("signature");
    }
    format!("hookrt-receipt-v1\0{unsigned}")
}

/// Checks a receipt's signature, by `key` when given (else by the key it
/// names, which says only that it was not changed since it was signed).
pub fn check_receipt(receipt: &Value, key: Option<&VerifyingKey>) -> Result<String, String> {
    let named = receipt["key"]
        .as_str()
        .ok_or("the receipt names no key")?
        .to_owned();
    if let Some(want) = key
        && hex::encode(want.as_bytes()) != named
    {
        return Err(format!(
            "the receipt is signed by {named}, not by the key given ({})",
            hex::encode(want.as_bytes())
        ));
    }
    let verifying = hex::decode(&named)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .and_then(|b| VerifyingKey::from_bytes(&b).ok())
        .ok_or("the receipt's key is not an Ed25519 public key")?;
    let signature = receipt["signature"]
        .as_str()
        .and_then(|s| hex::decode(s).ok())
        .and_then(|b| Signature::from_slice(&b).ok())
        .ok_or("the receipt has no readable signature")?;
    verifying
        .verify(receipt_message(receipt).as_bytes(), &signature)
        .map_err(|_| {
            "the receipt's signature does not verify: it was changed after it was signed".to_owned()
        })?;
    Ok(named)
}

/// The trail entry of the journal at `path` that records what `receipt`
/// says was decided (its position), or why there is none.
pub fn receipt_in_journal(path: &Path, receipt: &Value) -> Result<i64, String> {
    let conn = open_read_only(path).map_err(|e| e.to_string())?;
    let rows = rows(&conn).map_err(|e| e.to_string())?;
    let event = receipt["event"].as_str().unwrap_or_default();
    let agent = receipt["agent"].as_str().unwrap_or_default();
    let want = receipt["resolution_sha256"].as_str().unwrap_or_default();
    let mut seen = false;
    for r in rows.iter().filter(|r| r.kind == "resolution") {
        let Ok(body) = serde_json::from_str::<Value>(&r.body) else {
            continue;
        };
        if body["event"] != event || body["agent"] != agent {
            continue;
        }
        seen = true;
        if body["resolution_sha256"] == want {
            return Ok(r.seq);
        }
    }
    Err(if seen {
        format!("the journal's trail records another decision for event `{event}` than the receipt")
    } else {
        format!("the journal's trail has no decision of event `{event}` (agent `{agent}`)")
    })
}
