//! What checking the trail takes and gives: what it is held to (the key an
//! auditor trusts, an anchor taken earlier), what it found when it holds,
//! and the first place it breaks when it does not.

use ed25519_dalek::VerifyingKey;
use serde_json::Value;

/// What [`verify`](super::verify::verify) holds the trail to.
#[derive(Debug, Clone, Copy, Default)]
pub struct Expect<'a> {
    /// The public key every checkpoint must be signed with. With it the
    /// trail must be signed (see the module's doc); without it only the
    /// chain's own consistency is checked, which anyone who can write the
    /// file can forge.
    pub key: Option<&'a VerifyingKey>,
    /// With a key: accept entries after the last checkpoint (a service that
    /// is running, or one that crashed), naming them; never more of them
    /// than the last checkpoint's `every`.
    pub allow_unsigned_tail: bool,
    /// An entry the trail must still hold with this hash (an anchor kept
    /// outside the journal).
    pub head: Option<&'a Anchor>,
}

/// A position and hash of the chain kept outside the journal (`hookrt
/// journal head` prints it as `SEQ:HASH`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    /// The entry's position.
    pub seq: i64,
    /// Its hash (hex).
    pub hash: String,
}

impl std::fmt::Display for Anchor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.seq, self.hash)
    }
}

impl std::str::FromStr for Anchor {
    type Err = AnchorError;

    fn from_str(text: &str) -> Result<Anchor, AnchorError> {
        let bad = || AnchorError(text.to_owned());
        let (seq, hash) = text.trim().split_once(':').ok_or_else(bad)?;
        let seq: i64 = seq.parse().map_err(|_| bad())?;
        let hash = hash.to_ascii_lowercase();
        if seq < 1 || hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        Ok(Anchor { seq, hash })
    }
}

/// An anchor that is not `SEQ:HASH`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a trail anchor: SEQ:HASH, an entry's position and its 64 hex digits (`hookrt journal head J` prints one)"
)]
pub struct AnchorError(String);

/// One entry as stored (or exported): its body is the exact text hashed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Row {
    /// Position in the chain.
    pub seq: i64,
    /// `hooks`, `event`, `deliveries`, `resolution`, `checkpoint` or `pruned`.
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

/// A `pruned` entry as its body says.
pub(crate) struct Pruned {
    /// The entries removed, and the hash of the last one (legacy entries
    /// and prunes that removed events only have none).
    pub(crate) range: Option<(i64, i64, String)>,
    /// The events removed (`events.seq` ranges).
    pub(crate) events: Vec<(i64, i64)>,
}

impl Pruned {
    fn read(body: &Value) -> Pruned {
        let range = match (body["from"].as_i64(), body["to"].as_i64()) {
            (Some(from), Some(to)) => {
                Some((from, to, body["boundary"].as_str().unwrap_or("").to_owned()))
            }
            _ => None,
        };
        let events = body["events"]
            .as_array()
            .map(|ranges| {
                ranges
                    .iter()
                    .filter_map(|r| Some((r[0].as_i64()?, r[1].as_i64()?)))
                    .collect()
            })
            .unwrap_or_default();
        Pruned { range, events }
    }

    /// What the (chained, so checked) `pruned` entries' bodies say.
    pub(crate) fn all<'a>(bodies: impl Iterator<Item = &'a String>) -> Vec<Pruned> {
        bodies
            .filter_map(|b| serde_json::from_str::<Value>(b).ok())
            .map(|b| Pruned::read(&b))
            .collect()
    }

    pub(crate) fn names_event(all: &[Pruned], seq: i64) -> bool {
        all.iter()
            .flat_map(|p| &p.events)
            .any(|(lo, hi)| (*lo..=*hi).contains(&seq))
    }
}

/// What [`verify`](super::verify::verify) found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Entries checked.
    pub entries: u64,
    /// The first entry's position.
    pub first: i64,
    /// The last entry's position.
    pub last: i64,
    /// The head's hash (hex).
    pub head: String,
    /// Checkpoints whose signature verified.
    pub checkpoints: u64,
    /// The keys (hex) that signed checkpoints.
    pub keys: Vec<String>,
    /// Ranges pruned, as `pruned` entries recorded them.
    pub pruned: Vec<(i64, i64)>,
    /// Events in the journal, each with its entry.
    pub events: u64,
    /// Entries after the last checkpoint (or every entry, when there is
    /// none): signed by nobody yet.
    pub unsigned_tail: Option<(i64, i64)>,
    /// Whether a key was given, so the signatures were checked against it.
    pub key_checked: bool,
    /// The anchor found in the chain.
    pub anchored: Option<i64>,
    /// Entries of the first format (written before hookrt recorded each
    /// delivery's position and answer): their `deliveries` rows are not
    /// compared, and their `event_seq` is bound by the event's id only.
    pub first_format: u64,
}

/// Where the trail does not fit, and why: the first break [`verify`](super::verify::verify) meets.
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
    /// A key was given, and no checkpoint is signed by it.
    #[error(
        "no entry is a signed checkpoint: the whole trail ({entries} entries) could have been written by anyone (a journal written with --signing-key has one every --checkpoint-every entries and at every stop; its checkpoints were removed)"
    )]
    Unsigned {
        /// Entries in the trail.
        entries: u64,
    },
    /// Two checkpoints further apart than the earlier one promised.
    #[error(
        "checkpoint {seq} comes {gap} entries after checkpoint {after}, which signed that the next comes within {every}: checkpoints between them were removed"
    )]
    Sparse {
        /// The later checkpoint.
        seq: i64,
        /// The earlier one.
        after: i64,
        /// Entries between them.
        gap: i64,
        /// What the earlier one signed.
        every: u64,
    },
    /// A `pruned` entry no checkpoint signs.
    #[error(
        "entry {seq} says entries and events were pruned, and no checkpoint right after it signs that: it was written by someone without the key (`hookrt journal prune` signs with --signing-key)"
    )]
    UnsignedPrune {
        /// The `pruned` entry.
        seq: i64,
    },
    /// The entries after the last checkpoint are signed by nobody.
    #[error(
        "entries {from} to {to} come after the last signed checkpoint: nobody signed them{why}"
    )]
    UnsignedTail {
        /// The first unsigned entry.
        from: i64,
        /// The head.
        to: i64,
        /// Why even `--allow-unsigned-tail` refuses it, or that it would not.
        why: String,
    },
    /// The chain no longer holds the anchor.
    #[error("the anchor {anchor} does not hold: {why}")]
    Anchor {
        /// The anchor given.
        anchor: String,
        /// What the chain holds instead.
        why: String,
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
        /// What differs (`kind`, `digest`, `envelope`, `resolution`).
        what: &'static str,
    },
    /// An entry's event row holds another event: `event_seq` values were
    /// swapped or edited.
    #[error(
        "entry {seq} records event `{event}` as event {event_seq}, and the journal's event {event_seq} is `{found}`: event_seq values were swapped or edited"
    )]
    Moved {
        /// The entry.
        seq: i64,
        /// The event's id, as the entry recorded it.
        event: String,
        /// The `event_seq` the entry is stored with.
        event_seq: i64,
        /// The id the journal holds there.
        found: String,
    },
    /// An entry of the second format stored with another `event_seq` than
    /// its body records (the body is hashed, the column is not).
    #[error(
        "entry {seq} records event {recorded}, and is stored with event_seq {column}: its event_seq was edited"
    )]
    EventSeq {
        /// The entry.
        seq: i64,
        /// What its `event_seq` column says (`NULL`: none).
        column: String,
        /// What its body records.
        recorded: i64,
    },
    /// A `deliveries` row differs from what the trail recorded of it.
    #[error(
        "entry {seq} records delivery {position} of event `{event}`, and the journal's deliveries row (event_seq {event_seq}, position {position}) {why}"
    )]
    Delivery {
        /// The entry that planned or last recorded the delivery.
        seq: i64,
        /// The event's id.
        event: String,
        /// The event's seq.
        event_seq: i64,
        /// The delivery's position.
        position: i64,
        /// How the row differs.
        why: String,
    },
    /// A row the trail recorded is gone, and no pruning says so.
    #[error(
        "entry {seq} records event `{event}`, whose {what} row is gone from the journal and no `pruned` entry names it: it was deleted"
    )]
    Gone {
        /// The entry.
        seq: i64,
        /// The event's id.
        event: String,
        /// What is gone (`event`, `resolution`).
        what: &'static str,
    },
    /// A decision in the journal the trail never recorded.
    #[error(
        "event {seq} (`{id}`) has a decision in the journal that no entry of the trail records: it was added or replaced"
    )]
    Unrecorded {
        /// The event's seq.
        seq: i64,
        /// The event's id.
        id: String,
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
