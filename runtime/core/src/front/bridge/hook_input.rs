//! A hook input, read alike for every agent: the JSON an agent gives its
//! command hook on stdin (or POSTs to an HTTP hook) as a hookrt envelope.
//! Each agent's module says what differs ([`Protocol`]): where the event's
//! name and the session are, which fields every event keeps, and how each
//! event maps to a kind and its data. The rest is here, once:
//!
//! - an event the agent's table does not name (a newer release) is
//!   `custom.<agent>.<event in snake case>`, observed, its data the input's
//!   own fields: delivered, never refused;
//! - an input from inside a subagent is in the subagent's scope (its type
//!   lowercased, anything but `a-z`, `0-9`, `_` and `-` made `-`);
//! - no agent's input carries an event id or a position, so
//!   `coordinates.sequence` (and with it the idempotency key) comes from a
//!   digest of the input, and the event id from that digest and when and
//!   where it was read: agents send each input once, never retry a hook,
//!   and send the very same input again for a new event (a second stop of
//!   a turn a hook kept going), so the same input twice is two events
//!   (but where the source names its events: [`Protocol::id_field`]);
//! - every event's data names where it came from, `bridge: {agent, event,
//!   transport}`, so one journal shows one trail across agents.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::protocol::{Mapped, Missing, Protocol, Reading};
use crate::event::clock::now_rfc3339;
use crate::event::envelope::{Coordinates, Envelope, EnvelopeError};
use crate::event::transcript::Transcript;

/// Why a hook input did not become an envelope.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// Not JSON.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// JSON, but not a hook input of the agent.
    #[error("not a {agent} hook input: {why}")]
    Shape {
        /// The agent, as its users name it (`Claude Code`).
        agent: &'static str,
        /// What is wrong.
        why: String,
    },
    /// The event maps to an envelope hookrt refuses.
    #[error(transparent)]
    Envelope(#[from] EnvelopeError),
}

/// One hook input read: the event as the agent named it and its envelope.
#[derive(Debug, Clone)]
pub struct BridgeEvent {
    /// The agent's name of the event (`PreToolUse`, `BeforeTool`,
    /// `beforeShellExecution`): the answer is shaped for it.
    pub name: String,
    /// The event as hookrt delivers it.
    pub envelope: Envelope,
}

/// Longest event name turned into a kind: a longer one is cut.
const MAX_EVENT_NAME: usize = 64;

/// When one input was read, and which reading of it this is: the
/// envelope's timestamp and what tells its id from another reading's of
/// the same input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// The envelope's `timestamp` (RFC 3339, UTC).
    pub timestamp: String,
    /// The last part of the envelope's id (16 hex digits).
    pub reading: String,
}

impl Stamp {
    /// This reading: now, and a value no other reading of this process
    /// (nor, but by chance, of another) has.
    pub(crate) fn now() -> Stamp {
        Stamp {
            timestamp: now_rfc3339(),
            reading: invocation(),
        }
    }
}

/// The envelope of one hook input of the agent `protocol` describes, read
/// now ([`Stamp::now`]). `agent` is the name hooks see
/// (`coordinates.agent`); `event` names the event when the input does not;
/// `transport` is how it came (`command`, `http`).
pub(crate) fn read(
    protocol: &Protocol,
    agent: &str,
    input: &str,
    event: Option<&str>,
    transport: &str,
) -> Result<BridgeEvent, BridgeError> {
    read_stamped(protocol, agent, input, event, transport, Stamp::now())
}

/// [`read`], stamped as `stamp` says: a replay of a recorded input
/// (`front::record`) gives the same envelope every time.
pub(crate) fn read_stamped(
    protocol: &Protocol,
    agent: &str,
    input: &str,
    event: Option<&str>,
    transport: &str,
    stamp: Stamp,
) -> Result<BridgeEvent, BridgeError> {
    let shape = |why: String| BridgeError::Shape {
        agent: protocol.label,
        why,
    };
    let Value::Object(mut fields) = serde_json::from_str::<Value>(input)? else {
        return Err(shape("the input must be a JSON object".into()));
    };
    // Read before the session, which may fall back to it.
    let given_id = given_id(protocol, &fields).map_err(shape)?;
    let (event, session) = event_and_session(protocol, &mut fields, event)?;
    let transcript = named_transcript(protocol, &fields);
    for f in protocol.dropped {
        fields.remove(*f);
    }
    let id = Reading {
        digest: Sha256::digest(input.as_bytes()).into(),
        agent,
    };
    let subagent =
        protocol
            .subagent_fields
            .and_then(|(id_field, type_field)| match fields.get(id_field) {
                Some(Value::String(id)) if !id.is_empty() => {
                    Some(subagent_of(fields.get(type_field).and_then(Value::as_str)))
                }
                _ => None,
            });
    let known = protocol.events.iter().find(|(name, _)| *name == event);
    let mapped = if let Some((_, kind)) = known {
        (protocol.map)(&event, kind, &fields, &id).map_err(|m| shape(m.to_string()))?
    } else {
        Mapped {
            kind: format!("custom.{}.{}", protocol.word, snake_case(&event)),
            step: None,
            data: Value::Object(fields.clone()),
        }
    };
    let data = with_where_from(protocol, mapped.data, &fields, &event, transport);
    let mut sequence = [0u8; 8];
    sequence.copy_from_slice(&id.digest[..8]);
    let coordinates = Coordinates {
        agent: agent.to_owned(),
        session,
        turn: protocol
            .turn_field
            .and_then(|f| fields.get(f))
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_owned),
        step: mapped.step,
        // JSON numbers above 2^53 lose precision in some readers: keep it small.
        sequence: u64::from_le_bytes(sequence) >> 12,
        ordinal: None,
        subagent,
    };
    let envelope_id = envelope_id(protocol, given_id.as_deref(), &id.digest, &stamp);
    let mut envelope =
        Envelope::draft(envelope_id, mapped.kind, stamp.timestamp, coordinates, data);
    envelope.validate()?;
    if let Some(t) = transcript {
        envelope = envelope.with_transcript(t);
    }
    Ok(BridgeEvent {
        name: event,
        envelope,
    })
}

/// The id the source gives the input's event ([`Protocol::id_field`]),
/// where it names one; what is missing when it must and does not.
fn given_id(protocol: &Protocol, fields: &Map<String, Value>) -> Result<Option<String>, String> {
    let Some(f) = protocol.id_field else {
        return Ok(None);
    };
    match fields.get(f).and_then(Value::as_str) {
        Some(id) if !id.is_empty() => Ok(Some(id.to_owned())),
        _ => Err(format!("`{f}` is missing")),
    }
}

/// The envelope's id: of the source's own id when it gives one (the same
/// on a retry, so one event), else of the input's digest and this reading.
fn envelope_id(
    protocol: &Protocol,
    given: Option<&str>,
    digest: &[u8; 32],
    stamp: &Stamp,
) -> String {
    match given {
        Some(given) => format!(
            "{}-{}",
            protocol.word,
            hex::encode(&Sha256::digest(given.as_bytes())[..12])
        ),
        None => format!(
            "{}-{}-{}",
            protocol.word,
            hex::encode(&digest[..8]),
            stamp.reading
        ),
    }
}

/// Longest transcript path taken from an input.
const MAX_TRANSCRIPT_PATH: usize = 4_096;

/// The transcript the input names, with the folder where the agent keeps
/// them for the user hookrt runs as (its `HOME`, or the agent's own
/// variable): the `transcript` grant reads it only inside that folder, so
/// an input can name no file outside it.
fn named_transcript(protocol: &Protocol, fields: &Map<String, Value>) -> Option<Transcript> {
    let places = protocol.transcripts.as_ref()?;
    let path = places
        .fields
        .iter()
        .find_map(|f| fields.get(*f).and_then(Value::as_str))
        .filter(|p| !p.is_empty() && p.len() <= MAX_TRANSCRIPT_PATH)?;
    let root = places.root(|var| std::env::var_os(var))?;
    Some(Transcript {
        path: path.into(),
        root,
    })
}

/// The event's name and the session of an input (both taken out of
/// `fields`): an agent whose input names its events must name it there;
/// the command line (or `?event=`) names it, as `event`, only for one whose
/// input does not.
fn event_and_session(
    protocol: &Protocol,
    fields: &mut Map<String, Value>,
    event: Option<&str>,
) -> Result<(String, String), BridgeError> {
    let shape = |why: String| BridgeError::Shape {
        agent: protocol.label,
        why,
    };
    let event = match protocol.event_field {
        Some(f) => take_text(fields, f).ok_or_else(|| shape(format!("`{f}` is missing")))?,
        None => event
            .filter(|e| !e.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| {
                shape("the input does not name its event: give it with --event".into())
            })?,
    };
    let session = protocol
        .session_fields
        .iter()
        .find_map(|f| take_text(fields, f))
        .ok_or_else(|| {
            shape(format!(
                "`{}` is missing",
                protocol.session_fields.join("` or `")
            ))
        })?;
    Ok((event, session))
}

/// An event's `data` without its null fields, with the fields every event
/// of the agent keeps and where it came from (`bridge`).
fn with_where_from(
    protocol: &Protocol,
    mut data: Value,
    fields: &Map<String, Value>,
    event: &str,
    transport: &str,
) -> Value {
    if let Some(obj) = data.as_object_mut() {
        obj.retain(|_, v| !v.is_null());
        for k in protocol.kept {
            if let Some(v) = fields.get(*k) {
                obj.insert((*k).to_owned(), v.clone());
            }
        }
        obj.insert(
            "bridge".into(),
            json!({"agent": protocol.agent, "event": event, "transport": transport}),
        );
    }
    data
}

/// The value of field `key`, or null.
pub fn field(fields: &Map<String, Value>, key: &str) -> Value {
    fields.get(key).cloned().unwrap_or(Value::Null)
}

/// The first value of the list under `key` (an agent's workspace
/// folders: the project), or null.
pub(crate) fn first_of(fields: &Map<String, Value>, key: &str) -> Value {
    fields
        .get(key)
        .and_then(|list| list.get(0))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The text field `key` an event needs, or what it lacks.
pub fn required_text(
    fields: &Map<String, Value>,
    key: &'static str,
    event: &str,
) -> Result<Value, Missing> {
    match fields.get(key) {
        Some(Value::String(t)) => Ok(Value::String(t.clone())),
        _ => Err(Missing {
            event: event.to_owned(),
            field: key,
        }),
    }
}

/// An input an agent gives as an object or as its JSON text (Copilot's
/// `toolArgs` in older releases, Cursor's MCP `tool_input`): the object.
pub(crate) fn object_of(value: Value) -> Value {
    match value {
        Value::String(text) => serde_json::from_str(&text).unwrap_or(Value::String(text)),
        other => other,
    }
}

/// `PostToolBatch` → `post_tool_batch`, `MCPCall` → `mcp_call`,
/// `beforeShellExecution` → `before_shell_execution`; anything but ASCII
/// letters and digits becomes `_`; at most [`MAX_EVENT_NAME`] characters;
/// `unnamed` when nothing is left.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().take(MAX_EVENT_NAME).collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1);
            let boundary = prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
                || (prev.is_some_and(|p| p.is_ascii_uppercase())
                    && next.is_some_and(|n| n.is_ascii_lowercase()));
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_');
    if out.is_empty() {
        "unnamed".to_owned()
    } else {
        out.to_owned()
    }
}

/// The subagent scope of a subagent type: lowercased, anything but `a-z`,
/// `0-9`, `_` and `-` made `-` (a folder name under `subagents/`).
pub(crate) fn subagent_of(agent_type: Option<&str>) -> String {
    let id: String = agent_type
        .unwrap_or("subagent")
        .chars()
        .take(MAX_EVENT_NAME)
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_' | '-') => c,
            _ => '-',
        })
        .collect();
    if id.is_empty() {
        "subagent".to_owned()
    } else {
        id
    }
}

/// What tells one reading of an input from another: when (nanoseconds),
/// which process and how many it read before, hashed to 16 hex digits.
fn invocation() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static READ: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut h = Sha256::new();
    h.update(now.to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(READ.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    hex::encode(&h.finalize()[..8])
}

fn take_text(fields: &mut Map<String, Value>, key: &str) -> Option<String> {
    match fields.remove(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_path_goes_beside_the_envelope_never_into_its_data() {
        let input = r#"{"hook_event_name":"Stop","session_id":"s1","transcript_path":"/home/u/.claude/projects/-w/s1.jsonl","cwd":"/w","stop_hook_active":false}"#;
        let e = read(
            &super::super::claude::PROTOCOL,
            "claude-code",
            input,
            None,
            "command",
        )
        .unwrap();
        assert!(e.envelope.data.value().get("transcript_path").is_none());
        let text = serde_json::to_string(&e.envelope).unwrap();
        assert!(!text.contains("s1.jsonl"), "never in its JSON: {text}");
        let read_back = Envelope::from_json(&text).unwrap();
        assert!(
            read_back.transcript().is_none(),
            "an event read from text names none"
        );
        if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            let t = e.envelope.transcript().expect("named beside it");
            assert_eq!(
                t.path,
                std::path::Path::new("/home/u/.claude/projects/-w/s1.jsonl")
            );
            if std::env::var_os("CLAUDE_CONFIG_DIR").is_none() {
                assert_eq!(t.root, std::path::Path::new(&home).join(".claude/projects"));
            }
        }
    }

    #[test]
    fn an_agents_transcripts_folder_is_in_its_users_home_or_its_own_variable() {
        let claude = super::super::claude::PROTOCOL.transcripts.as_ref().unwrap();
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| vars.iter().find(|(v, _)| *v == k).map(|(_, x)| (*x).into())
        };
        assert_eq!(
            claude.root(env(&[("HOME", "/home/u")])),
            Some("/home/u/.claude/projects".into())
        );
        assert_eq!(
            claude.root(env(&[
                ("HOME", "/home/u"),
                ("CLAUDE_CONFIG_DIR", "/etc/cc")
            ])),
            Some("/etc/cc/projects".into())
        );
        assert_eq!(claude.root(env(&[("HOME", "relative")])), None);
        assert_eq!(claude.root(env(&[])), None);
    }

    #[test]
    fn event_names_of_every_casing_become_snake_case() {
        for (name, want) in [
            ("PostToolBatch", "post_tool_batch"),
            ("MCPServerReady", "mcp_server_ready"),
            ("beforeShellExecution", "before_shell_execution"),
            ("afterMCPExecution", "after_mcp_execution"),
            ("Weird Name!", "weird_name"),
            ("!!!", "unnamed"),
        ] {
            assert_eq!(snake_case(name), want);
        }
    }
}
