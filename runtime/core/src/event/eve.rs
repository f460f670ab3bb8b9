//! The Eve bridge: one line of Eve's NDJSON session stream (vercel/eve,
//! stream versions 21 to 26) as a hookrt envelope. Every mapping and every
//! deviation is recorded in `docs/adr/0002-eve-bridge.md`; in short:
//!
//! - `type` is the kind, `meta.id` the id (minted deterministically from the
//!   line when absent: streams written before version 20), `meta.at` the
//!   timestamp, `data` the data as Eve wrote it (`{}` when absent);
//! - `data.turnId` is the turn, `data.stepIndex` the step (`<turnId>.step_<n>`);
//!   the line's position in the stream is `coordinates.sequence` (Eve's own
//!   `data.sequence` numbers turns, and stays in `data`);
//! - agent and session come from the caller (Eve names the session in the
//!   stream's URL, not in its lines);
//! - subagent scope: a child session's own stream is read with
//!   [`EveStream::for_subagent`]; on the parent's stream, a wrapped
//!   `subagent.event` and the proxied prompts of a child task (`input.*`,
//!   `authorization.*`, `approval.*` carrying an agent task's `taskId`) are
//!   the child's, named as `task.started` / `agent.started` /
//!   `subagent.called` named it;
//! - `actions.requested`: each action also gets hookrt's `call_id` and
//!   `tool`, so tool-approval hooks decide on Eve's calls.

use std::collections::HashMap;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::event::envelope::{Coordinates, Envelope, EnvelopeError};
use crate::event::hashing::hash_parts;
use crate::event::ordinal::Ordinals;
use crate::event::recent::Recent;

/// Why an Eve line did not become an envelope.
#[derive(Debug, thiserror::Error)]
pub enum EveError {
    /// Not JSON.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// JSON, but not an Eve stream event.
    #[error("not an Eve stream event: {0}")]
    Shape(&'static str),
    /// An Eve event hookrt refuses (e.g. a kind outside its vocabulary).
    #[error(transparent)]
    Envelope(#[from] EnvelopeError),
}

/// Kinds a child task's prompts arrive as on its parent's stream.
const PROXIED: [&str; 5] = [
    "input.requested",
    "authorization.required",
    "authorization.completed",
    "approval.candidate",
    "approval.settled",
];

/// One Eve session stream being read, line by line, in order.
#[derive(Debug)]
pub struct EveStream {
    agent: String,
    session: String,
    /// Set when this is a child session's own stream.
    subagent: Option<String>,
    /// Agent task id → the child agent's name.
    tasks: HashMap<String, String>,
    /// Lines read so far: the next line's `coordinates.sequence`.
    position: u64,
    /// How often each minted id was minted, so identical lines differ.
    minted: HashMap<String, u32>,
    ordinals: Ordinals,
    /// The place each event read (by its `meta.id`) took in the stream: a
    /// line Eve sends again is the same event, in the same place, so the
    /// journal takes it as a duplicate (and a line that says something else
    /// under the id as a conflict).
    taken: Recent<String, StreamPlace>,
}

/// Where an event took its place: its `coordinates.sequence` and ordinal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamPlace {
    /// Its position in the stream.
    pub sequence: u64,
    /// Its ordinal in its step.
    pub ordinal: Option<u32>,
}

/// Event ids a stream remembers the place of (the most recent ones): a
/// re-emission comes soon after the first, and older ones are found by the
/// journal, seeded with [`EveStream::remember`].
const REMEMBERED_IDS: usize = 65_536;

impl EveStream {
    /// The stream of `session` (the id in Eve's
    /// `/eve/v1/session/<id>/stream` URL) of `agent`.
    pub fn new(agent: impl Into<String>, session: impl Into<String>) -> EveStream {
        EveStream {
            agent: agent.into(),
            session: session.into(),
            subagent: None,
            tasks: HashMap::new(),
            position: 0,
            minted: HashMap::new(),
            ordinals: Ordinals::new(),
            taken: Recent::new(REMEMBERED_IDS),
        }
    }

    /// Remembers that event `id` of this stream took `place` (read by an
    /// earlier run, from the journal): the same line read again is put there
    /// again, and new lines come after every place remembered.
    pub(crate) fn remember(&mut self, id: &str, place: StreamPlace) {
        *self.taken.get_or_insert_with(&id.to_owned(), || place) = place;
        self.position = self.position.max(place.sequence + 1);
    }

    /// The same, for a child session's own stream: every event is in
    /// subagent `name`'s scope.
    pub fn for_subagent(mut self, name: impl Into<String>) -> EveStream {
        self.subagent = Some(name.into());
        self
    }

    /// The envelope of one line. A refused line still takes its place in the
    /// stream, so later positions do not depend on what was refused.
    pub fn envelope(&mut self, line: &str) -> Result<Envelope, EveError> {
        let position = self.position;
        self.position += 1;
        let Value::Object(mut event) = serde_json::from_str::<Value>(line)? else {
            return Err(EveError::Shape("a line must be a JSON object"));
        };
        let meta = match event.remove("meta") {
            Some(Value::Object(meta)) => meta,
            _ => return Err(EveError::Shape("`meta` (with `at`) is missing")),
        };
        // An id read before: Eve sent the event again (its stream is at least
        // once). It takes no new place.
        let again = meta
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .and_then(|id| self.taken.get(&id.to_owned()).copied());
        if again.is_some() {
            self.position = position;
        }
        let ((kind, mut data), mut subagent) =
            unwrapped(kind_and_data(&mut event)?, self.subagent.clone())?;
        self.learn_children(&kind, &data);
        if subagent.is_none()
            && PROXIED.contains(&kind.as_str())
            && let Some(task) = text(&data, "taskId")
        {
            subagent = self.tasks.get(&task).cloned();
        }
        if kind == "actions.requested" {
            add_call_ids(&mut data);
        }
        let at = meta
            .get("at")
            .and_then(Value::as_str)
            .ok_or(EveError::Shape("`meta.at` is missing"))?
            .to_owned();
        let data = Value::Object(data);
        let id = match meta.get("id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => id.to_owned(),
            _ => self.mint_id(&kind, &at, &data),
        };
        let turn = text_of(&data, "turnId");
        let step = data
            .get("stepIndex")
            .and_then(Value::as_u64)
            .map(|n| match &turn {
                Some(t) => format!("{t}.step_{n}"),
                None => format!("step_{n}"),
            });
        let coordinates = Coordinates {
            agent: self.agent.clone(),
            session: self.session.clone(),
            turn,
            step,
            sequence: again.map_or(position, |p| p.sequence),
            ordinal: again.and_then(|p| p.ordinal),
            subagent,
        };
        let mut envelope = Envelope::draft(id, kind, at, coordinates, data);
        if again.is_none() {
            self.ordinals.assign(&mut envelope);
        }
        envelope.validate()?;
        if again.is_none()
            && meta
                .get("id")
                .and_then(Value::as_str)
                .is_some_and(|i| !i.is_empty())
        {
            let place = StreamPlace {
                sequence: position,
                ordinal: envelope.coordinates.ordinal,
            };
            self.taken.get_or_insert_with(&envelope.id, || place);
        }
        Ok(envelope)
    }

    /// Remembers which task ids and child sessions belong to which child agent.
    fn learn_children(&mut self, kind: &str, data: &Map<String, Value>) {
        let agent_task = match kind {
            "task.started" => {
                text(data, "kind").as_deref() == Some("agent") || data.contains_key("child")
            }
            "agent.started" => true,
            _ => false,
        };
        if agent_task && let (Some(task), Some(name)) = (text(data, "taskId"), text(data, "name")) {
            self.tasks.insert(task, name);
        }
    }

    /// An id for an event written without one: a digest of the session and
    /// the line's content, numbered when the same content repeats, so
    /// reading the same stream again mints the same ids.
    fn mint_id(&mut self, kind: &str, at: &str, data: &Value) -> String {
        let mut h = Sha256::new();
        let data = data.to_string();
        hash_parts(
            &mut h,
            &[
                Some(self.agent.as_str()),
                Some(self.session.as_str()),
                self.subagent.as_deref(),
                Some(kind),
                Some(at),
                Some(data.as_str()),
            ],
        );
        let digest = hex::encode(&h.finalize()[..12]);
        let n = self.minted.entry(digest.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            format!("eve-{digest}")
        } else {
            format!("eve-{digest}-{n}")
        }
    }
}

/// A parent's `subagent.event` wrapper around one event of its inline
/// subagent: the wrapped event's kind and data, in the subagent's scope
/// (`subagent`, the stream's own, first). Any other event passes as it is.
fn unwrapped(
    (kind, mut data): KindAndData,
    subagent: Option<String>,
) -> Result<(KindAndData, Option<String>), EveError> {
    if kind != "subagent.event" {
        return Ok(((kind, data), subagent));
    }
    let name = text(&data, "subagentName").filter(|n| !n.is_empty());
    // Without a name the wrapped event has no scope: landing in the
    // primary scope would show a subagent's payload to the parent's
    // hooks (and let its decisions be judged by the wrong policy).
    if name.is_none() && subagent.is_none() {
        return Err(EveError::Shape(
            "`subagent.event` without its `subagentName`: the event's scope is unknown",
        ));
    }
    let Some(Value::Object(mut inner)) = data.remove("event") else {
        return Err(EveError::Shape("`subagent.event` without its `event`"));
    };
    Ok((kind_and_data(&mut inner)?, subagent.or(name)))
}

/// An Eve event's `type` and `data`.
type KindAndData = (String, Map<String, Value>);

/// `type` and `data` of an Eve event object (`{}` for events without data).
fn kind_and_data(event: &mut Map<String, Value>) -> Result<KindAndData, EveError> {
    let kind = match event.remove("type") {
        Some(Value::String(kind)) => kind,
        _ => return Err(EveError::Shape("`type` is missing or not text")),
    };
    let data = match event.remove("data") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(data)) => data,
        Some(_) => return Err(EveError::Shape("`data` is not an object")),
    };
    Ok((kind, data))
}

/// Eve's calls in hookrt's terms too: `call_id` from `callId`, `tool` from
/// the tool (or skill, agent, workflow) name.
fn add_call_ids(data: &mut Map<String, Value>) {
    let Some(Value::Array(actions)) = data.get_mut("actions") else {
        return;
    };
    for action in actions.iter_mut().filter_map(Value::as_object_mut) {
        if let Some(id) = action.get("callId").cloned() {
            action.entry("call_id").or_insert(id);
        }
        let tool = [
            "toolName",
            "name",
            "subagentName",
            "remoteAgentName",
            "kind",
        ]
        .iter()
        .find_map(|k| action.get(*k).filter(|v| v.is_string()).cloned());
        if let Some(tool) = tool {
            action.entry("tool").or_insert(tool);
        }
    }
}

fn text(data: &Map<String, Value>, key: &str) -> Option<String> {
    data.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn text_of(data: &Value, key: &str) -> Option<String> {
    data.get(key).and_then(Value::as_str).map(str::to_owned)
}
