//! `hookrt claude install DIR`: makes hookrt the hook of every Claude Code
//! event in a settings file, in one command.
//!
//! The file (`.claude/settings.json` of the working folder with
//! `--project`, the default; `~/.claude/settings.json` with `--user`; any
//! file with `--settings`) is merged, not overwritten: every key and every
//! hook of the user's stays, hookrt's own entries (a command running
//! `claude-hook`, or an `http` hook on `/v1/claude-code`) are replaced by
//! the new ones, so a second run changes nothing. Each event gets one
//! entry:
//!
//! - the command transport: `hookrt claude-hook DIR --deadline-ms 10000`
//!   in exec form (no shell), with a `timeout` of 15 s above the deadline;
//! - `--http URL`: an `http` hook on `URL/v1/claude-code?event=EVENT`
//!   (`budget_ms=8000` for gates) with the bearer token from
//!   `$HOOKRT_TOKEN` (`allowedEnvVars`), a `timeout` of 10 s; but
//!   `SessionStart` and `Setup`, which take no `http` hooks, get the command;
//! - tool events match every tool (`"*"`); the gates (`CLAUDE_GATES`: the
//!   tool calls, permission requests, prompts, compactions, tasks and config
//!   changes) also say `onFailure: "block"`, so a hookrt that cannot start
//!   or answer blocks what the event guards in Claude Code too.
//!
//! `--dry-run` prints the change as a unified diff and writes nothing.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use hookrt::front::bridge::Bridge;
use hookrt::front::bridge::claude::CLAUDE_EVENTS;
use serde_json::{Map, Value, json};

/// What a command hook's `--deadline-ms` is, and its `timeout` (seconds).
const COMMAND_DEADLINE_MS: u64 = 10_000;
const COMMAND_TIMEOUT_S: u64 = 15;
/// A gate's `budget_ms` over HTTP, and the entry's `timeout` (seconds).
const HTTP_BUDGET_MS: u64 = 8_000;
const HTTP_TIMEOUT_S: u64 = 10;
/// The environment variable Claude Code fills the bearer token from.
pub const TOKEN_ENV: &str = "HOOKRT_TOKEN";

/// Claude Code events whose matcher is a tool name.
const TOOL_EVENTS: [&str; 6] = [
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "PermissionDenied",
    "PreSkillShellCommand",
];

#[derive(clap::Subcommand)]
pub enum ClaudeCommand {
    /// Make hookrt the hook of every Claude Code event in a settings file
    /// (merged: the user's other hooks stay; a second run changes nothing).
    Install(InstallArgs),
}

#[derive(clap::Args)]
pub struct InstallArgs {
    /// The agent folder whose hooks run.
    pub dir: PathBuf,
    /// Answer over HTTP: a running `hookrt serve` at this URL
    /// (`http://127.0.0.1:7700`) instead of a process per event.
    #[arg(long, value_name = "URL")]
    pub http: Option<String>,
    /// Write `.claude/settings.json` of the working folder (the default).
    #[arg(long, conflicts_with_all = ["user", "settings"])]
    pub project: bool,
    /// Write `~/.claude/settings.json`.
    #[arg(long, conflicts_with = "settings")]
    pub user: bool,
    /// Write this settings file.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Print the change as a diff; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn claude(cmd: ClaudeCommand) -> Result<ExitCode> {
    match cmd {
        ClaudeCommand::Install(args) => install(&args),
    }
}

fn install(args: &InstallArgs) -> Result<ExitCode> {
    let dir = std::fs::canonicalize(&args.dir)
        .with_context(|| format!("the agent folder {} does not exist", args.dir.display()))?;
    let file = settings_file(args)?;
    let old = hookrt::hooks::read_plain_file(&file)
        .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let mut settings: Value = match &old {
        Some(text) if !text.trim().is_empty() => serde_json::from_str(text)
            .with_context(|| format!("{} is not JSON; fix it or move it away", file.display()))?,
        _ => json!({}),
    };
    let transport = Transport {
        hookrt: std::env::current_exe()
            .context("cannot tell where this hookrt binary is")?
            .to_string_lossy()
            .into_owned(),
        dir: dir.to_string_lossy().into_owned(),
        http: args
            .http
            .as_ref()
            .map(|u| u.trim_end_matches('/').to_owned()),
    };
    let kept = merge(&mut settings, &transport)
        .with_context(|| format!("{}: cannot merge hookrt's hooks", file.display()))?;
    let new = format!("{}\n", serde_json::to_string_pretty(&settings)?);
    let old = old.unwrap_or_default();
    if args.dry_run {
        let diff = similar::TextDiff::from_lines(&old, &new);
        let name = file.display().to_string();
        print!(
            "{}",
            diff.unified_diff().context_radius(3).header(&name, &name)
        );
        return Ok(ExitCode::SUCCESS);
    }
    if old == new {
        println!("{}: already up to date", file.display());
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    hookrt::hooks::replace_file(&file, new.as_bytes())
        .with_context(|| format!("cannot write {}", file.display()))?;
    println!(
        "{}: hookrt is the hook of {} Claude Code events ({}; not {}, whose hook must create the worktree); {kept} other hook entries kept",
        file.display(),
        installed().count(),
        transport.describe(),
        NOT_INSTALLED.join(", "),
    );
    Ok(ExitCode::SUCCESS)
}

fn settings_file(args: &InstallArgs) -> Result<PathBuf> {
    if let Some(file) = &args.settings {
        return Ok(file.clone());
    }
    if args.user {
        let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else {
            bail!(
                "--user needs HOME to find ~/.claude/settings.json; give --settings FILE instead"
            );
        };
        return Ok(Path::new(&home).join(".claude/settings.json"));
    }
    Ok(std::env::current_dir()?.join(".claude/settings.json"))
}

/// Claude Code events hookrt is never the hook of. A `WorktreeCreate` hook
/// replaces Claude Code's own `git worktree add`: it must create the worktree
/// and print its path, which a sandboxed hook (no filesystem) cannot, so
/// being its hook would break `claude --worktree` and the `EnterWorktree`
/// tool.
pub(crate) const NOT_INSTALLED: [&str; 1] = ["WorktreeCreate"];

/// The events `claude install` makes hookrt the hook of: every one of the
/// pinned Claude Code's but [`NOT_INSTALLED`].
fn installed() -> impl Iterator<Item = &'static str> {
    CLAUDE_EVENTS
        .iter()
        .map(|(event, _)| *event)
        .filter(|e| !NOT_INSTALLED.contains(e))
}

/// Claude Code events whose hooks may only be commands (or MCP tools): they
/// get the command even with `--http`.
const COMMAND_ONLY: [&str; 2] = ["SessionStart", "Setup"];

/// How Claude Code reaches hookrt: the hookrt binary and the agent folder
/// (a process per event), or `hookrt serve` at a base URL.
struct Transport {
    hookrt: String,
    dir: String,
    http: Option<String>,
}

impl Transport {
    fn describe(&self) -> String {
        match &self.http {
            None => format!("hookrt claude-hook {}", self.dir),
            Some(url) => format!(
                "{url}/v1/claude-code, token from ${TOKEN_ENV}; {} by hookrt claude-hook {}",
                COMMAND_ONLY.join(" and "),
                self.dir
            ),
        }
    }

    /// The hook entry of `event`.
    fn hook(&self, event: &str) -> Value {
        let gate = Bridge::ClaudeCode.is_gate(event);
        let url = self
            .http
            .as_ref()
            .filter(|_| !COMMAND_ONLY.contains(&event));
        let mut hook = match url {
            None => json!({
                "type": "command",
                "command": self.hookrt,
                "args": ["claude-hook", self.dir, "--deadline-ms", COMMAND_DEADLINE_MS.to_string()],
                "timeout": COMMAND_TIMEOUT_S,
            }),
            Some(url) => {
                let budget = if gate {
                    format!("&budget_ms={HTTP_BUDGET_MS}")
                } else {
                    String::new()
                };
                json!({
                    "type": "http",
                    "url": format!("{url}/v1/claude-code?event={event}{budget}"),
                    "headers": {"Authorization": format!("Bearer ${TOKEN_ENV}")},
                    "allowedEnvVars": [TOKEN_ENV],
                    "timeout": HTTP_TIMEOUT_S,
                })
            }
        };
        if gate {
            hook["onFailure"] = json!("block");
        }
        hook
    }
}

/// Whether `hook` is one of hookrt's: a command running `claude-hook`, or
/// an `http` hook on `/v1/claude-code`.
fn is_ours(hook: &Value) -> bool {
    let command = hook["args"]
        .as_array()
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        == Some("claude-hook")
        || hook["command"]
            .as_str()
            .is_some_and(|c| c.contains(" claude-hook "));
    let http = hook["url"]
        .as_str()
        .is_some_and(|u| u.contains("/v1/claude-code"));
    command || http
}

/// Puts hookrt's entry on every event of `settings["hooks"]`, replacing
/// hookrt's earlier ones and keeping every other; returns how many other
/// hook entries there are.
fn merge(settings: &mut Value, transport: &Transport) -> Result<usize> {
    let Some(root) = settings.as_object_mut() else {
        bail!("the settings are not a JSON object");
    };
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(hooks) = hooks.as_object_mut() else {
        bail!("`hooks` is not an object");
    };
    let mut kept = 0;
    // Drop hookrt's entries everywhere first (also under events this
    // Claude Code no longer has), keeping the user's.
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            bail!("`hooks.{event}` is not a list");
        };
        for group in groups.iter_mut() {
            if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                list.retain(|h| !is_ours(h));
                kept += list.len();
            }
        }
        groups.retain(|g| g["hooks"].as_array().is_none_or(|l| !l.is_empty()));
    }
    hooks.retain(|_, groups| groups.as_array().is_some_and(|g| !g.is_empty()));
    for event in installed() {
        let mut group = Map::new();
        if TOOL_EVENTS.contains(&event) {
            group.insert("matcher".into(), json!("*"));
        }
        group.insert("hooks".into(), json!([transport.hook(event)]));
        hooks
            .entry(event)
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .expect("a list: checked or made above")
            .push(Value::Object(group));
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command() -> Transport {
        Transport {
            hookrt: "/usr/bin/hookrt".into(),
            dir: "/agent".into(),
            http: None,
        }
    }

    #[test]
    fn a_merge_keeps_the_users_hooks_and_replaces_hookrts_own() {
        let mut s = json!({
            "model": "opus",
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
                "Retired": [{"hooks": [{"type": "command", "command": "/old/hookrt", "args": ["claude-hook", "/agent"]}]}]
            }
        });
        assert_eq!(merge(&mut s, &command()).unwrap(), 1);
        assert_eq!(s["model"], "opus");
        assert!(
            s["hooks"].get("Retired").is_none(),
            "hookrt's old entry is gone"
        );
        let pre = s["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[0]["hooks"][0]["command"], "./guard.sh");
        assert_eq!(pre[1]["matcher"], "*");
        assert_eq!(pre[1]["hooks"][0]["onFailure"], "block");
        assert_eq!(s["hooks"].as_object().unwrap().len(), installed().count());
        assert!(s["hooks"].get("WorktreeCreate").is_none());
        let once = s.clone();
        let http = Transport {
            http: Some("http://127.0.0.1:7700".into()),
            ..command()
        };
        merge(&mut s, &http).unwrap();
        assert_eq!(s["hooks"]["SessionStart"][0]["hooks"][0]["type"], "command");
        assert_eq!(s["hooks"]["Stop"][0]["hooks"][0]["type"], "http");
        merge(&mut s, &command()).unwrap();
        assert_eq!(s, once, "switching transports and back ends where it began");
        assert!(s["hooks"]["Stop"][0].get("matcher").is_none());
        assert!(s["hooks"]["Stop"][0]["hooks"][0].get("onFailure").is_none());
    }

    #[test]
    fn settings_that_are_not_hooks_are_refused_not_overwritten() {
        for bad in [
            json!([]),
            json!({"hooks": []}),
            json!({"hooks": {"Stop": {}}}),
        ] {
            assert!(merge(&mut bad.clone(), &command()).is_err(), "{bad}");
        }
    }
}
