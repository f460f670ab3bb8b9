//! The `audit-log` pack: one JSON line per event it is set to watch,
//! appended to one file of the project through the `write` grant: the
//! time, agent, session and kind, each tool call's tool and what it runs or
//! touches, each result's status, a prompt's size. A prompt's text is never
//! written; secrets the `secrets` detectors find are masked as
//! `[redacted:KIND]`. docs/packs/audit-log.md.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Invalid;
use crate::secrets::Scanner;
use crate::tools;

/// `[packs.audit-log]` in `hookrt.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// The file, relative to the project (its folders are made).
    pub file: String,
    /// The most bytes the file may grow to; writes past it are refused.
    pub max_file_bytes: u64,
    /// The event kinds written.
    pub kinds: Vec<String>,
}

/// The kinds written by default: tool calls and results, prompts,
/// permission requests, turns' ends, sessions.
const KINDS: &[&str] = &[
    "session.started",
    "prompt.submitted",
    "actions.requested",
    "permission.requested",
    "action.result",
    "turn.stopping",
    "session.completed",
];

/// The most a file may be set to grow to (the `write` grant's cap).
pub const MAX_FILE_BYTES: u64 = 1 << 30;

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            file: ".hookrt/audit.jsonl".into(),
            max_file_bytes: 16 << 20,
            kinds: KINDS.iter().map(|k| k.to_string()).collect(),
        }
    }
}

impl Settings {
    /// Checks the file (relative, inside the project) and the cap.
    pub fn check(&self) -> Result<(), Invalid> {
        let f = &self.file;
        if f.is_empty()
            || f.starts_with('/')
            || f.starts_with('~')
            || f.split('/').any(|p| p == ".." || p.is_empty())
        {
            return Err(Invalid::new(
                "file",
                format!("`file` `{f}` is not a path inside the project (relative, no `..`)"),
            ));
        }
        if self.max_file_bytes == 0 || self.max_file_bytes > MAX_FILE_BYTES {
            return Err(Invalid::new(
                "max_file_bytes",
                format!("`max_file_bytes` is between 1 and {MAX_FILE_BYTES}"),
            ));
        }
        Ok(())
    }
}

/// The line (with its newline) an event of `kind` gets, or `None` when the
/// settings do not write that kind. `data` is the event's data.
pub fn record(
    settings: &Settings,
    scanner: &Scanner,
    event: Event<'_>,
    data: &Value,
) -> Option<String> {
    if !settings.kinds.iter().any(|k| k == event.kind) {
        return None;
    }
    let text = |key: &str| data.get(key).and_then(Value::as_str).unwrap_or("");
    let detail = match event.kind {
        "actions.requested" => {
            let calls: Vec<Value> = data
                .get("actions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|a| call(scanner, a))
                .collect();
            json!({"calls": calls})
        }
        "action.result" => {
            json!({"tool": text("tool"), "call_id": text("call_id"), "status": text("status")})
        }
        "permission.requested" => json!({"tool": text("tool")}),
        "prompt.submitted" => {
            let prompt = text("prompt");
            json!({"prompt_bytes": prompt.len(), "secrets": scanner.find(prompt)})
        }
        _ => json!({}),
    };
    let mut line = json!({
        "time": event.timestamp,
        "agent": event.agent,
        "session": event.session,
        "kind": event.kind,
        "event": event.id,
    });
    if let (Some(l), Value::Object(d)) = (line.as_object_mut(), detail) {
        l.extend(d);
    }
    Some(format!("{line}\n"))
}

/// What the log says of one event besides its details.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    /// Its kind.
    pub kind: &'a str,
    /// Its id.
    pub id: &'a str,
    /// When it happened (RFC 3339).
    pub timestamp: &'a str,
    /// The agent.
    pub agent: &'a str,
    /// The session.
    pub session: &'a str,
}

/// One requested call: its tool and id, and the command it runs or the
/// paths it touches, masked.
fn call(scanner: &Scanner, action: &Value) -> Value {
    let tool = action.get("tool").and_then(Value::as_str).unwrap_or("");
    let id = action.get("call_id").and_then(Value::as_str).unwrap_or("");
    let input = action.get("input").cloned().unwrap_or(Value::Null);
    let mut out = json!({"tool": tool, "call_id": id});
    if let Some(command) = tools::shell_command(tool, &input) {
        out["command"] = scanner.mask(&command).into();
    }
    let paths: Vec<String> = tools::file_paths(tool, &input)
        .into_iter()
        .map(|(_, p)| scanner.mask(&p))
        .collect();
    if !paths.is_empty() {
        out["paths"] = paths.into();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanner() -> Scanner {
        Scanner::new(crate::secrets::Settings::default()).unwrap()
    }

    const EVENT: Event<'static> = Event {
        kind: "actions.requested",
        id: "e1",
        timestamp: "2026-12-06T12:00:00Z",
        agent: "claude-code",
        session: "s1",
    };

    #[test]
    fn a_call_is_written_with_its_command_masked_and_a_prompt_by_its_size_only() {
        let key = format!("{}{}", "AKIA", "IOSFODNN7EXAMPLE");
        let data = json!({"actions": [{"call_id": "c1", "tool": "Bash", "input": {"command": format!("aws --key {key} s3 ls")}}]});
        let line = record(&Settings::default(), &scanner(), EVENT, &data).unwrap();
        assert!(line.ends_with('\n'));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            v["calls"][0]["command"],
            "aws --key [redacted:aws-access-key] s3 ls"
        );
        assert_eq!(v["agent"], "claude-code");
        assert!(!line.contains(&key));
        let prompt = Event {
            kind: "prompt.submitted",
            ..EVENT
        };
        let line = record(
            &Settings::default(),
            &scanner(),
            prompt,
            &json!({"prompt": format!("use {key}")}),
        )
        .unwrap();
        assert!(
            line.contains("\"prompt_bytes\":24")
                && line.contains("aws-access-key")
                && !line.contains("use "),
            "{line}"
        );
        let other = Event {
            kind: "message.completed",
            ..EVENT
        };
        assert!(record(&Settings::default(), &scanner(), other, &json!({})).is_none());
    }

    #[test]
    fn the_file_and_the_cap_are_checked_by_key() {
        for bad in ["/etc/x", "../x", "a//b", "", "~/x"] {
            let s = Settings {
                file: bad.into(),
                ..Settings::default()
            };
            assert_eq!(s.check().unwrap_err().key, "file", "{bad}");
        }
        let s = Settings {
            max_file_bytes: 0,
            ..Settings::default()
        };
        assert_eq!(s.check().unwrap_err().key, "max_file_bytes");
    }
}
