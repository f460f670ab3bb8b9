//! Packs in an agent folder: each `[packs.NAME]` table of `hookrt.toml`
//! switches on a pack shipped with hookrt (`hookrt-packs`) as the primary
//! hook `packs/NAME`. The pack checks its settings and gives the hook's
//! table (its `config`, grants, failure policy), which `[hooks."packs/NAME"]`
//! may tune (limits, `on_failure`) but not replace. The folder's own hooks
//! may not take a `packs/` slug.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::event::scope::Scope;
use crate::hooks::folder::discovery::{DiscoveredHook, SourceKind};
use crate::hooks::folder::settings::RawSettings;
use crate::hooks::folder::slug::Slug;
use crate::hooks::problem::Problem;

pub use hookrt_packs::{ALL, Pack};

/// The first segment of every pack's slug.
pub(crate) const PACKS_DIR: &str = "packs";

/// The hook slug of the pack `name`.
pub(crate) fn slug_of(name: &str) -> Option<Slug> {
    Slug::parse(&format!("{PACKS_DIR}/{name}")).ok()
}

/// The pack a discovered hook is, if it is one.
pub(crate) fn pack_of(hook: &DiscoveredHook) -> Option<&'static Pack> {
    if hook.kind != SourceKind::Pack {
        return None;
    }
    let name = hook
        .slug
        .as_str()
        .strip_prefix(PACKS_DIR)?
        .strip_prefix('/')?;
    hookrt_packs::find(name)
}

/// Each configured pack's hook table by slug; an unknown pack or a setting
/// it refuses is a problem naming the key and the pack's page.
pub(crate) fn expand(
    path: &Path,
    raw: BTreeMap<String, toml::Table>,
    problems: &mut Vec<Problem>,
) -> BTreeMap<Slug, RawSettings> {
    let mut out = BTreeMap::new();
    for (name, settings) in raw {
        let pack = hookrt_packs::find(&name);
        let Some((pack, slug)) = pack.zip(slug_of(&name)) else {
            problems.push(unknown(path, &name));
            continue;
        };
        let table = match pack.expand(&settings) {
            Ok(t) => t,
            Err(e) => {
                problems.push(Problem::config(
                    path,
                    e.to_string(),
                    format!("fix the setting; {} lists the pack's settings", e.docs),
                ));
                continue;
            }
        };
        match RawSettings::deserialize(toml::Value::Table(table)) {
            Ok(raw) => {
                out.insert(slug, raw);
            }
            Err(e) => problems.push(Problem::config(
                path,
                format!("[packs.{name}] gives its hook a table hookrt cannot take: {e}"),
                "report this: the pack and this hookrt disagree",
            )),
        }
    }
    out
}

fn unknown(path: &Path, name: &str) -> Problem {
    let hint = ALL
        .iter()
        .map(|p| (strsim::levenshtein(p.name, name), p.name))
        .filter(|(d, _)| *d <= 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| format!(" (did you mean `{n}`?)"))
        .unwrap_or_default();
    let names: Vec<String> = ALL.iter().map(|p| format!("`{}`", p.name)).collect();
    Problem::config(
        path,
        format!("[packs.{name}] names no pack of this hookrt{hint}"),
        format!("use one of {} (docs/packs/)", names.join(", ")),
    )
}

/// The hooks the configured packs add, their source the configuration file.
pub(crate) fn hooks<'a>(
    config_path: &Path,
    slugs: impl Iterator<Item = &'a Slug>,
) -> Vec<DiscoveredHook> {
    slugs
        .map(|slug| DiscoveredHook {
            slug: slug.clone(),
            kind: SourceKind::Pack,
            path: config_path.to_path_buf(),
            scope: Scope::Primary,
        })
        .collect()
}

/// A hook of the folder's own under `hooks/packs/`: that slug is a pack's.
pub(crate) fn reserved(hook: &DiscoveredHook) -> Option<Problem> {
    let first = hook.slug.as_str().split('/').next();
    (hook.kind != SourceKind::Pack && first == Some(PACKS_DIR)).then(|| {
        Problem::layout(
            &hook.path,
            format!("the slug `{}` is in `{PACKS_DIR}/`, which is kept for the packs hookrt ships", hook.slug),
            format!("move the hook out of hooks/{PACKS_DIR}/ (a pack is switched on with [packs.NAME] in hookrt.toml)"),
        )
    })
}
