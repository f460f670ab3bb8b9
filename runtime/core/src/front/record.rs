//! Recordings of what agents send: each hook input as the agent sent it, one
//! JSON line each, and the same input read again, the same every time.
//!
//! `hookrt hook --record FILE` and `hookrt serve --record FILE` append a
//! [`Recorded`] line per input ([`append`]) before deciding it, its strings
//! masked by the folder's redaction patterns; `hookrt test --agent NAME
//! --events FILE` reads each line back through the same bridge
//! ([`Recorded::event`]), stamped from the line (its `received` time, its
//! line number as the reading) so a replay gives the same envelopes, and so
//! the same expectations, every time. A line that is not a recording is
//! taken as the agent's bare input, as an author pastes it from the agent's
//! docs.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::bridge::{Bridge, BridgeError, BridgeEvent, Stamp};
use crate::sandbox::Redactor;

/// The version of a recording's line layout (its `hookrt_record` key).
pub(crate) const RECORD_VERSION: u64 = 1;

/// When a bare input (not a recording) was received, for its replay: the
/// replay's pinned wall clock.
pub(crate) const BARE_RECEIVED: &str = "2026-01-01T00:00:00Z";

/// One hook input as an agent sent it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Recorded {
    /// Always [`RECORD_VERSION`]: what tells a recording from a bare input.
    pub hookrt_record: u64,
    /// The agent whose bridge read it (`claude-code`, `codex`, …).
    pub agent: String,
    /// The name hooks saw (`coordinates.agent`), when not the agent's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The event the hook entry named, for an agent whose input does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// How it came: `command` or `http`.
    pub transport: String,
    /// When it was received (RFC 3339, UTC).
    pub received: String,
    /// The input: its JSON, every string masked; a string when it was not
    /// JSON (masked too).
    pub input: Value,
}

/// Why a recording could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file could not be opened, locked or written.
    #[error("cannot append to the recording {path}: {source}")]
    Write {
        /// The recording.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// A line is neither a recording nor JSON.
    #[error("line {line}: {why}")]
    Line {
        /// Its number, from 1.
        line: usize,
        /// What is wrong.
        why: String,
    },
    /// A line's input is not one its agent's bridge reads.
    #[error("line {line}: {source}")]
    Input {
        /// Its number, from 1.
        line: usize,
        /// The bridge's reason.
        source: BridgeError,
    },
}

impl Recorded {
    /// `input` as `bridge` received it now over `transport`, masked by
    /// `redactor`.
    pub fn new(
        bridge: Bridge,
        name: Option<&str>,
        event: Option<&str>,
        transport: &str,
        input: &str,
        redactor: &Redactor,
    ) -> Recorded {
        let input = match serde_json::from_str::<Value>(input) {
            Ok(value) => masked(value, redactor),
            Err(_) => Value::String(redactor.mask(input).into_owned()),
        };
        Recorded {
            hookrt_record: RECORD_VERSION,
            agent: bridge.name().to_owned(),
            name: name.filter(|n| *n != bridge.name()).map(str::to_owned),
            event: event.map(str::to_owned),
            transport: transport.to_owned(),
            received: Stamp::now().timestamp,
            input,
        }
    }

    /// Line `number` (from 1) of a recording: a [`Recorded`] line, or a
    /// bare input of `agent` (refused when no agent is given); the event
    /// named by `event` where the input does not name it.
    pub fn parse(
        text: &str,
        number: usize,
        agent: Option<Bridge>,
        event: Option<&str>,
    ) -> Result<Recorded, RecordError> {
        let wrong = |why: String| RecordError::Line { line: number, why };
        let value: Value =
            serde_json::from_str(text).map_err(|e| wrong(format!("not JSON: {e}")))?;
        if value.get("hookrt_record").is_some() {
            let recorded: Recorded = serde_json::from_value(value)
                .map_err(|e| wrong(format!("not a recording: {e}")))?;
            if recorded.hookrt_record != RECORD_VERSION {
                return Err(wrong(format!(
                    "a recording of layout {}, which this hookrt does not read (it reads {RECORD_VERSION})",
                    recorded.hookrt_record
                )));
            }
            if let Some(agent) = agent.filter(|a| a.name() != recorded.agent) {
                return Err(wrong(format!(
                    "recorded from {}, not {}: replay it with --agent {}",
                    recorded.agent,
                    agent.name(),
                    recorded.agent
                )));
            }
            return Ok(recorded);
        }
        let Some(agent) = agent else {
            return Err(wrong(
                "an agent's bare hook input: name the agent with --agent".to_owned(),
            ));
        };
        Ok(Recorded {
            hookrt_record: RECORD_VERSION,
            agent: agent.name().to_owned(),
            name: None,
            event: event.map(str::to_owned),
            transport: "command".to_owned(),
            received: BARE_RECEIVED.to_owned(),
            input: value,
        })
    }

    /// The event it was, read again by its agent's bridge as line `number`
    /// (from 1) of its recording: stamped with its `received` time and its
    /// line number, and naming no transcript (the `transcript` grant finds
    /// none), so every replay reads the same envelope.
    pub fn event(&self, number: usize) -> Result<BridgeEvent, RecordError> {
        let Some(bridge) = Bridge::named(&self.agent) else {
            return Err(RecordError::Line {
                line: number,
                why: format!(
                    "recorded from `{}`, an agent this hookrt does not know (it knows {})",
                    self.agent,
                    Bridge::names()
                ),
            });
        };
        let input = match &self.input {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let stamp = Stamp {
            timestamp: self.received.clone(),
            reading: format!("{number:016x}"),
        };
        let name = self.name.as_deref().unwrap_or(bridge.name());
        let mut read = bridge
            .read_stamped(name, &input, self.event.as_deref(), &self.transport, stamp)
            .map_err(|source| RecordError::Input {
                line: number,
                source,
            })?;
        // The file the agent named then is not read now: a replay reads
        // nothing it did not record, so it is the same everywhere.
        read.envelope = read.envelope.without_transcript();
        Ok(read)
    }
}

/// `value` with every string in it, keys included, masked by `redactor`.
fn masked(value: Value, redactor: &Redactor) -> Value {
    match value {
        Value::String(s) => Value::String(redactor.mask(&s).into_owned()),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| masked(v, redactor)).collect())
        }
        Value::Object(fields) => {
            let mut out = Map::new();
            for (key, v) in fields {
                // A key is masked too (as log field keys are); two keys
                // masked alike both stay, the second numbered.
                let masked_key = redactor.mask(&key).into_owned();
                let mut unique = masked_key.clone();
                let mut n = 2;
                while out.contains_key(&unique) {
                    unique = format!("{masked_key}#{n}");
                    n += 1;
                }
                out.insert(unique, masked(v, redactor));
            }
            Value::Object(out)
        }
        other => other,
    }
}

/// Appends `recorded` to the recording at `path` as one line: made
/// readable by its owner only, never through a link planted at its name,
/// and whole while other hook processes append to it (the file is locked
/// for the write).
pub fn append(path: &Path, recorded: &Recorded) -> Result<(), RecordError> {
    let fail = |source| RecordError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut line = serde_json::to_vec(recorded).map_err(|e| fail(e.into()))?;
    line.push(b'\n');
    let file: File = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(fail)?;
    if !file.metadata().map_err(fail)?.is_file() {
        return Err(fail(std::io::Error::other("not a regular file")));
    }
    file.lock().map_err(fail)?;
    let written = (&file).write_all(&line);
    let _ = file.unlock();
    written.map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude() -> Bridge {
        Bridge::named("claude-code").unwrap()
    }

    const INPUT: &str = r#"{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"curl -H 'Authorization: Bearer abcdef123456' x"},"tool_use_id":"toolu_1"}"#;

    #[test]
    fn a_recording_masks_every_string_and_replays_the_same_envelope_every_time() {
        let r = Recorded::new(claude(), None, None, "command", INPUT, &Redactor::default());
        let command = r.input["tool_input"]["command"].as_str().unwrap();
        assert!(!command.contains("abcdef123456"), "{command}");
        assert!(command.contains("[redacted:bearer-token]"), "{command}");
        let line = serde_json::to_string(&r).unwrap();
        let back = Recorded::parse(&line, 3, Some(claude()), None).unwrap();
        assert_eq!(back, r);
        let (a, b) = (back.event(3).unwrap(), back.event(3).unwrap());
        assert_eq!(a.envelope.id, b.envelope.id);
        assert!(
            a.envelope.id.ends_with("-0000000000000003"),
            "{}",
            a.envelope.id
        );
        assert_eq!(a.envelope.timestamp, r.received);
        assert_eq!(a.name, "PreToolUse");
        assert_ne!(back.event(4).unwrap().envelope.id, a.envelope.id);
        assert!(
            a.envelope.transcript().is_none(),
            "a replay reads no transcript"
        );
    }

    #[test]
    fn a_secret_in_a_key_is_masked_and_no_field_is_lost() {
        let input = r#"{"hook_event_name":"Notification","session_id":"s","env":{"sk-live-aaaaaaaaaaaaaaaa":1,"sk-live-bbbbbbbbbbbbbbbb":2}}"#;
        let r = Recorded::new(claude(), None, None, "command", input, &Redactor::default());
        let text = serde_json::to_string(&r).unwrap();
        assert!(
            !text.contains("aaaaaaaa") && !text.contains("bbbbbbbb"),
            "{text}"
        );
        assert_eq!(r.input["env"].as_object().unwrap().len(), 2, "{text}");
    }

    #[test]
    fn a_bare_input_needs_its_agent_and_a_recording_its_own() {
        let bare = Recorded::parse(INPUT, 1, None, None).unwrap_err();
        assert!(bare.to_string().contains("--agent"), "{bare}");
        let r = Recorded::parse(INPUT, 1, Some(claude()), None).unwrap();
        assert_eq!(r.received, BARE_RECEIVED);
        assert_eq!(r.event(1).unwrap().envelope.kind, "actions.requested");
        let recorded = serde_json::to_string(&r).unwrap();
        let codex = Bridge::named("codex").unwrap();
        let e = Recorded::parse(&recorded, 2, Some(codex), None).unwrap_err();
        assert!(e.to_string().contains("--agent claude-code"), "{e}");
        let newer = recorded.replace("\"hookrt_record\":1", "\"hookrt_record\":9");
        let e = Recorded::parse(&newer, 5, None, None).unwrap_err();
        assert!(
            e.to_string().starts_with("line 5: a recording of layout 9"),
            "{e}"
        );
    }

    #[test]
    fn appending_refuses_a_planted_link_and_keeps_the_file_private() {
        let dir = tempfile::tempdir().unwrap();
        let r = Recorded::new(claude(), None, None, "command", INPUT, &Redactor::default());
        let path = dir.path().join("rec.jsonl");
        append(&path, &r).unwrap();
        append(&path, &r).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "").unwrap();
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = append(&link, &r).unwrap_err();
        assert!(e.to_string().contains("link.jsonl"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
    }
}
