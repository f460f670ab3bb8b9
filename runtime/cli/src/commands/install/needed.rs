//! The events an agent folder's hooks need: `install` makes hookrt the hook
//! of those only (`--all-events` for every one), so the agent does not
//! start a process, or send a request, for an event no hook takes.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Result, bail};
use hookrt::event::{WILDCARD, handled_kind};
use hookrt::front::bridge::Bridge;

use crate::loading::Loading;

/// The events of `bridge` that some hook of `dir` subscribes to (by kind,
/// directly or as `observe:` / `rewrite:`); `None` when one subscribes to
/// `*`, which takes them all. The folder is loaded (and built where it
/// must be) as the global flags say, its lock not enforced: what the
/// agent then runs is checked against the lock when it runs.
pub(super) fn needed(
    loading: &Loading,
    dir: &Path,
    bridge: Bridge,
) -> Result<Option<BTreeSet<&'static str>>> {
    let rt = match loading.clone().without_lock().load(dir) {
        Ok(rt) => rt,
        Err(problems) => {
            crate::loading::report(&problems);
            bail!(
                "{} does not load, so which events its hooks need cannot be told: fix it, or install for every event with --all-events",
                dir.display()
            );
        }
    };
    let kinds: BTreeSet<&str> = rt
        .hooks()
        .iter()
        .flat_map(|h| h.subscriptions.iter())
        .map(|s| handled_kind(s))
        .collect();
    if kinds.contains(WILDCARD) {
        return Ok(None);
    }
    Ok(Some(
        bridge
            .events()
            .iter()
            .filter(|(_, kind)| kinds.contains(kind))
            .map(|(event, _)| *event)
            .collect(),
    ))
}
