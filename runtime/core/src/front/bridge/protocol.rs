//! What one agent is, whole: a [`Protocol`] holds everything hookrt knows
//! of an agent's hooks (its events and their kinds, the gates, the events
//! that take context, how its input maps to an envelope, its answers,
//! refusals and "no opinion", its hook configuration file and its HTTP
//! route), so a new agent is one file holding one `Protocol` and one line
//! in [`super::agent::Bridge::ALL`].
//!
//! A table, not a trait: an agent is mostly data (names, fields, files)
//! with four functions (map, answer, refusal); a `static` table is listed
//! in one const array, compared and printed by name, and written in a test
//! without a type of its own.

use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::delivery::record::Resolution;

/// Everything about one agent's hooks.
#[derive(Debug)]
pub struct Protocol {
    /// The agent's name on the command line, in URLs and in `bridge.agent`
    /// (`claude-code`, `codex`, …).
    pub agent: &'static str,
    /// The agent as its users name it, for messages (`Claude Code`).
    pub label: &'static str,
    /// The agent's word in kinds and event ids (`claude` →
    /// `custom.claude.*`, `claude-<digest>-…`).
    pub word: &'static str,
    /// Every event of the pinned release, in its own order, and its kind.
    pub events: &'static [(&'static str, &'static str)],
    /// The input field naming the event; `None` when the input does not
    /// (the command line names it: `--event`, or the URL: `?event=`).
    pub event_field: Option<&'static str>,
    /// The input fields holding the session id, the first present wins.
    pub session_fields: &'static [&'static str],
    /// The input field holding an id the source gives each event once and
    /// again on a retry (Anthropic's `request_id`): the event's id is made
    /// of it, so a retried or replayed input is the same event, decided
    /// once. `None`: each reading is an event of its own (agents never
    /// retry a hook, and send the very same input for a new event).
    pub id_field: Option<&'static str>,
    /// The fields naming a subagent (its id, its type) when the input comes
    /// from inside one.
    pub subagent_fields: Option<(&'static str, &'static str)>,
    /// Fields every event keeps in its data when given.
    pub kept: &'static [&'static str],
    /// Fields never kept (paths into the user's home a hook has no use
    /// for), on top of the event name and the session.
    pub dropped: &'static [&'static str],
    /// Where the agent keeps its session transcripts and which input fields
    /// name one (for the `transcript` grant); `None`: it names none.
    pub transcripts: Option<Transcripts>,
    /// The kind and data of a known event (`kind` is its row's) from the
    /// input's fields; an error says what is missing.
    pub map: MapFn,
    /// The input field holding the turn's id, where the agent names turns.
    pub turn_field: Option<&'static str>,
    /// The events that gate something: hookrt failing on one must refuse.
    pub gates: &'static [&'static str],
    /// The events whose answer takes the context hooks add (their kinds
    /// gather it: `event::kind::CONTEXT_KINDS` holds the custom ones).
    pub context_events: &'static [&'static str],
    /// What the agent reads back after event `name`, whose hooks decided
    /// `resolution`: `None` when there is nothing to say.
    pub answer: fn(name: &str, resolution: Option<&Resolution>) -> Option<Value>,
    /// The answer that refuses gate `name` because hookrt could not decide
    /// it (`reason` says why).
    pub refusal: fn(name: &str, reason: &str) -> Value,
    /// What a command hook prints when there is nothing to say.
    pub silence: Silence,
    /// The gates a failed command hook refuses in JSON on stdout, exiting
    /// 0, because the agent lets them through on a failing exit.
    pub refuses_in_json: &'static [&'static str],
    /// Where and how `hookrt install` writes the agent's hook entries;
    /// `None` where no file names hookrt (an inference hook is set in the
    /// organisation's admin console): `install` says where instead.
    pub install: Option<Install>,
    /// How a request to the agent's route proves who sent it, when not
    /// with hookrt's bearer token: `None` for the agents' own hooks.
    pub signature: Option<Signature>,
    /// The agent's route in docs/openapi.json.
    pub openapi: OpenApi,
}

/// Where an agent keeps its session transcripts: a hook holding the
/// `transcript` grant reads the one an input names only inside this folder.
#[derive(Debug)]
pub struct Transcripts {
    /// The input fields naming the transcript, the first present wins.
    pub fields: &'static [&'static str],
    /// The agent's own folder: an environment variable naming it, and its
    /// name under the home folder when that is not set.
    pub home: (Option<&'static str>, &'static str),
    /// The transcripts' folder inside the agent's own folder.
    pub under: &'static str,
}

impl Transcripts {
    /// The transcripts' folder of the user whose environment `env` reads
    /// (`HOME`, the agent's own variable); `None` without an absolute one.
    pub(crate) fn root(&self, env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
        let named = self.home.0.and_then(&env).filter(|d| !d.is_empty());
        let folder = match named {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(env("HOME").filter(|h| !h.is_empty())?).join(self.home.1),
        };
        folder.is_absolute().then(|| folder.join(self.under))
    }
}

/// How an agent's known event maps: `event` and its row's `kind`, the
/// input's fields and its reading, to the envelope's kind, step and data.
pub type MapFn = fn(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing>;

/// What a command hook prints, and an HTTP route answers, when there is
/// nothing to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Silence {
    /// Nothing (over HTTP, `{}`).
    Nothing,
    /// This JSON: `{}` where the agent would read anything else (a warning
    /// on stderr, an empty stdout) as a message (Gemini CLI), an allow
    /// where every answer must be a verdict (Anthropic's inference hooks).
    /// It must parse: `Bridge::no_opinion` panics on a protocol whose text
    /// does not (a mistake in static data; the registry's test reads each).
    Json(&'static str),
}

/// How a source signs its requests to its route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signature {
    /// Standard Webhooks (standardwebhooks.com): `webhook-id`,
    /// `webhook-timestamp` and `webhook-signature` headers, HMAC-SHA256
    /// of `id.timestamp.body` under a `whsec_` secret; the id is the
    /// input's [`Protocol::id_field`].
    StandardWebhooks,
}

/// Where and how an agent's hook configuration names hookrt.
#[derive(Debug)]
pub struct Install {
    /// The shape of the file.
    pub shape: Shape,
    /// The project's file, relative to the working folder.
    pub project: &'static str,
    /// The user's file, relative to the home folder (or to `home_env`).
    pub user: &'static str,
    /// An environment variable naming the user's folder instead of `~`,
    /// and that folder's name under `~` when it is not set.
    pub home_env: Option<(&'static str, &'static str)>,
    /// Events whose matcher is a tool name (`*` matches every tool).
    pub tool_events: &'static [&'static str],
    /// Events hookrt is never the hook of.
    pub not_installed: &'static [&'static str],
    /// Whether the agent's hooks can be `http` (then `--http` points them
    /// at the agent's route; else the command hook forwards there).
    pub http_hooks: bool,
    /// Events whose hooks may only be commands even with `--http`.
    pub command_only: &'static [&'static str],
    /// How an entry names the command.
    pub command: CommandForm,
    /// Whether an entry says `"type": "command"`.
    pub typed: bool,
    /// The entry's `name`, where the agent shows one.
    pub name: Option<&'static str>,
    /// The key of the entry's timeout, and its unit.
    pub timeout: (&'static str, TimeUnit),
    /// The agent's word for failing closed on a gate, if it has one.
    pub fail_closed: Option<FailClosed>,
}

/// The shape of an agent's hook configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `hooks.<Event>: [{matcher?, hooks: [entry]}]` (Claude Code, Codex, Gemini CLI).
    Grouped,
    /// `{version: 1, hooks.<event>: [entry]}` (Cursor, Copilot CLI).
    Flat,
    /// A plugin file of the agent's own, this text with its `SETTINGS`
    /// line filled in (OpenCode, Kilo CLI: they have no hook
    /// configuration); of [`Install`]'s fields, only the files and the
    /// timeout apply.
    Plugin(&'static str),
    /// A `#!/bin/sh` script per event, `<Event>.sh` in the folder the
    /// files name, that `exec`s the command hook (Cline: it runs a file
    /// named after each event); of [`Install`]'s fields, only the folders
    /// apply.
    Scripts,
    /// `{<name>: {enabled: true, <Event>: [...]}}`: the file maps hook
    /// names to their events (Antigravity CLI), and hookrt's entries live
    /// under this name of its own, a matcher group on a tool event, a
    /// bare entry on any other; the user's names are left as they are.
    Named(&'static str),
}

/// How a hook entry names the command it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandForm {
    /// `command` is the program, `args` its arguments.
    Args,
    /// One shell command line, under this key (`command`, `bash`).
    Line(&'static str),
}

/// A timeout's unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// Seconds.
    Seconds,
    /// Milliseconds.
    Milliseconds,
}

impl TimeUnit {
    /// `seconds` in this unit.
    pub fn of(self, seconds: u64) -> u64 {
        match self {
            TimeUnit::Seconds => seconds,
            TimeUnit::Milliseconds => seconds * 1000,
        }
    }
}

/// How a gate's entry tells the agent to block when the hook fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailClosed {
    /// `key: "word"` (Claude Code's `onFailure: "block"`).
    Word(&'static str, &'static str),
    /// `key: true` (Cursor's `failClosed: true`).
    Flag(&'static str),
}

/// An agent's route in docs/openapi.json.
#[derive(Debug)]
pub struct OpenApi {
    /// Its `operationId`.
    pub operation_id: &'static str,
    /// The schema of its request body, under `#/components/schemas/`.
    pub input_schema: &'static str,
}

/// An event's kind, step and data, as an agent's mapping gives them.
#[derive(Debug, Clone)]
pub struct Mapped {
    /// The vocabulary's kind.
    pub kind: String,
    /// The step (a tool call's id) where the event has one.
    pub step: Option<String>,
    /// The data, in the kind's shape (null fields are dropped).
    pub data: Value,
}

/// A field an event needs that its input lacks.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{event} without `{field}`")]
pub struct Missing {
    /// The agent's name of the event.
    pub event: String,
    /// The field.
    pub field: &'static str,
}

/// One reading of an input: its digest and the agent name hooks see.
#[derive(Debug)]
pub struct Reading<'a> {
    pub(super) digest: [u8; 32],
    pub(super) agent: &'a str,
}

impl Reading<'_> {
    /// The agent name hooks see (`coordinates.agent`).
    pub(crate) fn agent(&self) -> &str {
        self.agent
    }

    /// A stand-in id for something the input does not name (a tool call
    /// without an id): `<prefix>-` and 16 hex digits of the input's digest.
    pub fn stand_in(&self, prefix: &str) -> String {
        format!("{prefix}-{}", hex::encode(&self.digest[..8]))
    }

    /// A tool call's id: the text the agent gives (`given`, the field its
    /// input names the call by), else a stand-in `call-…` of the input's
    /// digest.
    pub fn call_id(&self, given: Option<&Value>) -> String {
        given
            .and_then(Value::as_str)
            .map_or_else(|| self.stand_in("call"), str::to_owned)
    }
}
