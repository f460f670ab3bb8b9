//! An agent folder as a plugin of the agent's own plugin system (`hookrt
//! package`, `commands/package.rs`). For Claude Code:
//! `OUT/.claude-plugin/plugin.json`, `OUT/hooks/hooks.json` (hookrt's
//! entry on every event the folder's hooks take, as `install` writes them,
//! the folder named through `${CLAUDE_PLUGIN_ROOT}` and its lock required)
//! and `OUT/agent/` (the folder's `hookrt.toml`, `hookrt.lock`, `hooks/`
//! and `subagents/`). `claude --plugin-dir OUT`, or a marketplace listing
//! OUT, loads it. The folder must be locked: the plugin runs what was
//! reviewed, or nothing.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use hookrt::front::bridge::Bridge;
use hookrt::hooks::{CONFIG_FILE, LOCK_FILE};
use serde_json::json;

use super::entry::{Agent, Transport};
use super::merge::merge;
use super::needed::needed;
use super::pin::Pinned;
use crate::loading::Loading;

/// Where the agent folder lies inside the plugin.
const FOLDER: &str = "agent";

/// Writes the plugin of `agent` for the folder `dir` into `out`, named
/// `name`, its hooks running `hookrt`.
pub(crate) fn package(
    agent: &str,
    dir: &Path,
    out: &Path,
    name: &str,
    hookrt: &str,
    loading: Loading,
) -> Result<ExitCode> {
    let Some(bridge) = Bridge::named(agent) else {
        bail!(
            "no agent `{}`: give --agent one of {}",
            agent,
            Bridge::names()
        );
    };
    if bridge.name() != "claude-code" {
        bail!(
            "a plugin for {} is not written yet; `hookrt install --agent {} DIR` puts hookrt into its settings",
            bridge.name(),
            bridge.name()
        );
    }
    let dir = std::fs::canonicalize(dir)
        .with_context(|| format!("the agent folder {} does not exist", dir.display()))?;
    if !dir.join(LOCK_FILE).is_file() {
        bail!(
            "{} has no {LOCK_FILE}: a plugin runs a reviewed folder only; review it, then `hookrt lock {}`",
            dir.display(),
            dir.display()
        );
    }
    let only = needed(&loading, &dir, bridge)?;
    empty_or_new(out)?;
    copy_folder(&dir, &out.join(FOLDER))?;
    let agent = Agent::of(bridge).only(only);
    let transport = Transport {
        hookrt: hookrt.to_owned(),
        dir: format!("${{CLAUDE_PLUGIN_ROOT}}/{FOLDER}"),
        http: None,
        lock: Pinned::required(),
        record: None,
    };
    let mut hooks = json!({"description": "hookrt: the agent folder in agent/, sandboxed, gating every event its hooks take"});
    merge(&mut hooks, &agent, &transport)?;
    write_json(&out.join("hooks/hooks.json"), &hooks)?;
    let manifest = json!({
        "name": name,
        "version": env!("CARGO_PKG_VERSION"),
        "description": "Hooks run by hookrt: each one a WebAssembly component in a sandbox, its grants audited, the folder locked",
        "author": {"name": "hookrt"},
        "license": "Apache-2.0",
    });
    write_json(&out.join(".claude-plugin/plugin.json"), &manifest)?;
    println!(
        "wrote the Claude Code plugin {} in {}: hooks on {} event(s), the folder in {}/{FOLDER}; try it with `claude --plugin-dir {}`",
        name,
        out.display(),
        agent.installed().count(),
        out.display(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// OUT must not exist, or be an empty folder: nothing is overwritten.
fn empty_or_new(out: &Path) -> Result<()> {
    match std::fs::read_dir(out).map(|mut entries| entries.next().is_none()) {
        Ok(false) => {
            bail!(
                "{} is not empty; nothing was written (choose a new folder)",
                out.display()
            )
        }
        Ok(true) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", out.display())),
    }
}

/// Copies what the folder runs from: `hookrt.toml`, `hookrt.lock`, `hooks/`
/// and `subagents/`, plain files only (a link is refused: the plugin must
/// hold what the lock pinned).
fn copy_folder(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for name in [CONFIG_FILE, LOCK_FILE, "hooks", "subagents"] {
        let source = from.join(name);
        if std::fs::symlink_metadata(&source).is_ok() {
            copy_tree(&source, &to.join(name))?;
        }
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let meta = std::fs::symlink_metadata(from)
        .with_context(|| format!("cannot read {}", from.display()))?;
    if meta.is_file() {
        std::fs::copy(from, to)
            .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
        return Ok(());
    }
    if !meta.is_dir() {
        bail!(
            "{} is not a plain file or folder; a plugin holds copies of plain files only",
            from.display()
        );
    }
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    let mut entries: Vec<_> = std::fs::read_dir(from)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        copy_tree(&entry.path(), &to.join(entry.file_name()))?;
    }
    Ok(())
}

fn write_json(path: &Path, value: &serde_json::Value) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(path, format!("{}\n", serde_json::to_string_pretty(value)?))
        .with_context(|| format!("cannot write {}", path.display()))
}
