//! Ported from copilot-secrets-scanner (github.com/github/awesome-copilot@ab7544d: hooks/secrets-scanner/scan-secrets.sh).
//!
//! Copilot CLI, `sessionEnd` (world 0.4.0, the `read` and `state` grants):
//! scans the files the session modified for secrets and reports each
//! finding (file, line, kind; never the secret). The original asks git
//! which files changed; this port tracks the paths the agent's edit and
//! create tools wrote (from their `postToolUse`, kept in `state`), then
//! reads each through the `read` grant at the session's end. Files the
//! host's deny patterns refuse (`.env*`, keys) are secret by name already:
//! they are reported as such without being read. Like the original's
//! default `warn` mode, it reports and does not block (a session's end
//! cannot be blocked).

use hookrt_sdk::prelude::*;
use hookrt_sdk::read::ReadError;

/// The `state` key of the paths the session wrote.
const EDITED: &str = "edited";
/// Most paths tracked in one session.
const MAX_TRACKED: usize = 500;

#[derive(Default)]
pub struct SecretsScanner;

#[hookrt_sdk::hook]
impl Hook for SecretsScanner {
    type Config = NoConfig;

    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {
        let data = event.data_json()?;
        match event.kind() {
            "action.result" => track(&data),
            "session.completed" => scan(),
            _ => Ok(()),
        }
    }
}

/// Remembers the file an edit or a create wrote, relative to the project.
fn track(data: &serde_json::Value) -> HookResult {
    let text = |v: &serde_json::Value, key: &str| v.get(key).and_then(|p| p.as_str()).map(str::to_owned);
    let Some(input) = data.get("input") else {
        return Ok(());
    };
    let Some(path) = text(input, "path").or_else(|| text(input, "file_path")) else {
        return Ok(());
    };
    let cwd = text(data, "cwd").unwrap_or_default();
    let relative = match path.strip_prefix(&cwd) {
        Some(rest) if !cwd.is_empty() => rest.trim_start_matches('/').to_owned(),
        _ => path,
    };
    let mut edited: Vec<String> = state::get_json(EDITED)?.unwrap_or_default();
    if !edited.contains(&relative) && edited.len() < MAX_TRACKED {
        edited.push(relative);
        state::set_json(EDITED, &edited)?;
    }
    Ok(())
}

/// Reads every tracked file and reports what looks like a secret.
fn scan() -> HookResult {
    let edited: Vec<String> = state::get_json(EDITED)?.unwrap_or_default();
    let mut found = 0;
    for path in &edited {
        match hookrt_sdk::read::read_text(path) {
            Ok(text) => {
                for (n, line) in text.lines().enumerate() {
                    if let Some(kind) = secret_in(line) {
                        found += 1;
                        let at = (n + 1).to_string();
                        log::warn("secret found", &[("file", path.as_str()), ("line", &at), ("kind", kind)]);
                    }
                }
            }
            Err(ReadError::Denied(why)) => {
                found += 1;
                log::warn("secret file written", &[("file", path.as_str()), ("why", why.as_str())]);
            }
            Err(_) => {}
        }
    }
    let (scanned, found) = (edited.len().to_string(), found.to_string());
    log::info("scanned", &[("files", &scanned), ("findings", &found)]);
    state::set_json(EDITED, &Vec::<String>::new())
}

/// The kind of secret `line` seems to hold.
fn secret_in(line: &str) -> Option<&'static str> {
    if line.contains("-----BEGIN") && line.contains("PRIVATE KEY-----") {
        return Some("private key");
    }
    let token = |prefix: &str, len: usize| {
        line.match_indices(prefix).any(|(i, _)| {
            line[i + prefix.len()..]
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || b"_-".contains(b))
                .count()
                >= len
        })
    };
    if token("AKIA", 16) {
        return Some("aws access key");
    }
    if token("ghp_", 30) || token("github_pat_", 30) {
        return Some("github token");
    }
    if token("xoxb-", 10) || token("xoxp-", 10) {
        return Some("slack token");
    }
    None
}
