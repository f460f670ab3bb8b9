//! The event envelope (v1): one versioned record for every event.
//!
//! Agent servers send envelopes as JSON (one per line in JSONL files). The
//! runtime fills in what it owns: the delivery `attempt`, the derived
//! `idempotency_key` and the `durability` word it can actually prove.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::clock::{is_rfc3339, now_rfc3339};
use super::hashing::{HashWriter, hash_parts};

use crate::event::data::Data;
use crate::event::kind;
use crate::event::transcript::{Beside, Transcript};

/// The only envelope layout this runtime reads and writes.
pub const SCHEMA_VERSION: u32 = 1;
/// Longest event id accepted; ids are journal keys.
pub const MAX_ID_LEN: usize = 256;
/// Largest `data` accepted, in bytes of JSON text; blocks one event from
/// exhausting hook memory budgets or the journal.
pub const MAX_DATA_BYTES: usize = 1 << 20;

/// How durably the runtime held an event when a hook received it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Durability {
    /// Held in memory only: a crash before delivery loses it.
    #[default]
    Accepted,
    /// Committed to the journal before any hook saw it.
    Persisted,
}

impl Durability {
    /// The word as written in envelopes and receipts.
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Accepted => "accepted",
            Durability::Persisted => "persisted",
        }
    }
}

/// Where in the agent's life an event happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Coordinates {
    /// The emitting agent.
    pub agent: String,
    /// The session.
    pub session: String,
    /// The turn, when the event belongs to one.
    #[serde(default)]
    pub turn: Option<String>,
    /// The step, when the event belongs to one.
    #[serde(default)]
    pub step: Option<String>,
    /// Position in the session's event stream.
    pub sequence: u64,
    /// The event's ordinal among the events of its kind in its step (or
    /// turn, or session, outside one): 0 for the first. Stable when the agent
    /// retries a step, unlike `sequence`, so the idempotency key is derived
    /// from it when present. `hookrt run` and the bridges fill it in
    /// ([`crate::event::Ordinals`]); without it the key falls back to `sequence`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordinal: Option<u32>,
    /// The subagent scope; `None` for the primary agent.
    #[serde(default)]
    pub subagent: Option<String>,
}

/// One event, as delivered to hooks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Stable event id (the dedup key).
    pub id: String,
    /// Event kind from the vocabulary.
    pub kind: String,
    /// RFC 3339 timestamp.
    pub timestamp: String,
    /// Where the event happened.
    pub coordinates: Coordinates,
    /// Delivery attempt, 1 on first delivery.
    #[serde(default = "first_attempt")]
    pub attempt: u32,
    /// Derived from the coordinates and kind; see [`idempotency_key`].
    #[serde(default)]
    pub idempotency_key: String,
    /// Set by the runtime; any value an input carries is replaced.
    #[serde(default)]
    pub durability: Durability,
    /// The kind's data: a JSON object, with its JSON text (an input's own
    /// text is passed through to hooks unchanged).
    pub data: Data,
    /// What validation checked and derived the key from (see [`Validated`]).
    #[serde(skip)]
    validated: Validated,
    /// The transcript the agent's bridge named, beside the event (never
    /// read from or written to its JSON).
    #[serde(skip)]
    transcript: Beside,
}

/// What [`Envelope::validate`] checked as text and derived the idempotency
/// key from: the id, kind, timestamp and coordinates, and the key itself.
/// While the envelope still says exactly this, a delivery neither checks
/// those texts again nor re-derives the key (SHA-256); once code changed
/// any of them, it does both. Compared byte for byte (no hash, so nothing
/// can collide). Never part of an envelope's equality.
#[derive(Debug, Clone, Default)]
struct Validated(Option<Box<[u8]>>);

impl PartialEq for Validated {
    fn eq(&self, _: &Validated) -> bool {
        true
    }
}

impl Eq for Validated {}

impl Validated {
    /// Feeds what is recorded (id, timestamp, then the key's inputs and the
    /// key) to `out`, each length-prefixed and tagged (so absent differs
    /// from empty and no two input lists give the same bytes).
    // Inlined, so that each small part compares in place (no call per part).
    #[inline(always)]
    fn inputs(e: &Envelope, mut out: impl FnMut(&[u8])) {
        let c = &e.coordinates;
        for part in [
            Some(e.id.as_str()),
            Some(e.timestamp.as_str()),
            Some(e.kind.as_str()),
            Some(c.agent.as_str()),
            c.subagent.as_deref(),
            Some(c.session.as_str()),
            c.turn.as_deref(),
            c.step.as_deref(),
            Some(e.idempotency_key.as_str()),
        ] {
            match part {
                None => out(&[0]),
                Some(p) => {
                    out(&[1]);
                    out(&(p.len() as u64).to_le_bytes());
                    out(p.as_bytes());
                }
            }
        }
        out(&c.sequence.to_le_bytes());
        match c.ordinal {
            None => out(&[0]),
            Some(o) => {
                out(&[1]);
                out(&o.to_le_bytes());
            }
        }
    }

    fn record(e: &Envelope) -> Validated {
        let mut bytes = Vec::with_capacity(
            80 + e.id.len() + e.timestamp.len() + e.kind.len() + e.idempotency_key.len(),
        );
        Validated::inputs(e, |b| bytes.extend_from_slice(b));
        Validated(Some(bytes.into()))
    }

    /// Whether `e` still says what was recorded.
    fn holds(&self, e: &Envelope) -> bool {
        let Some(recorded) = &self.0 else {
            return false;
        };
        let (mut at, mut same) = (0, true);
        Validated::inputs(e, |b| {
            same &= recorded.get(at..at + b.len()) == Some(b);
            at += b.len();
        });
        same && at == recorded.len()
    }
}

fn first_attempt() -> u32 {
    1
}

/// Why an envelope was refused.
#[derive(Debug, thiserror::Error)]
pub enum EnvelopeError {
    /// Not JSON, or not the envelope's shape.
    #[error("not a valid envelope: {0}")]
    Json(#[from] serde_json::Error),
    /// A field has the wrong type, or nests deeper than JSON may here.
    #[error("not a valid envelope: `{field}`: {reason}")]
    Field {
        /// The field's path, e.g. `coordinates.sequence`.
        field: String,
        /// What is wrong, with the line and column.
        reason: String,
    },
    /// `schema_version` other than 1.
    #[error("schema_version {0} is not supported (this runtime reads version {SCHEMA_VERSION})")]
    SchemaVersion(u32),
    /// A text field is empty or too long.
    #[error("`{field}` must be 1 to {max} bytes")]
    BadText {
        /// Which field.
        field: &'static str,
        /// Its maximum length.
        max: usize,
    },
    /// The kind is not in the vocabulary.
    #[error("{0}")]
    UnknownKind(String),
    /// The timestamp is not RFC 3339.
    #[error(
        "timestamp `{0}` is not RFC 3339 (e.g. 2026-11-30T09:00:00Z or 2026-11-30T10:00:00.5+01:00)"
    )]
    Timestamp(String),
    /// `attempt` is 0, or above [`MAX_ATTEMPT`].
    #[error("attempt must be at least 1 and at most {MAX_ATTEMPT}")]
    Attempt,
    /// `data` is not a JSON object.
    #[error("data must be a JSON object")]
    DataNotObject,
    /// `data` is larger than [`MAX_DATA_BYTES`].
    #[error("data is {0} bytes, above the {MAX_DATA_BYTES}-byte limit")]
    DataTooLarge(usize),
    /// `data` lacks what its kind needs (e.g. `actions.requested` without
    /// a list of calls to decide on).
    #[error("{kind} data is not valid: {reason}")]
    BadData {
        /// The event kind.
        kind: String,
        /// What is wrong, and what is expected.
        reason: String,
    },
    /// The event names a folder (`cwd`) outside the project folder its
    /// hooks are bound to: hooks that read or run programs in the project
    /// are never pointed at another folder by what an event claims.
    #[error(
        "the event names `{claimed}` as its folder (`cwd`), which is not the project folder {project} nor inside it: refused (hookrt serves the project it was started for: start it from that folder, or name it with --project-dir)"
    )]
    OutsideProject {
        /// The folder the event names.
        claimed: String,
        /// The project folder.
        project: String,
    },
    /// A supplied idempotency key differs from the derived one.
    #[error(
        "idempotency_key `{given}` does not match `{derived}` derived from the coordinates; omit it and hookrt derives it"
    )]
    IdempotencyKey {
        /// The key in the input.
        given: String,
        /// The key hookrt derives.
        derived: String,
    },
}

impl EnvelopeError {
    /// The field an input error is about, when it is about one: what an
    /// answer names besides the message (`hookrt serve`'s JSON errors).
    pub fn field(&self) -> Option<&str> {
        match self {
            EnvelopeError::Field { field, .. } => Some(field),
            EnvelopeError::SchemaVersion(_) => Some("schema_version"),
            EnvelopeError::BadText { field, .. } => Some(field),
            EnvelopeError::UnknownKind(_) => Some("kind"),
            EnvelopeError::Timestamp(_) => Some("timestamp"),
            EnvelopeError::Attempt => Some("attempt"),
            EnvelopeError::DataNotObject
            | EnvelopeError::DataTooLarge(_)
            | EnvelopeError::BadData { .. } => Some("data"),
            EnvelopeError::IdempotencyKey { .. } => Some("idempotency_key"),
            EnvelopeError::OutsideProject { .. } => Some("data.cwd"),
            EnvelopeError::Json(_) => None,
        }
    }

    /// Names the field a parse error is about (serde_json's own message says
    /// only the line and column). A syntax error or a missing top-level
    /// field has no path: it stays as serde_json says it. Nesting past
    /// serde_json's recursion limit is named by its top-level field only
    /// (the full path is as long as the nesting).
    fn at_field(e: serde_path_to_error::Error<serde_json::Error>) -> EnvelopeError {
        let mut path = e.path().to_string();
        let inner = e.into_inner();
        let reason = inner.to_string();
        if reason.starts_with("unknown field") {
            // The path ends with the unknown key itself: name where it is.
            path = match path.rfind('.') {
                Some(i) => path[..i].to_owned(),
                None => String::new(),
            };
        }
        let top = path.split(['.', '[']).next().unwrap_or_default().to_owned();
        if reason.starts_with("recursion limit exceeded") && !top.is_empty() && top != "?" {
            return EnvelopeError::Field {
                field: top,
                reason: format!("nested more than 128 levels deep ({reason})"),
            };
        }
        // Syntax errors and missing top-level fields have no field to name.
        if inner.classify() != serde_json::error::Category::Data
            || path.is_empty()
            || path == "."
            || path.contains('?')
        {
            return EnvelopeError::Json(inner);
        }
        EnvelopeError::Field {
            field: path,
            reason,
        }
    }
}

impl Coordinates {
    /// Coordinates of an event of `agent`'s `session` at stream position
    /// `sequence`, outside any turn or step, in the primary scope.
    pub fn new(agent: impl Into<String>, session: impl Into<String>, sequence: u64) -> Self {
        Coordinates {
            agent: agent.into(),
            session: session.into(),
            turn: None,
            step: None,
            sequence,
            ordinal: None,
            subagent: None,
        }
    }

    /// The same coordinates inside turn `turn`.
    pub fn in_turn(mut self, turn: impl Into<String>) -> Self {
        self.turn = Some(turn.into());
        self
    }

    /// The same coordinates inside step `step`.
    pub fn in_step(mut self, step: impl Into<String>) -> Self {
        self.step = Some(step.into());
        self
    }

    /// The same coordinates in subagent `id`'s scope.
    pub fn in_subagent(mut self, id: impl Into<String>) -> Self {
        self.subagent = Some(id.into());
        self
    }
}

impl Envelope {
    /// A new event, stamped now, first attempt, with its idempotency key
    /// derived; refused when a field is invalid (unknown kind, empty id,
    /// `data` not an object or too large).
    pub fn new(
        id: impl Into<String>,
        kind: impl Into<String>,
        coordinates: Coordinates,
        data: serde_json::Value,
    ) -> Result<Envelope, EnvelopeError> {
        let mut envelope =
            Envelope::draft(id.into(), kind.into(), now_rfc3339(), coordinates, data);
        envelope.validate()?;
        Ok(envelope)
    }

    /// A first attempt at `timestamp`, not yet validated (no key): what the
    /// bridges and the cascade fill in before they check it.
    pub(crate) fn draft(
        id: String,
        kind: String,
        timestamp: String,
        coordinates: Coordinates,
        data: serde_json::Value,
    ) -> Envelope {
        let data = Data::new(data);
        Envelope {
            schema_version: SCHEMA_VERSION,
            id,
            kind,
            timestamp,
            coordinates,
            attempt: 1,
            idempotency_key: String::new(),
            durability: Durability::default(),
            data,
            validated: Validated::default(),
            transcript: Beside::default(),
        }
    }

    /// The same event with the transcript its agent's bridge named.
    pub(crate) fn with_transcript(mut self, transcript: Transcript) -> Envelope {
        self.transcript = Beside(Some(Arc::new(transcript)));
        self
    }

    /// The same envelope naming no transcript (a replay of a recorded
    /// input: the file the agent named is not the one it had then).
    pub(crate) fn without_transcript(mut self) -> Envelope {
        self.transcript = Beside(None);
        self
    }

    /// The transcript the agent's bridge named for this event, if any.
    pub(crate) fn transcript(&self) -> Option<&Arc<Transcript>> {
        self.transcript.0.as_ref()
    }

    /// Parses and validates one JSON envelope, deriving its idempotency key.
    /// This is the input boundary: a key the input supplies must be the one
    /// hookrt derives.
    pub fn from_json(text: &str) -> Result<Envelope, EnvelopeError> {
        let mut env: Envelope = match serde_json::from_str(text) {
            Ok(env) => env,
            // Parsed again to name the field at fault: tracking the path
            // costs a seventh of every parse, so only a refused input pays.
            Err(_) => {
                let mut json = serde_json::Deserializer::from_str(text);
                let env =
                    serde_path_to_error::deserialize(&mut json).map_err(EnvelopeError::at_field)?;
                json.end()?;
                env
            }
        };
        env.accept()?;
        Ok(env)
    }

    /// [`Envelope::from_json`] for JSON already parsed (an item of an array
    /// a server took whole): the same checks, and a field of the wrong type
    /// named by its path the same way.
    pub fn from_value(value: serde_json::Value) -> Result<Envelope, EnvelopeError> {
        let mut env: Envelope =
            serde_path_to_error::deserialize(value).map_err(EnvelopeError::at_field)?;
        env.accept()?;
        Ok(env)
    }

    /// An input's checks, each once: every field and the data's size, a
    /// given idempotency key against the derived one (which it then holds),
    /// and what was checked recorded, so that later steps skip it.
    fn accept(&mut self) -> Result<(), EnvelopeError> {
        self.idempotency_key = self.validate_input()?;
        self.validated = Validated::record(self);
        Ok(())
    }

    /// Whether this envelope's texts were checked and still say the same.
    pub(crate) fn texts_checked(&self) -> bool {
        self.validated.holds(self)
    }

    /// [`Envelope::validate`] after its coordinates' ordinal was set: the
    /// texts, when `texts_checked` held before (an input numbered after it
    /// was read), are not checked again; the rest is.
    pub(crate) fn validate_numbered(&mut self, texts_checked: bool) -> Result<(), EnvelopeError> {
        self.checked_data(!texts_checked)?;
        self.idempotency_key = idempotency_key(&self.kind, &self.coordinates);
        self.validated = Validated::record(self);
        Ok(())
    }

    /// Checks every field and sets the idempotency key derived from the
    /// kind and coordinates. A key already there is replaced, so an
    /// envelope whose kind or coordinates were changed after parsing is
    /// keyed by what it now says. An envelope validated before that still
    /// says the same texts (an input a server parsed, handed to the
    /// service) has them, and its key, checked once: only the rest is.
    pub fn validate(&mut self) -> Result<(), EnvelopeError> {
        if self.texts_checked() {
            self.checked_data(false)?;
            return Ok(());
        }
        self.validate_numbered(false)
    }

    /// Checks every field without changing the envelope, as an input is
    /// checked; returns the derived idempotency key and refuses a given key
    /// that differs from it.
    pub(crate) fn validate_input(&self) -> Result<String, EnvelopeError> {
        self.checked_data(true)?;
        self.validated_key()
    }

    /// Every field (the texts [`Validated`] records only when `texts`), and
    /// the size of the text hooks will receive (the input's own, or
    /// serialized once and kept for the first delivery): that text.
    fn checked_data(&self, texts: bool) -> Result<&str, EnvelopeError> {
        self.validate_version()?;
        if texts {
            self.validate_texts()?;
        }
        self.validate_values()?;
        let data = self.data.text();
        if data.len() > MAX_DATA_BYTES {
            return Err(EnvelopeError::DataTooLarge(data.len()));
        }
        Ok(data)
    }

    /// What a delivery needs, checked: the idempotency key (derived from
    /// what the envelope says now: the envelope's own, borrowed, unless code
    /// changed it since validation) and `data` as JSON text (the input's own,
    /// or serialized once), its size checked on that text. Texts validation
    /// checked and that still say the same are not checked again.
    pub(crate) fn validated_parts(&self) -> Result<(Cow<'_, str>, &str), EnvelopeError> {
        let unchanged = self.validated.holds(self);
        let data = self.checked_data(!unchanged)?;
        let key = if unchanged {
            Cow::Borrowed(self.idempotency_key.as_str())
        } else {
            Cow::Owned(idempotency_key(&self.kind, &self.coordinates))
        };
        Ok((key, data))
    }

    /// The derived idempotency key, refusing a given one that differs.
    fn validated_key(&self) -> Result<String, EnvelopeError> {
        let derived = idempotency_key(&self.kind, &self.coordinates);
        if !self.idempotency_key.is_empty() && self.idempotency_key != derived {
            return Err(EnvelopeError::IdempotencyKey {
                given: self.idempotency_key.clone(),
                derived,
            });
        }
        Ok(derived)
    }

    fn validate_version(&self) -> Result<(), EnvelopeError> {
        if self.schema_version != SCHEMA_VERSION {
            return Err(EnvelopeError::SchemaVersion(self.schema_version));
        }
        Ok(())
    }

    /// The checks of the texts [`Validated`] records: ids, kind, timestamp.
    fn validate_texts(&self) -> Result<(), EnvelopeError> {
        let c = &self.coordinates;
        let optional = [
            ("coordinates.turn", &c.turn),
            ("coordinates.step", &c.step),
            ("coordinates.subagent", &c.subagent),
        ];
        let present = optional
            .into_iter()
            .filter_map(|(f, v)| v.as_ref().map(|v| (f, v)));
        for (field, value) in [
            ("id", &self.id),
            ("coordinates.agent", &c.agent),
            ("coordinates.session", &c.session),
        ]
        .into_iter()
        .chain(present)
        {
            if value.is_empty() || value.len() > MAX_ID_LEN {
                return Err(EnvelopeError::BadText {
                    field,
                    max: MAX_ID_LEN,
                });
            }
        }
        if !kind::is_known(&self.kind) {
            return Err(EnvelopeError::UnknownKind(kind::unknown_kind_message(
                &self.kind,
            )));
        }
        if !is_rfc3339(&self.timestamp) {
            return Err(EnvelopeError::Timestamp(self.timestamp.clone()));
        }
        Ok(())
    }

    /// The checks of what [`Validated`] does not record: attempt and data.
    fn validate_values(&self) -> Result<(), EnvelopeError> {
        if self.attempt == 0 || self.attempt > MAX_ATTEMPT {
            return Err(EnvelopeError::Attempt);
        }
        if !self.data.is_object() {
            return Err(EnvelopeError::DataNotObject);
        }
        let checked = match self.kind.as_str() {
            // A tool approval about nothing would resolve to nothing: the
            // agent must hear why instead (fail closed).
            "actions.requested" => validate_actions(&self.data),
            // Likewise a permission request for no tool.
            "permission.requested" => validate_permission(&self.data),
            _ => Ok(()),
        };
        checked.map_err(|reason| EnvelopeError::BadData {
            kind: self.kind.clone(),
            reason,
        })?;
        Ok(())
    }

    /// What this event says, as a SHA-256 digest: its schema version, id,
    /// kind, timestamp, coordinates (not the ordinal, which hookrt may assign)
    /// and `data` (its value, written with sorted keys, so spacing and key
    /// order do not count). Not covered: `attempt`, `durability` and the
    /// idempotency key, which the runtime owns or derives. A re-submission of
    /// an event id is answered from the store only when its digest matches
    /// (docs/journal.md#re-submissions).
    pub fn digest(&self) -> [u8; 32] {
        let c = &self.coordinates;
        let mut h = Sha256::new();
        h.update(self.schema_version.to_le_bytes());
        hash_parts(
            &mut h,
            &[
                Some(self.id.as_str()),
                Some(self.kind.as_str()),
                Some(self.timestamp.as_str()),
                Some(c.agent.as_str()),
                Some(c.session.as_str()),
                c.turn.as_deref(),
                c.step.as_deref(),
                c.subagent.as_deref(),
            ],
        );
        h.update(c.sequence.to_le_bytes());
        // Straight into the hash: no copy of the data is made. Writing a
        // `Value` cannot fail.
        let _ = serde_json::to_writer(HashWriter(&mut h), self.data.value());
        h.finalize().into()
    }
}

/// `actions.requested` data: `actions`, a non-empty array of calls, each
/// with a unique non-empty `call_id` and a `tool` name.
fn validate_actions(data: &serde_json::Value) -> Result<(), String> {
    let expected = "expected `actions`: [{\"call_id\": \"...\", \"tool\": \"...\"}, ...]";
    let Some(actions) = data.get("actions") else {
        return Err(format!("`actions` is missing; {expected}"));
    };
    let Some(actions) = actions.as_array() else {
        return Err(format!("`actions` is not an array; {expected}"));
    };
    if actions.is_empty() {
        return Err(format!(
            "`actions` is empty: there is no call to decide on; {expected}"
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for (i, call) in actions.iter().enumerate() {
        let id = call.get("call_id").and_then(|v| v.as_str()).unwrap_or("");
        if id.is_empty() {
            return Err(format!("actions[{i}] has no `call_id`; {expected}"));
        }
        if call.get("tool").and_then(|v| v.as_str()).is_none() {
            return Err(format!("actions[{i}] (`{id}`) has no `tool`; {expected}"));
        }
        if !seen.insert(id) {
            return Err(format!("call_id `{id}` appears twice in `actions`"));
        }
    }
    Ok(())
}

/// `permission.requested` data: the `tool` asked about, and its `input`
/// (an object) when given.
fn validate_permission(data: &serde_json::Value) -> Result<(), String> {
    let expected = "expected {\"tool\": \"...\", \"input\": {...}}";
    if data
        .get("tool")
        .and_then(|v| v.as_str())
        .is_none_or(str::is_empty)
    {
        return Err(format!(
            "`tool` is missing or not a non-empty string; {expected}"
        ));
    }
    match data.get("input") {
        None | Some(serde_json::Value::Object(_)) => Ok(()),
        Some(_) => Err(format!("`input` is not an object; {expected}")),
    }
}

/// The highest `attempt` an input may carry: far above any real redelivery
/// count, far below where adding attempts could wrap.
pub const MAX_ATTEMPT: u32 = 10_000;

/// The idempotency key of an event: a hash of its kind and stable coordinates
/// (agent, subagent, session, turn, step, and its ordinal in the step; the
/// stream position `sequence` only when the ordinal is missing), never of the
/// attempt or the event id, so a retried step that re-emits the same logical
/// event under a new id and stream position gets the same key (`ik2-`).
pub fn idempotency_key(kind: &str, c: &Coordinates) -> String {
    let mut h = Sha256::new();
    hash_parts(
        &mut h,
        &[
            Some(c.agent.as_str()),
            c.subagent.as_deref(),
            Some(c.session.as_str()),
            c.turn.as_deref(),
            c.step.as_deref(),
            Some(kind),
        ],
    );
    // The ordinal in the step survives a retried step (new id, new stream
    // position); `sequence` is the fallback for inputs that lack it, tagged
    // apart so the two kinds of key never meet.
    let tag = match c.ordinal {
        Some(ordinal) => {
            h.update([2]);
            h.update(u64::from(ordinal).to_le_bytes());
            "ik2-"
        }
        None => {
            h.update(c.sequence.to_le_bytes());
            "ik1-"
        }
    };
    // The tag and the first 16 bytes of the digest in hex, built in one
    // allocation (this runs once per dispatched event).
    let mut hexed = [0u8; 32];
    hex::encode_to_slice(&h.finalize()[..16], &mut hexed).expect("32 bytes hold 16 in hex");
    let mut key = String::with_capacity(36);
    key.push_str(tag);
    key.push_str(std::str::from_utf8(&hexed).expect("hex digits are ASCII"));
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"schema_version":1,"id":"evt_1","kind":"turn.started","timestamp":"2026-11-30T09:00:00Z",
        "coordinates":{"agent":"coder","session":"s1","turn":"t1","sequence":3},"data":{}}"#;

    #[test]
    fn idempotency_key_ignores_attempt_and_id() {
        let a = Envelope::from_json(LINE).unwrap();
        let b = Envelope::from_json(
            &LINE
                .replace("evt_1", "evt_2")
                .replace("\"data\"", "\"attempt\":3,\"data\""),
        )
        .unwrap();
        assert_eq!(a.idempotency_key, b.idempotency_key);
        assert_eq!(b.attempt, 3);
        let c = Envelope::from_json(&LINE.replace("\"t1\"", "\"t2\"")).unwrap();
        assert_ne!(a.idempotency_key, c.idempotency_key);
    }

    #[test]
    fn a_delivery_passes_the_input_data_text_through_until_the_envelope_changes() {
        let line = LINE.replace("\"data\":{}", "\"data\":{ \"a\" : 1.0 }");
        let mut e = Envelope::from_json(&line).unwrap();
        let (key, text) = e.validated_parts().unwrap();
        assert!(matches!(key, Cow::Borrowed(_)));
        assert_eq!(
            (&*key, text),
            (e.idempotency_key.as_str(), "{ \"a\" : 1.0 }")
        );
        // A change through the value drops the input's text; a changed
        // coordinate gets the key derived from what the envelope says now.
        e.data["a"] = 2.into();
        e.coordinates.turn = Some("t9".into());
        let (key, text) = e.validated_parts().unwrap();
        assert_eq!(text, "{\"a\":2}");
        assert_eq!(key, idempotency_key(&e.kind, &e.coordinates));
        assert_ne!(&*key, e.idempotency_key);
        // A key changed by hand is not passed on either.
        let mut f = Envelope::from_json(&line).unwrap();
        f.idempotency_key = "forged".into();
        assert_eq!(
            f.validated_parts().unwrap().0,
            idempotency_key(&f.kind, &f.coordinates)
        );
        // Parsed from a value (an item of a JSON array): serialized once.
        let g = Envelope::from_value(serde_json::from_str(&line).unwrap()).unwrap();
        assert_eq!(g.validated_parts().unwrap().1, "{\"a\":1.0}");
        assert_eq!(g, Envelope::from_json(&line).unwrap());
    }

    /// A delivery skips checking the texts validation checked only while
    /// they say the same: any one changed since is checked again, and a bad
    /// one refused.
    #[test]
    fn a_text_changed_after_validation_is_checked_again_at_delivery_and_by_validate() {
        let valid = Envelope::from_json(LINE).unwrap();
        assert!(valid.validated_parts().is_ok());
        // An edit, and what the refusal of its result says.
        type Edit = (fn(&mut Envelope), &'static str);
        let changes: [Edit; 5] = [
            (|e| e.id.clear(), "`id` must be 1 to"),
            (|e| e.timestamp = "yesterday".into(), "yesterday"),
            (|e| e.kind = "turn.begun".into(), "turn.begun"),
            (
                |e| e.coordinates.step = Some(String::new()),
                "`coordinates.step`",
            ),
            (|e| e.attempt = 0, "attempt"),
        ];
        for (change, says) in changes {
            let mut e = valid.clone();
            change(&mut e);
            let err = e.validated_parts().unwrap_err().to_string();
            assert!(err.contains(says), "{err}");
            // `validate` (the service's, on every event it takes) likewise.
            let err = e.clone().validate().unwrap_err().to_string();
            assert!(err.contains(says), "{err}");
        }
        // Unchanged, `validate` keeps the key; a session changed since is
        // keyed again by what the envelope now says.
        let mut same = valid.clone();
        same.validate().unwrap();
        assert_eq!(same.idempotency_key, valid.idempotency_key);
        let mut moved = valid.clone();
        moved.coordinates.session = "another".into();
        moved.validate().unwrap();
        assert_ne!(moved.idempotency_key, valid.idempotency_key);
        assert_eq!(
            moved.idempotency_key,
            idempotency_key(&moved.kind, &moved.coordinates)
        );
        // Data is checked whether or not the texts were.
        let mut emptied = valid.clone();
        *emptied.data = serde_json::json!([]);
        assert!(emptied.validate().is_err());
    }

    /// A permission request names the tool it asks about; its input, when
    /// given, is an object (hooks rewrite it as one).
    #[test]
    fn a_permission_request_without_its_tool_is_refused_with_what_is_expected() {
        let with = |data: &str| {
            Envelope::from_json(
                &LINE
                    .replace("\"data\":{}", &format!("\"data\":{data}"))
                    .replace("turn.started", "permission.requested"),
            )
        };
        assert!(with(r#"{"tool":"Bash","input":{"command":"ls"}}"#).is_ok());
        assert!(with(r#"{"tool":"Bash"}"#).is_ok());
        for (data, why) in [
            ("{}", "`tool` is missing"),
            (r#"{"tool":""}"#, "`tool` is missing"),
            (
                r#"{"tool":"Bash","input":"ls"}"#,
                "`input` is not an object",
            ),
        ] {
            let err = with(data).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("permission.requested data is not valid: {why}")),
                "{data}: {err}"
            );
        }
    }

    /// Hooks get the input's data text, so an object naming a key twice
    /// (which the runtime would read as the last, a hook's parser maybe as
    /// the first) is refused, at any depth, naming `data` and the key.
    #[test]
    fn data_that_names_a_key_twice_is_refused_naming_the_key() {
        for data in [
            r#"{"a":1,"a":2}"#,
            r#"{"actions":[{"call_id":"c1","tool":"t","tool":"u"}]}"#,
        ] {
            let err =
                Envelope::from_json(&LINE.replace("\"data\":{}", &format!("\"data\":{data}")))
                    .unwrap_err();
            assert_eq!(err.field(), Some("data"), "{err}");
            assert!(
                err.to_string().contains("appears twice in one object"),
                "{err}"
            );
        }
        // Equal keys in different objects are fine.
        let ok = LINE.replace("\"data\":{}", r#""data":{"a":{"b":1},"c":{"b":2}}"#);
        assert_eq!(Envelope::from_json(&ok).unwrap().data["c"]["b"], 2);
    }

    #[test]
    fn typo_in_kind_is_refused_with_a_suggestion() {
        let err = Envelope::from_json(&LINE.replace("turn.started", "turn.startd")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown event kind `turn.startd` (did you mean `turn.started`?)"
        );
    }
}
