//! Pinning: `hookrt.lock` records, per hook id, what was reviewed: the
//! digest of the hook's own files, everything `hookrt.toml` makes it run
//! with (its effective settings), the sha256 of the component that runs, the
//! world version it implements and the capabilities granted.
//!
//! An operator who reviewed a folder locks it (`hookrt lock DIR`); from then
//! on a hook whose files or settings changed, a hook added, or a locked hook
//! gone is refused **before anything is built** (so a drifted crate's
//! `build.rs` never runs), naming the hook, what was expected and what was
//! found; a component or world that differs is refused at load. So a change
//! to the folder (a new source, a swapped `.wasm`, a wider grant, another
//! `http_allow`, `on_failure`, limit or redaction pattern) needs a new
//! review and a new lock to run. `--lock FILE` keeps the lock outside the
//! agent folder (whoever can write the folder cannot then remove it), and
//! `--require-lock` makes a missing lock a refusal.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::hooks::folder::config::Config;
use crate::hooks::folder::discovery::DiscoveredHook;
use crate::hooks::loaded::load::LoadedHook;
use crate::hooks::problem::Problem;

pub use crate::hooks::build::component::LockPolicy;
pub use crate::hooks::folder::config::LOCK_FILE;
const LOCK_VERSION: u32 = 2;

/// What one hook was pinned to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// The digest of the hook's own files (its source file, crate tree or
    /// component; not the SDK or toolchain).
    pub files_sha256: String,
    /// Everything `hookrt.toml` makes it run with, as JSON
    /// ([`Config::effective`]).
    pub settings: String,
    /// The component's sha256.
    pub component_sha256: String,
    /// The world version it implements.
    pub world: String,
    /// The capabilities granted to it, sorted.
    pub grants: Vec<String>,
    /// With the `exec` grant: each program it may run, as resolved at load
    /// (`sha256:<hex> <absolute path>`), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub programs: BTreeMap<String, String>,
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

/// What the lock pins of a hook before it is built: its own files and its
/// effective settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Review {
    /// [`Pin::files_sha256`].
    pub files_sha256: String,
    /// [`Pin::settings`].
    pub settings: String,
}

impl Review {
    /// The review of a discovered hook under `config`.
    pub(crate) fn of(hook: &DiscoveredHook, config: &Config) -> Result<Review, Problem> {
        let files_sha256 = crate::hooks::build::digest::files_digest(hook).map_err(|e| {
            Problem::lock(&hook.path, format!("cannot read: {e}"), "check permissions")
        })?;
        Ok(Review {
            files_sha256,
            settings: config.effective(hook),
        })
    }
}

impl Pin {
    /// How a hook's files digest and effective settings differ from this
    /// pin's, one reason each (none when both match).
    fn reviewed_drift(&self, files_sha256: &str, settings: &str) -> Vec<String> {
        let mut why = Vec::new();
        if files_sha256 != self.files_sha256 {
            why.push(format!(
                "its files' sha256 expected {}, found {files_sha256}",
                self.files_sha256
            ));
        }
        if settings != self.settings {
            why.push(format!(
                "its settings in hookrt.toml changed: {}",
                changed_settings(&self.settings, settings).join(", ")
            ));
        }
        why
    }
}

fn pin_of(hook: &LoadedHook) -> Pin {
    Pin {
        files_sha256: hook.reviewed.0.clone(),
        settings: hook.reviewed.1.clone(),
        component_sha256: hook.component_sha256.clone(),
        world: hook.world_version.to_owned(),
        grants: hook.settings.grants.iter().cloned().collect(),
        programs: hook.held.iter().flat_map(|(_, held)| held.pins()).collect(),
    }
}

/// The top-level settings whose values differ between two effective
/// settings texts (`settings.limits.fuel`, `aggregate`, ...), for a drift
/// message that names what changed.
fn changed_settings(expected: &str, found: &str) -> Vec<String> {
    fn walk(at: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
        match (a, b) {
            (serde_json::Value::Object(x), serde_json::Value::Object(y))
                if at.matches('.').count() < 2 =>
            {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    let null = serde_json::Value::Null;
                    let path = if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    };
                    walk(
                        &path,
                        x.get(k).unwrap_or(&null),
                        y.get(k).unwrap_or(&null),
                        out,
                    );
                }
            }
            _ if a != b => out.push(at.to_owned()),
            _ => {}
        }
    }
    let parse = |t: &str| serde_json::from_str(t).unwrap_or(serde_json::Value::Null);
    let (a, b) = (parse(expected), parse(found));
    let mut out = Vec::new();
    walk("", &a, &b, &mut out);
    // Each key with what it was and is, but a hook's `config` by name only
    // (its values are the author's, and may be secrets).
    out.into_iter()
        .map(|key| {
            if key.starts_with("settings.config") {
                return format!("{key} changed");
            }
            let at = |v: &serde_json::Value| {
                let mut text = key
                    .split('.')
                    .try_fold(v, |v, k| v.get(k))
                    .map_or("(none)".to_owned(), |v| v.to_string());
                if text.len() > 80 {
                    text.truncate(text.floor_char_boundary(77));
                    text.push_str("...");
                }
                text
            };
            format!("{key} {} -> {}", at(&a), at(&b))
        })
        .collect()
}

/// How a problem names the lock: `hookrt.lock` in the agent folder, else
/// its whole path (`--lock FILE`).
fn lock_name(path: &Path) -> String {
    if path.file_name().is_some_and(|n| n == LOCK_FILE) {
        LOCK_FILE.to_owned()
    } else {
        path.display().to_string()
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

    /// The lock of a prebuilt copy of `hooks` (`hookrt build --out`): the
    /// same pins, each hook's files being its component there.
    pub fn of_prebuilt(hooks: &[LoadedHook]) -> Lock {
        let mut lock = Lock::of(hooks);
        for pin in lock.hooks.values_mut() {
            pin.files_sha256 = pin.component_sha256.clone();
        }
        lock
    }

    /// Reads the lock at `path`; `Ok(None)` when there is none. A link is
    /// refused, not followed.
    pub fn read(path: &Path) -> Result<Option<Lock>, Problem> {
        let text = match crate::hooks::folder::plain::read(path) {
            Ok(Some(t)) => t,
            Ok(None) => return Ok(None),
            Err(e) => {
                return Err(Problem::lock(
                    path,
                    e.to_string(),
                    "check the file (it must be a plain file)",
                ));
            }
        };
        let lock: Lock = toml::from_str(&text).map_err(|e| {
            Problem::lock(
                path,
                format!(
                    "invalid lock file: {}",
                    crate::hooks::folder::plain::toml_error(&e, &text)
                ),
                "write it again with `hookrt lock DIR` after reviewing the folder",
            )
        })?;
        if lock.version != LOCK_VERSION {
            return Err(Problem::lock(
                path,
                format!(
                    "lock format version {} is not {LOCK_VERSION} (version 2 also pins each hook's files and settings)",
                    lock.version
                ),
                "review the folder, then write the lock again with `hookrt lock DIR` using this hookrt",
            ));
        }
        Ok(Some(lock))
    }

    /// Writes the lock to `path` (replacing a file there, never writing
    /// through a link).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let body = toml::to_string_pretty(self).map_err(std::io::Error::other)?;
        let text = format!(
            "# Written by `hookrt lock`: each hook's files, settings, component, world version\n\
             # and grants as they were reviewed. A hook that differs is refused before it is\n\
             # built; lock again after a review.\n{body}"
        );
        crate::hooks::folder::plain::replace(path, text.as_bytes())
    }

    /// The problems of discovered hooks against the lock, before anything
    /// is built: a hook whose files or settings drifted, a hook not in the
    /// lock, a locked hook gone. `reviews` is each hook's (id, source, review).
    pub(crate) fn check_reviews(
        &self,
        lock_path: &Path,
        reviews: &[(String, PathBuf, Review)],
    ) -> Vec<Problem> {
        let fix = "review the change, then `hookrt lock DIR` again (or restore what was locked)";
        let mut problems = Vec::new();
        for (id, source, review) in reviews {
            let Some(pin) = self.hooks.get(id) else {
                problems.push(Problem::lock(
                    source,
                    format!("hook `{id}` is not in {}", lock_name(lock_path)),
                    fix,
                ));
                continue;
            };
            let why = pin.reviewed_drift(&review.files_sha256, &review.settings);
            if !why.is_empty() {
                problems.push(Problem::lock(
                    source,
                    format!(
                        "hook `{id}` drifted from {}: {}",
                        lock_name(lock_path),
                        why.join("; ")
                    ),
                    fix,
                ));
            }
        }
        for id in self.hooks.keys() {
            if !reviews.iter().any(|(r, _, _)| r == id) {
                problems.push(Problem::lock(
                    lock_path,
                    format!("locked hook `{id}` is gone"),
                    fix,
                ));
            }
        }
        problems
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
        let mut why = pin.reviewed_drift(&found.files_sha256, &found.settings);
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
        if found.programs != pin.programs {
            why.push(format!(
                "exec programs expected {:?}, found {:?}",
                pin.programs, found.programs
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
    pub fn check(&self, lock_path: &Path, hooks: &[LoadedHook]) -> Vec<Problem> {
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
                    lock_path,
                    format!("locked hook `{id}` is gone"),
                    fix,
                ));
            }
        }
        problems
    }
}

/// The hooks among `hooks` holding a grant whose table only a lock may vouch
/// for (`exec`) that `lock` does not pin as they are: for an author's working
/// copy ([`crate::Runtime::unpinned_operator_grants`]), which runs such a
/// hook only as locked.
pub(crate) fn unpinned_operator_grants(
    lock: Option<&Lock>,
    lock_path: &Path,
    hooks: &[LoadedHook],
) -> Vec<Problem> {
    let fix = "review its table in hookrt.toml, then pin the folder with `hookrt lock DIR`";
    hooks
        .iter()
        .filter_map(|h| {
            let grant = crate::sandbox::grant::needing_lock(&h.settings.grants)?;
            let why = match lock.map(|l| l.status(h)) {
                Some((LockStatus::Locked, _)) => return None,
                None => "there is no lock".to_owned(),
                Some((_, why)) => format!(
                    "it differs from the lock ({})",
                    why.unwrap_or_else(|| "not pinned".into())
                ),
            };
            Some(Problem::lock(
                lock_path,
                format!(
                    "hook `{}` holds the `{}` grant, whose table only a lock may vouch for, and {why}: it runs only as locked, even for check and test",
                    h.id(),
                    grant.name
                ),
                fix,
            ))
        })
        .collect()
}
