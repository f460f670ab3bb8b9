//! Codex's plugin: `.codex-plugin/plugin.json` (its `version` names the
//! installed copy), its hooks' command lines naming `${PLUGIN_ROOT}`
//! (Codex puts the installed copy's path in, and sets the variable), and a
//! marketplace in `.agents/plugins/marketplace.json` (`codex plugin
//! marketplace add OUT`, then `codex plugin add NAME@MARKETPLACE`: Codex
//! loads plugins it installed only). Codex asks its user to trust a
//! plugin's hooks (`/hooks`) before they run.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::format::{Format, Marketplace, Named};

pub(super) static FORMAT: Format = Format {
    agent: "codex",
    title: "Codex",
    manifest: ".codex-plugin/plugin.json",
    marketplace: Some(Marketplace {
        file: ".agents/plugins/marketplace.json",
        json: marketplace_json,
    }),
    root: "PLUGIN_ROOT",
    hooks: Map::new,
    manifest_json,
    try_it,
};

fn manifest_json(named: &Named) -> Value {
    json!({
        "name": named.name,
        "version": named.version,
        "description": named.description,
        "hooks": "./hooks/hooks.json",
        "interface": {"displayName": "hookrt", "developerName": "hookrt"},
    })
}

fn marketplace_json(named: &Named, marketplace: &str) -> Value {
    json!({
        "name": marketplace,
        "plugins": [{
            "name": named.name,
            "source": {"source": "local", "path": format!("./plugins/{}", named.name)},
        }],
    })
}

fn try_it(named: &Named, out: &Path, marketplace: Option<&str>) -> String {
    match marketplace {
        Some(m) => format!(
            "add it with `codex plugin marketplace add {}`, then `codex plugin add {}@{m}`, and trust its hooks in `/hooks`",
            out.display(),
            named.name
        ),
        None => {
            "Codex installs plugins from a marketplace only: write one with `--marketplace NAME`"
                .to_owned()
        }
    }
}
