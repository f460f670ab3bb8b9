//! `hookrt install --agent NAME DIR` (and `hookrt claude install DIR`):
//! makes hookrt the hook of the events of an agent its folder's hooks
//! subscribe to (`needed.rs`; every one with `--all-events`), in the agent's own
//! hook configuration (the file, shape, timeout unit and fail-closed word of
//! the agent's `Protocol`), in one command.
//!
//! The file is merged, not overwritten: the user's keys and hooks stay,
//! hookrt's own entries are replaced, so a second run changes nothing. Each
//! event gets one entry: the command transport (`hookrt hook --agent NAME
//! DIR --deadline-ms 10000`), or with `--http URL` a running `hookrt serve`
//! (the agent's `http` hook on its route, or the command hook forwarding to
//! it). `--lock FILE` and `--require-lock` go into the command hook's line;
//! a warning says when the folder or the lock lies inside the working tree
//! the agent edits. The file is written as `file` says (no link followed,
//! mode and owner kept, replaced atomically); `--dry-run` prints the diff.
//! Each agent's file and shape, and the rest: docs/agents.md#set-up.

mod agent_plugin;
mod agent_scripts;
mod entry;
mod file;
mod merge;
mod needed;
mod pin;
pub(crate) mod plugin;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use hookrt::front::bridge::Bridge;
use hookrt::front::bridge::protocol::Shape;
use serde_json::{Value, json};

use crate::loading::Loading;

use entry::{Agent, Transport};
use file::SettingsFile;
use merge::merge;
use pin::{Pinned, warn_if_editable};

#[derive(clap::Subcommand)]
pub(crate) enum ClaudeCommand {
    /// Make hookrt the hook of the Claude Code events its hooks take, in a settings file
    /// (`hookrt install --agent claude-code`).
    Install(Where),
}

/// `hookrt install`'s arguments.
#[derive(clap::Args)]
pub(crate) struct InstallArgs {
    /// The agent whose hooks hookrt becomes: claude-code, codex, gemini, cursor, copilot,
    /// opencode, kilo or cline.
    #[arg(long, value_name = "AGENT")]
    pub agent: String,
    #[command(flatten)]
    pub place: Where,
}

/// Where and how hookrt is installed.
#[derive(clap::Args)]
pub(crate) struct Where {
    /// The agent folder whose hooks run.
    pub dir: PathBuf,
    /// Answer over HTTP: a running `hookrt serve` at this URL
    /// (`http://127.0.0.1:7700`) instead of a process per event (Claude
    /// Code and Copilot CLI, whose hooks can be `http`).
    #[arg(long, value_name = "URL")]
    pub http: Option<String>,
    /// Each command hook through the folder's resident service (the
    /// default: one warm hookrt per user and project, started on demand,
    /// keeping a journal with its trail; the entries run the thin client
    /// `hookrt-hook` beside this hookrt; docs/service.md).
    #[arg(long, conflicts_with_all = ["http", "no_service"])]
    pub service: bool,
    /// Each command hook decides in its own process (`hookrt hook
    /// --no-service`): no journal, so no trail, receipts or coverage.
    #[arg(long, conflicts_with = "http")]
    pub no_service: bool,
    /// Write the project's file in the working folder (the default).
    #[arg(long, conflicts_with_all = ["user", "settings"])]
    pub project: bool,
    /// Write the user's file.
    #[arg(long, conflicts_with = "settings")]
    pub user: bool,
    /// Write this file.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Print the change as a diff; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The command hooks also append each input, as the agent sent it and
    /// masked, to this recording (`hookrt hook --record`); with --http, the
    /// inputs that reach `hookrt serve` are recorded by `hookrt serve
    /// --record FILE`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Become the hook of every event the agent sends, not only of those
    /// the folder's hooks subscribe to (the folder is not loaded).
    #[arg(long)]
    pub all_events: bool,
}

pub(super) fn claude(cmd: ClaudeCommand, loading: &Loading) -> Result<ExitCode> {
    match cmd {
        // `claude install` is `install --agent claude-code`.
        ClaudeCommand::Install(place) => install_for(agent("claude-code")?, &place, loading),
    }
}

pub(super) fn install(args: &InstallArgs, loading: &Loading) -> Result<ExitCode> {
    install_for(agent(&args.agent)?, &args.place, loading)
}

/// The agent named `name`.
fn agent(name: &str) -> Result<Bridge> {
    let Some(bridge) = Bridge::named(name) else {
        bail!("no agent `{name}`: give --agent one of {}", Bridge::names());
    };
    Ok(bridge)
}

fn install_for(bridge: Bridge, place: &Where, loading: &Loading) -> Result<ExitCode> {
    let agent = Agent::of(bridge)?;
    let dir = std::fs::canonicalize(&place.dir)
        .with_context(|| format!("the agent folder {} does not exist", place.dir.display()))?;
    let only = match place.all_events {
        true => None,
        false => needed::needed(loading, &dir, bridge)?,
    };
    let agent = agent.only(only);
    let cwd = std::env::current_dir().context("cannot tell the working folder")?;
    let target = target(&agent, place, &cwd)?;
    let pinned = Pinned::of(&loading.lock, &dir, &cwd, place.http.is_some())?;
    let hookrt = std::env::current_exe().context("cannot tell where this hookrt binary is")?;
    let thin = hookrt.with_file_name("hookrt-hook");
    let transport = Transport {
        hookrt: hookrt.to_string_lossy().into_owned(),
        thin: thin.is_file().then(|| thin.to_string_lossy().into_owned()),
        dir: dir.to_string_lossy().into_owned(),
        http: place
            .http
            .as_ref()
            .map(|u| u.trim_end_matches('/').to_owned()),
        no_service: place.no_service,
        lock: pinned.clone(),
        record: place
            .record
            .as_ref()
            .map(|r| std::path::absolute(r).map(|p| p.to_string_lossy().into_owned()))
            .transpose()
            .context("cannot tell where the recording goes")?,
    };
    let project = !place.user && place.settings.is_none();
    warn_if_editable(bridge.protocol().label, &dir, &pinned, &cwd, project);
    if agent.install.shape == Shape::Scripts {
        return scripts(&agent, &transport, &target, place.dry_run);
    }
    let file = target.path();
    let found = target.read()?;
    let old = found.text.clone();
    let (new, kept) = match agent.install.shape {
        Shape::Plugin(_) => {
            let text = agent_plugin::render(&agent, &transport, old.as_deref())
                .with_context(|| file.display().to_string())?;
            (text, None)
        }
        Shape::Grouped | Shape::Flat | Shape::Named(_) | Shape::Scripts => {
            let (text, kept) = merged(old.as_deref(), &agent, &transport, &file)?;
            (text, Some(kept))
        }
    };
    let old = old.unwrap_or_default();
    if place.dry_run {
        print_diff(&file, &old, &new);
        return Ok(ExitCode::SUCCESS);
    }
    if old == new {
        println!("{}: already up to date", file.display());
        return Ok(ExitCode::SUCCESS);
    }
    target.write(found, new.as_bytes())?;
    let kept = kept.map_or(String::new(), |k| format!("; {k} other hook entries kept"));
    println!("{}: {}{kept}", file.display(), done(&agent, &transport));
    Ok(ExitCode::SUCCESS)
}

/// `old` to `new` of `file` as a unified diff, on stdout.
fn print_diff(file: &Path, old: &str, new: &str) {
    let diff = similar::TextDiff::from_lines(old, new);
    let name = file.display().to_string();
    print!(
        "{}",
        diff.unified_diff().context_radius(3).header(&name, &name)
    );
}

/// Writes `agent`'s script per event into `folder` (removing hookrt's old
/// ones), or with `dry_run` prints each change as a diff.
fn scripts(
    agent: &Agent,
    transport: &Transport,
    folder: &SettingsFile,
    dry_run: bool,
) -> Result<ExitCode> {
    let planned = agent_scripts::plan(agent, transport, folder)?;
    let changed: Vec<_> = planned.into_iter().filter(|s| !s.unchanged()).collect();
    let place = folder.path();
    if dry_run {
        for s in &changed {
            let old = s.found.text.as_deref().unwrap_or_default();
            print_diff(&s.file.path(), old, s.new.as_deref().unwrap_or_default());
        }
        return Ok(ExitCode::SUCCESS);
    }
    if changed.is_empty() {
        println!("{}: already up to date", place.display());
        return Ok(ExitCode::SUCCESS);
    }
    for s in changed {
        match &s.new {
            Some(text) => s.file.write(s.found, text.as_bytes())?,
            None => s.file.remove(s.found)?,
        }
    }
    println!("{}: {}", place.display(), done(agent, transport));
    Ok(ExitCode::SUCCESS)
}

/// The settings `old` (of `file`) with hookrt's entries merged in, as the
/// file's new text, and how many other hook entries it keeps.
fn merged(
    old: Option<&str>,
    agent: &Agent,
    transport: &Transport,
    file: &Path,
) -> Result<(String, usize)> {
    let mut settings: Value = match old {
        Some(text) if !text.trim().is_empty() => serde_json::from_str(text)
            .with_context(|| format!("{} is not JSON; fix it or move it away", file.display()))?,
        _ => json!({}),
    };
    let kept = merge(&mut settings, agent, transport)
        .with_context(|| format!("{}: cannot merge hookrt's hooks", file.display()))?;
    Ok((
        format!("{}\n", serde_json::to_string_pretty(&settings)?),
        kept,
    ))
}

/// What install did for `agent`: which events hookrt is the hook of, and how.
fn done(agent: &Agent, transport: &Transport) -> String {
    let skipped = if agent.install.not_installed.is_empty() {
        String::new()
    } else {
        format!(
            "; not {}, whose hook must create the worktree",
            agent.install.not_installed.join(", ")
        )
    };
    let events: Vec<&str> = agent.installed().collect();
    let label = agent.bridge.protocol().label;
    let which = match (&agent.only, events.is_empty()) {
        (Some(_), true) => {
            format!("no hook of the folder takes a {label} event: hookrt is the hook of none")
        }
        (Some(_), false) => format!(
            "hookrt is the hook of the {} {label} events its hooks take, {}",
            events.len(),
            events.join(", ")
        ),
        (None, _) => format!("hookrt is the hook of {} {label} events", events.len()),
    };
    format!("{which} ({}{skipped})", transport.describe(agent))
}

/// The file to write for `agent`: under the working folder (the project),
/// the user's folder, or as `--settings` names it.
fn target(agent: &Agent, place: &Where, cwd: &Path) -> Result<SettingsFile> {
    if let Some(file) = &place.settings {
        return SettingsFile::named(file, cwd);
    }
    if !place.user {
        return SettingsFile::under(cwd, Path::new(agent.install.project));
    }
    if let Some((var, _)) = agent.install.home_env
        && let Some(folder) = std::env::var_os(var).filter(|v| !v.is_empty())
    {
        return SettingsFile::under(Path::new(&folder), Path::new(agent.install.user));
    }
    let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else {
        bail!("--user needs HOME to find the user's hooks; give --settings FILE instead");
    };
    let folder = agent.install.home_env.map_or("", |(_, dir)| dir);
    SettingsFile::under(
        Path::new(&home),
        &Path::new(folder).join(agent.install.user),
    )
}

#[cfg(test)]
mod tests {
    use hookrt::front::bridge::protocol::{CommandForm, FailClosed, Install, Shape};

    use super::*;

    fn command() -> Transport {
        Transport {
            hookrt: "/usr/bin/hookrt".into(),
            thin: None,
            dir: "/agent".into(),
            http: None,
            no_service: false,
            lock: Pinned::default(),
            record: None,
        }
    }

    #[test]
    fn a_merge_keeps_the_users_hooks_and_replaces_hookrts_own() {
        let claude = Agent::of(agent("claude-code").unwrap()).unwrap();
        let mut s = json!({
            "model": "opus",
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
                "Retired": [{"hooks": [{"type": "command", "command": "/old/hookrt", "args": ["claude-hook", "/agent"]}]}]
            }
        });
        assert_eq!(merge(&mut s, &claude, &command()).unwrap(), 1);
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
        assert_eq!(
            s["hooks"].as_object().unwrap().len(),
            claude.installed().count()
        );
        assert!(s["hooks"].get("WorktreeCreate").is_none());
        let once = s.clone();
        let http = Transport {
            http: Some("http://127.0.0.1:7700".into()),
            ..command()
        };
        merge(&mut s, &claude, &http).unwrap();
        assert_eq!(s["hooks"]["SessionStart"][0]["hooks"][0]["type"], "command");
        assert_eq!(s["hooks"]["Stop"][0]["hooks"][0]["type"], "http");
        merge(&mut s, &claude, &command()).unwrap();
        assert_eq!(s, once, "switching transports and back ends where it began");
        assert!(s["hooks"]["Stop"][0].get("matcher").is_none());
        assert!(s["hooks"]["Stop"][0]["hooks"][0].get("onFailure").is_none());
    }

    #[test]
    fn flat_files_keep_the_users_hooks_and_take_the_agents_units() {
        let cursor = Agent::of(agent("cursor").unwrap()).unwrap();
        let mut s =
            json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": "./audit.sh"}]}});
        assert_eq!(merge(&mut s, &cursor, &command()).unwrap(), 1);
        let shell = s["hooks"]["beforeShellExecution"].as_array().unwrap();
        assert_eq!(shell[0]["command"], "./audit.sh");
        assert_eq!(
            shell[1]["command"],
            "/usr/bin/hookrt hook --agent cursor /agent --deadline-ms 10000"
        );
        assert_eq!(shell[1]["failClosed"], true);
        let once = s.clone();
        merge(&mut s, &cursor, &command()).unwrap();
        assert_eq!(s, once, "a second run changes nothing");
        let copilot = Agent::of(agent("copilot").unwrap()).unwrap();
        let mut s = json!({});
        merge(&mut s, &copilot, &command()).unwrap();
        assert_eq!(s["version"], 1);
        assert_eq!(
            s["hooks"]["preToolUse"][0]["bash"],
            "/usr/bin/hookrt hook --agent copilot --event preToolUse /agent --deadline-ms 10000"
        );
        assert_eq!(s["hooks"]["preToolUse"][0]["timeoutSec"], 15);
        let gemini = Agent::of(agent("gemini").unwrap()).unwrap();
        let mut s = json!({"hooksConfig": {"enabled": true}});
        merge(&mut s, &gemini, &command()).unwrap();
        assert_eq!(s["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], 15_000);
        assert_eq!(s["hooksConfig"]["enabled"], true);
    }

    #[test]
    fn a_users_empty_list_or_group_is_kept_as_it_was() {
        let claude = Agent::of(agent("claude-code").unwrap()).unwrap();
        let mut s = json!({"hooks": {
            "Custom": [],
            "Stop": [{"matcher": "", "hooks": []}],
            "Retired": [{"hooks": [{"type": "command", "command": "/old/hookrt", "args": ["claude-hook", "/agent"]}]}]
        }});
        merge(&mut s, &claude, &command()).unwrap();
        assert_eq!(s["hooks"]["Custom"], json!([]));
        assert_eq!(s["hooks"]["Stop"][0], json!({"matcher": "", "hooks": []}));
        assert_eq!(s["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert!(
            s["hooks"].get("Retired").is_none(),
            "emptied of hookrt's: gone"
        );
        let cursor = Agent::of(agent("cursor").unwrap()).unwrap();
        let mut s = json!({"version": 1, "hooks": {"custom": []}});
        merge(&mut s, &cursor, &command()).unwrap();
        assert_eq!(s["hooks"]["custom"], json!([]));
    }

    /// An agent defined only here: its `Install` is all `install` reads.
    static FABLE: hookrt::front::bridge::Protocol = hookrt::front::bridge::Protocol {
        agent: "fable",
        label: "Fable",
        word: "fable",
        events: &[
            ("beforeStep", "actions.requested"),
            ("afterStep", "action.result"),
        ],
        event_field: None,
        session_fields: &["session"],
        id_field: None,
        subagent_fields: None,
        kept: &[],
        dropped: &[],
        transcripts: None,
        map: |_, kind, _, _| {
            Ok(hookrt::front::bridge::protocol::Mapped {
                kind: kind.to_owned(),
                step: None,
                data: json!({}),
            })
        },
        turn_field: None,
        gates: &["beforeStep"],
        context_events: &[],
        answer: |_, _| None,
        refusal: |_, reason| json!({"deny": reason}),
        silence: hookrt::front::bridge::protocol::Silence::Nothing,
        refuses_in_json: &[],
        install: Some(Install {
            shape: Shape::Grouped,
            project: ".fable/settings.json",
            user: ".fable/settings.json",
            home_env: None,
            tool_events: &["beforeStep"],
            not_installed: &[],
            http_hooks: true,
            command_only: &["afterStep"],
            command: CommandForm::Line("run"),
            typed: false,
            name: Some("hookrt"),
            timeout: (
                "deadline",
                hookrt::front::bridge::protocol::TimeUnit::Milliseconds,
            ),
            fail_closed: Some(FailClosed::Word("onError", "deny")),
        }),
        signature: None,
        openapi: hookrt::front::bridge::protocol::OpenApi {
            operation_id: "fableHook",
            input_schema: "FableHookInput",
        },
    };

    #[test]
    fn an_agent_defined_in_one_protocol_is_installed_as_it_says() {
        let fable = Agent::of(Bridge::of(&FABLE)).unwrap();
        let mut s = json!({});
        merge(&mut s, &fable, &command()).unwrap();
        let step = &s["hooks"]["beforeStep"][0];
        assert_eq!(step["matcher"], "*");
        assert_eq!(
            step["hooks"][0],
            json!({
                "name": "hookrt",
                "run": "/usr/bin/hookrt hook --agent fable --event beforeStep /agent --deadline-ms 10000",
                "deadline": 15_000,
                "onError": "deny",
            })
        );
        let http = Transport {
            http: Some("http://127.0.0.1:7700".into()),
            ..command()
        };
        merge(&mut s, &fable, &http).unwrap();
        let step = &s["hooks"]["beforeStep"][0]["hooks"][0];
        assert_eq!(
            step["url"],
            "http://127.0.0.1:7700/v1/fable?event=beforeStep&budget_ms=8000"
        );
        assert_eq!(step["deadline"], 10_000);
        assert_eq!(s["hooks"]["afterStep"][0]["hooks"][0]["deadline"], 15_000);
        assert!(s["hooks"]["afterStep"][0].get("matcher").is_none());
    }

    #[test]
    fn settings_that_are_not_hooks_are_refused_not_overwritten() {
        let claude = Agent::of(agent("claude-code").unwrap()).unwrap();
        for bad in [
            json!([]),
            json!({"hooks": []}),
            json!({"hooks": {"Stop": {}}}),
        ] {
            assert!(
                merge(&mut bad.clone(), &claude, &command()).is_err(),
                "{bad}"
            );
        }
        let cursor = Agent::of(agent("cursor").unwrap()).unwrap();
        assert!(merge(&mut json!({"version": 2}), &cursor, &command()).is_err());
    }
}
