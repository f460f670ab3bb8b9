//! An agent folder as a plugin of the agent's own plugin system (`hookrt
//! package`, `commands/package.rs`). One file per agent's format
//! (`claude_code.rs`, `codex.rs`, `cursor.rs`, `goose.rs`): where its manifest and its
//! marketplace lie, and the variable its hooks name the plugin's root by.
//! Shared here: `hooks/hooks.json` (hookrt's entry on every event the
//! folder's hooks take, as `install` writes them, the folder named through
//! the root variable and its lock required) and `agent/` (the folder's
//! `hookrt.toml`, `hookrt.lock`, `hooks/` and `subagents/`, plain files
//! only). With `--marketplace NAME`, OUT is a marketplace of the agent's
//! listing the plugin in `OUT/plugins/<name>/`. The folder must be locked:
//! the plugin runs what was reviewed, or nothing.

mod claude_code;
mod codex;
mod cursor;
mod format;
mod goose;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use hookrt::front::bridge::Bridge;
use hookrt::hooks::{CONFIG_FILE, LOCK_FILE};
use serde_json::Value;

use super::entry::{Agent, Transport};
use super::merge::merge;
use super::needed::needed;
use super::pin::Pinned;
use crate::loading::Loading;
use format::{Format, Named};

/// Where the agent folder lies inside the plugin.
const FOLDER: &str = "agent";

/// The agents whose plugins hookrt writes.
const FORMATS: [&Format; 4] = [
    &claude_code::FORMAT,
    &codex::FORMAT,
    &cursor::FORMAT,
    &goose::FORMAT,
];

/// Writes the plugin of `agent` for the folder `dir` into `out`, named
/// `name`, its hooks running `hookrt`; in a marketplace named
/// `marketplace` when one is given.
pub(crate) fn package(
    agent: &str,
    dir: &Path,
    out: &Path,
    name: &str,
    marketplace: Option<&str>,
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
    let Some(format) = FORMATS.iter().find(|f| f.agent == bridge.name()) else {
        bail!(
            "a plugin for {} is not written yet (plugins: {}); `hookrt install --agent {} DIR` puts hookrt into its settings",
            bridge.name(),
            FORMATS.map(|f| f.agent).join(", "),
            bridge.name()
        );
    };
    for (what, text) in
        std::iter::once(("--name", name)).chain(marketplace.map(|m| ("--marketplace", m)))
    {
        if !is_plugin_name(text) {
            bail!(
                "{what} `{text}` is not a plugin name: lower-case letters, digits and `-`, starting with a letter"
            );
        }
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
    let named = Named::new(name);
    let root: PathBuf = match (marketplace, &format.marketplace) {
        (Some(m), Some(listing)) => {
            write_json(&out.join(listing.file), &(listing.json)(&named, m))?;
            out.join("plugins").join(name)
        }
        (Some(_), None) => bail!(
            "{} has no marketplace to list a plugin in: leave out --marketplace ({})",
            format.title,
            (format.try_it)(&named, out, None)
        ),
        (None, _) => out.to_owned(),
    };
    copy_folder(&dir, &root.join(FOLDER))?;
    let agent = Agent::of(bridge)?.only(only);
    let transport = Transport {
        hookrt: hookrt.to_owned(),
        // The plugin runs the `hookrt` the user has: `hookrt hook`, which
        // reaches the resident service.
        thin: None,
        dir: format!("${{{}}}/{FOLDER}", format.root),
        http: None,
        no_service: false,
        lock: Pinned::required(),
        record: None,
    };
    let mut hooks = Value::Object((format.hooks)());
    merge(&mut hooks, &agent, &transport)?;
    write_json(&root.join("hooks/hooks.json"), &hooks)?;
    write_json(&root.join(format.manifest), &(format.manifest_json)(&named))?;
    println!(
        "wrote the {} plugin {} in {}: hooks on {} event(s), the folder in {}/{FOLDER}; {}",
        format.title,
        name,
        root.display(),
        agent.installed().count(),
        root.display(),
        (format.try_it)(&named, out, marketplace)
    );
    Ok(ExitCode::SUCCESS)
}

/// A name every agent's plugin system takes (Cursor's is the narrowest:
/// lower-case, digits, `-` and `.`, no `.` at either end).
fn is_plugin_name(name: &str) -> bool {
    name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
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

fn write_json(path: &Path, value: &Value) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(path, format!("{}\n", serde_json::to_string_pretty(value)?))
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_names_are_what_every_agent_takes() {
        for good in ["hookrt", "team-policy", "a1"] {
            assert!(is_plugin_name(good), "{good}");
        }
        for bad in ["", "Hookrt", "-x", "x-", "a b", "a/b", "../x", "a.b", "1a"] {
            assert!(!is_plugin_name(bad), "{bad}");
        }
    }
}
