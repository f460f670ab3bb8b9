//! `Event` and `Context`: owned views of what the host hands a handler.

use serde::Deserialize;

use crate::HookError;
use crate::bindings::hookrt::hook::types as wit;
use crate::events::EventData;

/// How durably the runtime held the event when this delivery started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// Held only in memory: a crash before delivery can lose the event.
    #[default]
    Accepted,
    /// Committed to the journal before any hook saw it.
    Persisted,
}

/// Where in the agent's life the event happened. Stable across retries.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Coordinates {
    /// The agent that emitted the event.
    pub agent: String,
    /// The session (conversation) the event belongs to.
    pub session: String,
    /// The turn within the session, when the event belongs to one.
    #[serde(default)]
    pub turn: Option<String>,
    /// The step within the turn, when the event belongs to one.
    #[serde(default)]
    pub step: Option<String>,
    /// Position of the event in the session's event stream (0-based).
    pub sequence: u64,
    /// The subagent whose scope the event belongs to; `None` for the primary agent.
    #[serde(default)]
    pub subagent: Option<String>,
}

/// One delivered event: the v1 envelope, owned (every field is described in
/// docs/envelope.md). [`id`](Event::id) is the stable event id (the dedup key);
/// [`attempt`](Event::attempt) counts deliveries from 1, and
/// [`is_retry`](Event::is_retry) says this delivery may have run before (key side
/// effects with [`crate::idempotency_key`]); [`durability`](Event::durability) says
/// whether the event was committed to the journal before this delivery.
/// [`data`](Event::data) parses the data as a kind's typed struct,
/// [`data_json`](Event::data_json) as JSON (for `custom.` kinds).
/// [`Event::from_json`] reads a transcript line, for a hook's native tests:
///
/// ```
/// use hookrt_sdk::prelude::*;
///
/// let event = Event::from_json(
///     r#"{"schema_version":1,"id":"evt_0005","kind":"action.result","timestamp":"2026-01-01T00:00:00Z",
///        "coordinates":{"agent":"coder","session":"s1","sequence":5},
///        "data":{"call_id":"c1","tool":"run_shell","status":"error","error":"exit 1"}}"#,
/// )?;
/// assert_eq!((event.kind(), event.attempt(), event.is_retry()), ("action.result", 1, false));
/// assert_eq!(event.durability(), Durability::Accepted);
/// let result: ActionResult = event.data()?;
/// assert_eq!(result.status, ActionStatus::Error);
/// # Ok::<(), HookError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    schema_version: u32,
    id: String,
    kind: String,
    timestamp: String,
    coordinates: Coordinates,
    attempt: u32,
    idempotency_key: String,
    durability: Durability,
    data: String,
}

/// The JSON form of an envelope as recorded in transcripts (`*.jsonl`, one per line).
#[derive(Deserialize)]
struct EnvelopeJson {
    schema_version: u32,
    id: String,
    kind: String,
    timestamp: String,
    coordinates: Coordinates,
    #[serde(default = "first_attempt")]
    attempt: u32,
    #[serde(default)]
    idempotency_key: String,
    #[serde(default)]
    durability: Durability,
    #[serde(default)]
    data: serde_json::Value,
}

fn first_attempt() -> u32 {
    1
}

impl Event {
    /// Parse one recorded envelope (a transcript line). Missing delivery fields default
    /// to attempt 1, an empty idempotency key and `accepted`; the runtime fills them in
    /// for real deliveries.
    pub fn from_json(line: &str) -> Result<Self, HookError> {
        let raw: EnvelopeJson = serde_json::from_str(line)
            .map_err(|err| HookError::new(format!("invalid event envelope: {err}")))?;
        let data = match raw.data {
            serde_json::Value::Null => "{}".to_owned(),
            value => value.to_string(),
        };
        Ok(Self {
            schema_version: raw.schema_version,
            id: raw.id,
            kind: raw.kind,
            timestamp: raw.timestamp,
            coordinates: raw.coordinates,
            attempt: raw.attempt,
            idempotency_key: raw.idempotency_key,
            durability: raw.durability,
            data,
        })
    }

    #[doc(hidden)]
    pub fn from_wit(envelope: wit::Envelope) -> Self {
        let c = envelope.coordinates;
        Self {
            schema_version: envelope.schema_version,
            id: envelope.id,
            kind: envelope.kind,
            timestamp: envelope.timestamp,
            coordinates: Coordinates {
                agent: c.agent,
                session: c.session,
                turn: c.turn,
                step: c.step,
                sequence: c.sequence,
                subagent: c.subagent,
            },
            attempt: envelope.attempt,
            idempotency_key: envelope.idempotency_key,
            durability: match envelope.durability {
                wit::Durability::Accepted => Durability::Accepted,
                wit::Durability::Persisted => Durability::Persisted,
            },
            data: envelope.data,
        }
    }

    /// Envelope layout version (1).
    pub fn schema_version(&self) -> u32 {
        self.schema_version
    }

    /// Stable event id: the key the journal deduplicates on.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Event kind, e.g. `message.completed`.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// When the agent emitted the event, RFC 3339 in UTC.
    pub fn timestamp(&self) -> &str {
        &self.timestamp
    }

    /// Where the event happened (agent, session, turn, step, sequence, subagent).
    pub fn coordinates(&self) -> &Coordinates {
        &self.coordinates
    }

    /// Delivery attempt of this event to this handler: 1 on first delivery.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// True when this delivery repeats an earlier one (attempt > 1).
    pub fn is_retry(&self) -> bool {
        self.attempt > 1
    }

    /// The envelope's idempotency key (stable across retries); see also
    /// [`crate::idempotency_key`] for a key per side effect.
    pub fn idempotency_key(&self) -> &str {
        &self.idempotency_key
    }

    /// How durably the runtime held the event when this delivery started.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// The kind's data as JSON text, unparsed.
    pub fn raw_data(&self) -> &str {
        &self.data
    }

    /// The kind's data parsed as `T`; fails if the event is not of kind `T::KIND` or
    /// the data does not have `T`'s shape, with a message that names the event and says
    /// what to do (with `?` it becomes the delivery's error). Optional fields are `None`
    /// when absent and unknown fields are ignored, so a host that adds fields breaks no
    /// hook. In a `*` handler, compare [`Event::kind`] with a struct's `KIND` first:
    ///
    /// ```
    /// use hookrt_sdk::prelude::*;
    ///
    /// let event = Event::from_json(
    ///     r#"{"schema_version":1,"id":"evt_0006","kind":"action.result","timestamp":"t",
    ///        "coordinates":{"agent":"a","session":"s","sequence":6},"data":{"call_id":"c","tool":"t"}}"#,
    /// )?;
    /// assert!([TurnFailed::KIND, ActionResult::KIND].contains(&event.kind()));
    /// let missing = event.data::<ActionResult>().unwrap_err();
    /// assert!(missing.message().starts_with("event evt_0006 (`action.result`): invalid data: missing field `status`"));
    /// let other = event.data::<TurnFailed>().unwrap_err();
    /// assert_eq!(
    ///     other.message(),
    ///     "event evt_0006 is `action.result`, not `turn.failed`: subscribe to `turn.failed` or check `event.kind()` first"
    /// );
    /// # Ok::<(), HookError>(())
    /// ```
    pub fn data<T: EventData>(&self) -> Result<T, HookError> {
        if self.kind != T::KIND {
            return Err(HookError::new(format!(
                "event {} is `{}`, not `{}`: subscribe to `{}` or check `event.kind()` first",
                self.id,
                self.kind,
                T::KIND,
                T::KIND
            )));
        }
        serde_json::from_str(&self.data).map_err(|err| {
            HookError::new(format!(
                "event {} (`{}`): invalid data: {err}",
                self.id, self.kind
            ))
        })
    }

    /// The kind's data as an untyped JSON value (for kinds the SDK has no struct for).
    pub fn data_json(&self) -> Result<serde_json::Value, HookError> {
        serde_json::from_str(&self.data).map_err(|err| {
            HookError::new(format!(
                "event {} (`{}`): invalid data: {err}",
                self.id, self.kind
            ))
        })
    }
}

/// What an event lets a hook do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventClass {
    /// The hook observes; anything it returns is ignored.
    Observe,
    /// The hook may answer (tool approval, file-edit ownership); answers are merged.
    Decision,
    /// The hook may edit the agent input state; edits are validated and rolled back as one.
    Edit,
    /// The event asks whether something may go on (a prompt, a compaction, a task, a
    /// config change) or whether a turn may stop: the hook may answer a gate
    /// ([`Block`](crate::Block), [`Continuation`](crate::Continuation)). Answers are
    /// merged: block beats continue beats pass.
    Gate,
}

impl EventClass {
    /// The class of a kind in the vocabulary: `actions.requested`, `file.edit.requested`
    /// and `permission.requested` are decisions, `step.completed` and `turn.completed`
    /// edits, `prompt.submitted`, `turn.stopping`, `compaction.requested`,
    /// `task.created` and `config.changed` gates, everything else (and `*` or an unknown
    /// kind) observe. A `rewrite:<kind>` handler key has its kind's class, an
    /// `observe:<kind>` one observe. The runtime's classification is the one that counts;
    /// this mirrors it for native tests.
    pub fn of_kind(kind: &str) -> Self {
        use crate::events::{
            ActionsRequested, ConfigChanged, EventData, FileEditRequested, PermissionRequested,
            PromptSubmitted, StepCompleted, TaskCreated, TurnCompleted, TurnStopping,
        };
        let kind = kind.strip_prefix("rewrite:").unwrap_or(kind);
        match kind {
            k if k == ActionsRequested::KIND
                || k == FileEditRequested::KIND
                || k == PermissionRequested::KIND =>
            {
                Self::Decision
            }
            k if k == StepCompleted::KIND || k == TurnCompleted::KIND => Self::Edit,
            k if k == PromptSubmitted::KIND
                || k == TurnStopping::KIND
                || k == crate::eve::CompactionRequested::KIND
                || k == TaskCreated::KIND
                || k == ConfigChanged::KIND =>
            {
                Self::Gate
            }
            _ => Self::Observe,
        }
    }
}

/// Whose events a hook receives (the WIT `scope` variant).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Scope {
    /// The primary agent's hooks (`hooks/`): primary-agent events only.
    #[default]
    Primary,
    /// A subagent's hooks (`subagents/<id>/hooks/`): that subagent's events only.
    Subagent(String),
    /// An aggregate observer named in `hookrt.toml`: events of every scope, with ids kept
    /// and `data` removed (`{}`).
    Aggregate,
}

impl Scope {
    /// The subagent id for [`Scope::Subagent`], `None` otherwise.
    pub fn subagent(&self) -> Option<&str> {
        match self {
            Self::Subagent(id) => Some(id),
            _ => None,
        }
    }
}

/// `primary`, `subagent:<id>` or `aggregate`: the text [`crate::safe_log`] logs.
impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Primary => f.write_str("primary"),
            Self::Subagent(id) => write!(f, "subagent:{id}"),
            Self::Aggregate => f.write_str("aggregate"),
        }
    }
}

/// How events reach hookrt (the WIT `transport` record). A description only: a hook never
/// gets a channel, a connection or credentials.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Transport {
    /// `in-process` (embedded library), `cli` (`hookrt run`), `http`, `nats`, ...
    pub kind: String,
    /// Non-secret detail, e.g. a NATS subject.
    pub detail: Option<String>,
}

impl Transport {
    /// A transport of `kind` without detail.
    pub fn new(kind: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            detail: None,
        }
    }

    /// This transport with `detail` (e.g. a NATS subject).
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
}

/// What the runtime tells a handler about the delivery it is running:
/// [`handler`](Context::handler), the subscription that matched (the kind,
/// `observe:<kind>`, `rewrite:<kind>` or `*`); [`slug`](Context::slug), this hook's
/// slug; [`budget_ms`](Context::budget_ms), the milliseconds left of the delivery's
/// deadline when the handler starts; [`class`](Context::class), which in a `*` handler
/// tells whether the answer counts; [`agent`](Context::agent),
/// [`session`](Context::session), [`scope`](Context::scope) (primary, one subagent,
/// or an aggregate observer) and [`transport`](Context::transport), how the event
/// reached hookrt (a description only: a hook never gets a channel, a connection or
/// credentials). [`Context::new`] builds one for a hook's native tests:
///
/// ```
/// use hookrt_sdk::prelude::*;
///
/// let cx = Context::new("actions.requested", "policy", 500);
/// assert_eq!((cx.class(), cx.agent(), cx.session()), (EventClass::Decision, "test-agent", "test-session"));
/// assert_eq!((cx.scope().to_string(), cx.transport().kind.as_str()), ("primary".to_owned(), "in-process"));
/// let cx = Context::new("*", "audit", 500)
///     .with_class(EventClass::Gate)
///     .with_scope(Scope::Subagent("researcher".into()))
///     .with_transport(Transport::new("nats").with_detail("hooks.events"));
/// assert_eq!((cx.class(), cx.scope().subagent()), (EventClass::Gate, Some("researcher")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    handler: String,
    slug: String,
    budget_ms: u64,
    class: EventClass,
    agent: String,
    session: String,
    scope: Scope,
    transport: Transport,
}

impl Context {
    /// A context as the runtime would build it; useful in native tests of a hook. The
    /// class is [`EventClass::of_kind`] of `handler` (use [`Context::with_class`] for `*`);
    /// agent `test-agent`, session `test-session`, scope [`Scope::Primary`], transport
    /// `in-process` (change them with the `with_*` methods).
    pub fn new(handler: impl Into<String>, slug: impl Into<String>, budget_ms: u64) -> Self {
        let handler = handler.into();
        let class = EventClass::of_kind(&handler);
        Self {
            handler,
            slug: slug.into(),
            budget_ms,
            class,
            agent: "test-agent".to_owned(),
            session: "test-session".to_owned(),
            scope: Scope::Primary,
            transport: Transport::new("in-process"),
        }
    }

    /// This context with another event class (for a wildcard handler in native tests).
    pub fn with_class(mut self, class: EventClass) -> Self {
        self.class = class;
        self
    }

    /// This context with another agent identity.
    pub fn with_agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = agent.into();
        self
    }

    /// This context with another session identity.
    pub fn with_session(mut self, session: impl Into<String>) -> Self {
        self.session = session.into();
        self
    }

    /// This context with another scope.
    pub fn with_scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self
    }

    /// This context with another transport.
    pub fn with_transport(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }

    #[doc(hidden)]
    pub fn from_wit(context: wit::Context) -> Self {
        Self {
            handler: context.handler,
            slug: context.slug,
            budget_ms: context.budget_ms,
            class: match context.class {
                wit::EventClass::Observe => EventClass::Observe,
                wit::EventClass::Decision => EventClass::Decision,
                wit::EventClass::Edit => EventClass::Edit,
                wit::EventClass::Gate => EventClass::Gate,
            },
            agent: context.agent,
            session: context.session,
            scope: match context.scope {
                wit::Scope::Primary => Scope::Primary,
                wit::Scope::Subagent(id) => Scope::Subagent(id),
                wit::Scope::Aggregate => Scope::Aggregate,
            },
            transport: Transport {
                kind: context.transport.kind,
                detail: context.transport.detail,
            },
        }
    }

    /// The subscription that matched: the event kind, or `*`.
    pub fn handler(&self) -> &str {
        &self.handler
    }

    /// The slug of the hook being run (its path under `hooks/` without extension).
    pub fn slug(&self) -> &str {
        &self.slug
    }

    /// Wall-clock time left for this delivery, in milliseconds, when it started.
    pub fn budget_ms(&self) -> u64 {
        self.budget_ms
    }

    /// The class of the event's kind: whether this handler's answer counts.
    pub fn class(&self) -> EventClass {
        self.class
    }

    /// The agent identity (the event's `coordinates.agent`).
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// The session identity (the event's `coordinates.session`).
    pub fn session(&self) -> &str {
        &self.session
    }

    /// This hook's scope: primary, one subagent, or an aggregate observer (whose events
    /// carry `{}` as data).
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// How the event reached hookrt (a description, never a channel or credentials).
    pub fn transport(&self) -> &Transport {
        &self.transport
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_context_defaults_and_setters() {
        let cx = Context::new("*", "probe", 50);
        assert_eq!(cx.agent(), "test-agent");
        assert_eq!(cx.session(), "test-session");
        assert_eq!(cx.scope(), &Scope::Primary);
        assert_eq!(cx.transport(), &Transport::new("in-process"));
        let cx = cx
            .with_agent("a1")
            .with_session("s1")
            .with_scope(Scope::Subagent("researcher".into()))
            .with_transport(Transport::new("nats").with_detail("hooks.events"));
        assert_eq!((cx.agent(), cx.session()), ("a1", "s1"));
        assert_eq!(cx.scope().subagent(), Some("researcher"));
        assert_eq!(cx.transport().detail.as_deref(), Some("hooks.events"));
    }

    #[test]
    fn classes_of_kinds_and_handler_keys() {
        for (key, class) in [
            ("message.completed", EventClass::Observe),
            ("*", EventClass::Observe),
            ("actions.requested", EventClass::Decision),
            ("rewrite:actions.requested", EventClass::Decision),
            ("permission.requested", EventClass::Decision),
            ("rewrite:permission.requested", EventClass::Decision),
            ("observe:permission.requested", EventClass::Observe),
            ("step.completed", EventClass::Edit),
            ("prompt.submitted", EventClass::Gate),
            ("turn.stopping", EventClass::Gate),
            ("compaction.requested", EventClass::Gate),
            ("task.created", EventClass::Gate),
            ("config.changed", EventClass::Gate),
        ] {
            assert_eq!(EventClass::of_kind(key), class, "{key}");
            assert_eq!(Context::new(key, "h", 1).class(), class, "{key}");
        }
    }

    #[test]
    fn scope_text() {
        assert_eq!(Scope::Primary.to_string(), "primary");
        assert_eq!(Scope::Subagent("r1".into()).to_string(), "subagent:r1");
        assert_eq!(Scope::Aggregate.to_string(), "aggregate");
    }

    #[test]
    fn from_wit_maps_every_field() {
        let cx = Context::from_wit(wit::Context {
            handler: "*".into(),
            slug: "obs".into(),
            budget_ms: 7,
            class: wit::EventClass::Gate,
            agent: "ag".into(),
            session: "se".into(),
            scope: wit::Scope::Aggregate,
            transport: wit::Transport {
                kind: "http".into(),
                detail: None,
            },
        });
        assert_eq!(cx.scope(), &Scope::Aggregate);
        assert_eq!(cx.class(), EventClass::Gate);
        assert_eq!((cx.agent(), cx.session()), ("ag", "se"));
        assert_eq!(cx.transport(), &Transport::new("http"));
    }
}
