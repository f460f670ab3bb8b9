//! Each grant a hook holds, resolved at load for this host through the
//! registry (`sandbox::grant::held`): `exec`'s programs and `read`'s and
//! `write`'s places in the project folder (`hooks::project`), `secret`'s
//! values, `transcript`'s table, `notify`'s session bus. What a hook cannot
//! be given here refuses it, naming the fix. No grant is named here.

use std::path::Path;

use crate::hooks::folder::discovery::DiscoveredHook;
use crate::hooks::folder::settings::HookSettings;
use crate::hooks::problem::Problem;
use crate::hooks::project::{Project, ProjectError};
use std::sync::Arc;

use crate::sandbox::grant::held::{Held, Resolving};
use crate::sandbox::grant::{ALL, Grant, GrantTable};

/// Each grant a loaded hook holds, with what it keeps, in the registry's
/// order.
pub(crate) type HeldGrants = Vec<(&'static Grant, Arc<dyn Held>)>;

/// What each grant `hook` holds (with `settings`) keeps once loaded, in
/// the registry's order.
pub(super) fn held(
    hook: &DiscoveredHook,
    settings: &HookSettings,
    project: &Result<Project, ProjectError>,
) -> Result<HeldGrants, Problem> {
    let path = &hook.path;
    let hook_id = hook.scope.hook_id(hook.slug.as_str());
    let mut held = Vec::new();
    for grant in ALL {
        let Some(resolve) = grant
            .resolve
            .filter(|_| settings.grants.contains(grant.name))
        else {
            continue;
        };
        let project = if grant.needs_project {
            Some(project_of(path, project, grant.name)?.root())
        } else {
            None
        };
        let table = settings
            .grant_tables
            .get(grant.name)
            .cloned()
            .unwrap_or_else(GrantTable::empty);
        let at = Resolving {
            project,
            hook_id: &hook_id,
        };
        match resolve(&table, &at) {
            Ok(Some(h)) => held.push((grant, h)),
            Ok(None) => {}
            Err(refused) => return Err(Problem::load(path, refused.why, refused.fix)),
        }
    }
    Ok(held)
}

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
