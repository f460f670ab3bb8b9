//! Each grant a hook holds, resolved at load for this host: `exec`'s
//! programs and `read`'s and `write`'s places in the project folder
//! (`hooks::project`), `secret`'s values, `transcript`'s table, `notify`'s
//! session bus. What a
//! hook cannot be given here refuses it, naming the fix.

use std::path::Path;
use std::sync::Arc;

use crate::hooks::folder::discovery::DiscoveredHook;
use crate::hooks::folder::settings::HookSettings;
use crate::hooks::problem::Problem;
use crate::hooks::project::{Project, ProjectError};
use crate::sandbox::grant::GrantTable;
use crate::sandbox::grant::exec::Policy as ExecPolicy;
use crate::sandbox::grant::notify::Notifier;
use crate::sandbox::grant::read::Policy as ReadPolicy;
use crate::sandbox::grant::secret::Policy as SecretPolicy;
use crate::sandbox::grant::transcript::Table as TranscriptTable;
use crate::sandbox::grant::write::Policy as WritePolicy;

/// The project folder for a hook holding `grant`, or why it cannot have one.
fn project_of<'p>(
    path: &Path,
    project: &'p Result<Project, ProjectError>,
    grant: &str,
) -> Result<&'p Project, Problem> {
    project.as_ref().map_err(|e| {
        Problem::load(
            path,
            format!("has the {grant} grant, but {e}"),
            "run hookrt from the project's folder, or name it with --project-dir",
        )
    })
}

/// What a grant resolved to, kept for the hook at `path`; or the problem
/// that refuses the hook, with `fix`.
fn kept<T, E: std::fmt::Display>(
    path: &Path,
    resolved: Result<T, E>,
    fix: &str,
) -> Result<Option<Arc<T>>, Problem> {
    resolved
        .map(|p| Some(Arc::new(p)))
        .map_err(|e| Problem::load(path, e.to_string(), fix))
}

/// The `exec` grant of a hook with `settings`, its programs resolved for
/// runs in the project folder (`hooks::project`), never one an event names.
pub(super) fn exec_policy(
    path: &Path,
    settings: &HookSettings,
    project: &Result<Project, ProjectError>,
) -> Result<Option<Arc<ExecPolicy>>, Problem> {
    let Some(GrantTable::Exec(table)) = settings.grant_tables.get("exec") else {
        return Ok(None);
    };
    let project = project_of(path, project, "exec")?;
    kept(
        path,
        ExecPolicy::resolve(table, project.root()),
        "install the program, or fix its `path` in the exec table",
    )
}

/// The `transcript` grant of a hook with `settings`: its table (the
/// defaults when it is named without one).
pub(super) fn transcript_table(settings: &HookSettings) -> Option<TranscriptTable> {
    if !settings.grants.contains("transcript") {
        return None;
    }
    match settings.grant_tables.get("transcript") {
        Some(GrantTable::Transcript(t)) => Some(*t),
        _ => Some(TranscriptTable::default()),
    }
}

/// The `write` grant of a hook with `settings`, for writes in the project
/// folder (`hooks::project`), never one an event names.
pub(super) fn write_policy(
    path: &Path,
    settings: &HookSettings,
    project: &Result<Project, ProjectError>,
) -> Result<Option<Arc<WritePolicy>>, Problem> {
    let Some(GrantTable::Write(table)) = settings.grant_tables.get("write") else {
        return Ok(None);
    };
    let project = project_of(path, project, "write")?;
    kept(
        path,
        WritePolicy::resolve(table, project.root()),
        "check the project folder's permissions",
    )
}

/// The `secret` grant of a hook with `settings`, each value read where its
/// table says: a file others may read, or one that cannot be read, refuses
/// the hook.
pub(super) fn secret_policy(
    path: &Path,
    settings: &HookSettings,
) -> Result<Option<Arc<SecretPolicy>>, Problem> {
    let Some(GrantTable::Secret(table)) = settings.grant_tables.get("secret") else {
        return Ok(None);
    };
    kept(
        path,
        SecretPolicy::resolve(table),
        "make the secret's file the user's own, mode 0600, holding the value alone (docs/configuration.md, the `secret` grant)",
    )
}

/// The `read` grant of a hook with `settings`: the project folder
/// (`hooks::project`) opened for reads under its table.
pub(super) fn read_policy(
    path: &Path,
    settings: &HookSettings,
    project: &Result<Project, ProjectError>,
) -> Result<Option<Arc<ReadPolicy>>, Problem> {
    let Some(GrantTable::Read(table)) = settings.grant_tables.get("read") else {
        return Ok(None);
    };
    let project = project_of(path, project, "read")?;
    kept(
        path,
        ReadPolicy::open(table, project.root()),
        "check the project folder's permissions",
    )
}

/// The `notify` grant of `hook` with `settings`, on the session bus
/// hookrt's own environment names (never one an event or the hook could).
pub(super) fn notify_policy(
    hook: &DiscoveredHook,
    settings: &HookSettings,
) -> Option<Arc<Notifier>> {
    let id = hook.scope.hook_id(hook.slug.as_str());
    match settings.grant_tables.get("notify") {
        Some(GrantTable::Notify(table)) => Some(Arc::new(Notifier::from_environment(table, &id))),
        _ => None,
    }
}
