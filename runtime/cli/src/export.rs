//! `hookrt build DIR --out OUT`: a prebuilt agent folder from a built one.
//!
//! OUT gets each hook's component under the path that gives it the same
//! slug and scope (`hooks/<slug>.wasm`, `subagents/<id>/hooks/<slug>.wasm`)
//! and a copy of `hookrt.toml` (and, for a locked folder, a `hookrt.lock`
//! pinning the components), so OUT loads with
//! `--prebuilt` on a machine with no Rust toolchain and no hookrt checkout:
//! building (which runs the hooks' build code) happens once, where trusted.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result, bail};
use hookrt::hooks::{CONFIG_FILE, LOCK_FILE, Lock, SourceKind};
use hookrt::{Runtime, Scope};

/// Writes the components and configuration of `rt` into `out`.
pub(crate) fn write_prebuilt(rt: &Runtime, out: &Path) -> Result<()> {
    let agent = rt.agent_dir();
    if fs::canonicalize(out).ok() == fs::canonicalize(agent).ok() {
        bail!("--out {} is the agent folder itself", out.display());
    }
    if out.join("hooks").exists() {
        // Stale components of removed hooks would load as hooks again.
        bail!(
            "{} already has a hooks/ folder; remove it or choose an empty --out",
            out.display()
        );
    }
    // A pack ships inside hookrt: the `[packs.NAME]` of the copied
    // hookrt.toml switches it on in OUT as well.
    for h in rt.hooks().iter().filter(|h| h.kind != SourceKind::Pack) {
        let hooks = match &h.scope {
            Scope::Subagent(id) => out.join("subagents").join(id).join("hooks"),
            _ => out.join("hooks"),
        };
        let to = hooks.join(format!("{}.wasm", h.slug.as_str()));
        let dir = to.parent().unwrap_or(&hooks);
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        fs::copy(&h.component, &to).with_context(|| {
            format!("cannot copy {} to {}", h.component.display(), to.display())
        })?;
    }
    fs::create_dir_all(out.join("hooks"))
        .with_context(|| format!("cannot create {}", out.join("hooks").display()))?;
    let config = agent.join(CONFIG_FILE);
    if config.is_file() {
        fs::copy(&config, out.join(CONFIG_FILE))
            .with_context(|| format!("cannot copy {} to {}", config.display(), out.display()))?;
    }
    // A locked folder gives a locked OUT: the same pins, each hook's files
    // now its component (what the reviewed source built into).
    if agent.join(LOCK_FILE).is_file() {
        let file = out.join(LOCK_FILE);
        Lock::of_prebuilt(rt.hooks())
            .write(&file)
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    Ok(())
}
