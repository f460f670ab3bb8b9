//! Pinning: `hookrt.lock` records, per hook id, the sha256 of the component
//! that runs, the world version it implements and the capabilities granted.
//!
//! An operator who reviewed a folder locks it (`hookrt lock DIR`); from then
//! on a hook whose component or grants changed, a hook added, or a locked hook
//! gone is refused at load, naming the hook, what was expected and what was
//! found. So a change to the folder (a new source, a swapped `.wasm`, a wider
//! grant in `hookrt.toml`) needs a new review and a new lock to run.

use std::collections::BTreeMap;
use std::path::Path;

use crate::hooks::loaded::load::LoadedHook;
use crate::hooks::problem::Problem;

/// The lock file's name inside the agent folder.
pub const LOCK_FILE: &str = "hookrt.lock";
const LOCK_VERSION: u32 = 1;

/// What one hook was pinned to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// The component's sha256.
    pub component_sha256: String,
    /// The world version it implements.
    pub world: String,
    /// The capabilities granted to it, sorted.
    pub grants: Vec<String>,
}

/// The contents of `hookrt.lock`: hook id to pin.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// The format version.
    pub version: u32,
    /// Pins by hook id (`audit`, `subagents/researcher/policy`).
    pub hooks: BTreeMap<String, Pin>,
}

/// Where a hook stands against the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LockStatus {
    /// The folder has no `hookrt.lock`.
    Unlocked,
    /// The hook matches its pin.
    Locked,
    /// The hook differs from its pin, or has none while the folder is locked.
    Drifted,
}

fn pin_of(hook: &LoadedHook) -> Pin {
    Pin {
        component_sha256: hook.component_sha256.clone(),
        world: hook.world_version.to_owned(),
        grants: hook.settings.grants.iter().cloned().collect(),
    }
}

impl Lock {
    /// The lock pinning `hooks` as they are.
    pub fn of(hooks: &[LoadedHook]) -> Lock {
        Lock {
            version: LOCK_VERSION,
            hooks: hooks.iter().map(|h| (h.id(), pin_of(h))).collect(),
        }
    }

    /// Reads `agent_dir/hookrt.lock`; `Ok(None)` when there is none.
    pub fn read(agent_dir: &Path) -> Result<Option<Lock>, Problem> {
        let path = agent_dir.join(LOCK_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(Problem::lock(
                    &path,
                    format!("cannot read: {e}"),
                    "check permissions",
                ));
            }
        };
        let lock: Lock = toml::from_str(&text).map_err(|e| {
            Problem::lock(
                &path,
                format!("invalid lock file: {}", e.to_string().trim_end()),
                "write it again with `hookrt lock DIR` after reviewing the folder",
            )
        })?;
        if lock.version != LOCK_VERSION {
            return Err(Problem::lock(
                &path,
                format!("lock format version {} is not {LOCK_VERSION}", lock.version),
                "write it again with `hookrt lock DIR` using this hookrt",
            ));
        }
        Ok(Some(lock))
    }

    /// Writes the lock to `agent_dir/hookrt.lock`.
    pub fn write(&self, agent_dir: &Path) -> std::io::Result<()> {
        let body = toml::to_string_pretty(self).map_err(std::io::Error::other)?;
        let text = format!(
            "# Written by `hookrt lock`: the components, world versions and grants that were\n\
             # reviewed. A hook that differs is refused at load; lock again after a review.\n{body}"
        );
        std::fs::write(agent_dir.join(LOCK_FILE), text)
    }

    /// `hook` against its pin; the reason when it drifted.
    pub fn status(&self, hook: &LoadedHook) -> (LockStatus, Option<String>) {
        let id = hook.id();
        let Some(pin) = self.hooks.get(&id) else {
            return (
                LockStatus::Drifted,
                Some(format!("hook `{id}` is not in {LOCK_FILE}")),
            );
        };
        let found = pin_of(hook);
        let mut why = Vec::new();
        if found.component_sha256 != pin.component_sha256 {
            why.push(format!(
                "component sha256 expected {}, found {}",
                pin.component_sha256, found.component_sha256
            ));
        }
        if found.world != pin.world {
            why.push(format!(
                "world version expected {}, found {}",
                pin.world, found.world
            ));
        }
        if found.grants != pin.grants {
            why.push(format!(
                "grants expected [{}], found [{}]",
                pin.grants.join(", "),
                found.grants.join(", ")
            ));
        }
        if why.is_empty() {
            (LockStatus::Locked, None)
        } else {
            (
                LockStatus::Drifted,
                Some(format!(
                    "hook `{id}` drifted from {LOCK_FILE}: {}",
                    why.join("; ")
                )),
            )
        }
    }

    /// A problem per drifted hook and per locked hook that is gone.
    pub fn check(&self, agent_dir: &Path, hooks: &[LoadedHook]) -> Vec<Problem> {
        let fix = "review the change, then `hookrt lock DIR` again (or restore what was locked)";
        let mut problems: Vec<Problem> = hooks
            .iter()
            .filter_map(|h| match self.status(h) {
                (LockStatus::Drifted, why) => {
                    Some(Problem::lock(&h.source, why.unwrap_or_default(), fix))
                }
                _ => None,
            })
            .collect();
        for id in self.hooks.keys() {
            if !hooks.iter().any(|h| h.has_id(id)) {
                problems.push(Problem::lock(
                    agent_dir.join(LOCK_FILE),
                    format!("locked hook `{id}` is gone"),
                    fix,
                ));
            }
        }
        problems
    }
}
