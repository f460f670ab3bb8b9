//! Ported from karanb192-protect-secrets (github.com/karanb192/claude-code-hooks@811aeb7: plugins/protect-secrets/protect-secrets.js).
//!
//! `PreToolUse` on `Read|Edit|Write|Bash` (world 0.4.0, the `read` grant):
//! denies a tool call that would touch a secret. The original keeps its own
//! list of secret file names; this port asks the host, whose `read` grant
//! refuses the same files (`.env*`, keys, credentials, the agents' own
//! settings, and the folder's own deny patterns): a file the hook may not
//! read, the agent may not touch either. A file it may read is read and
//! scanned, so a key pasted into an ordinary file is caught too. A shell
//! command naming a secret file, or printing the environment, is denied as
//! in the original.

use hookrt_sdk::prelude::*;
use hookrt_sdk::read::ReadError;

/// What a shell command may not name (the original's list, abridged).
const SECRET_WORDS: [&str; 8] = [
    ".env",
    "id_rsa",
    "id_ed25519",
    ".ssh/",
    ".aws/credentials",
    ".netrc",
    ".git-credentials",
    "printenv",
];

#[derive(Default)]
pub struct ProtectSecrets;

#[hookrt_sdk::hook]
impl Hook for ProtectSecrets {
    type Config = NoConfig;

    fn actions_requested(
        &mut self,
        data: ActionsRequested,
        event: &Event,
        _cx: &Context,
    ) -> HookResult<Vec<Approval>> {
        let cwd = event
            .data_json()?
            .get("cwd")
            .and_then(|c| c.as_str())
            .unwrap_or("")
            .to_owned();
        Ok(data.actions.iter().map(|a| verdict(a, &cwd)).collect())
    }
}

fn verdict(action: &RequestedAction, cwd: &str) -> Approval {
    let text = |key: &str| action.input.get(key).and_then(|v| v.as_str());
    match action.tool.as_str() {
        "Bash" => match SECRET_WORDS
            .iter()
            .find(|w| text("command").is_some_and(|c| c.contains(**w)))
        {
            Some(word) => Approval::deny(format!(
                "protect-secrets: the command names `{word}`, which holds or prints secrets"
            )),
            None => Approval::Abstain,
        },
        "Read" | "Edit" | "MultiEdit" | "Write" => match text("file_path") {
            Some(path) => file_verdict(path, cwd),
            None => Approval::Abstain,
        },
        _ => Approval::Abstain,
    }
}

/// The call on the file at `path` (absolute, as Claude Code names it, or
/// relative to the project), judged by what the host lets this hook read.
fn file_verdict(path: &str, cwd: &str) -> Approval {
    let relative = match path.strip_prefix(cwd) {
        Some(rest) if !cwd.is_empty() => rest.trim_start_matches('/'),
        _ if path.starts_with('/') => {
            return Approval::deny(format!(
                "protect-secrets: `{path}` is outside the project"
            ));
        }
        _ => path,
    };
    match hookrt_sdk::read::read_file(relative) {
        Err(ReadError::Denied(why)) => {
            Approval::deny(format!("protect-secrets: `{relative}` is off limits ({why})"))
        }
        Ok(bytes) => match secret_in(&String::from_utf8_lossy(&bytes)) {
            Some(kind) => Approval::deny(format!(
                "protect-secrets: `{relative}` holds what looks like {kind}"
            )),
            None => Approval::Abstain,
        },
        // A new file, or one too large to scan: the agent's own rules decide.
        Err(_) => Approval::Abstain,
    }
}

/// The kind of secret `text` seems to hold.
fn secret_in(text: &str) -> Option<&'static str> {
    if text.contains("-----BEGIN") && text.contains("PRIVATE KEY-----") {
        return Some("a private key");
    }
    let token = |prefix: &str, len: usize| {
        text.match_indices(prefix).any(|(i, _)| {
            text[i + prefix.len()..]
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || b"_-".contains(b))
                .count()
                >= len
        })
    };
    if token("AKIA", 16) {
        return Some("an AWS access key");
    }
    if token("ghp_", 30) || token("github_pat_", 30) {
        return Some("a GitHub token");
    }
    if token("xoxb-", 10) || token("xoxp-", 10) {
        return Some("a Slack token");
    }
    None
}
