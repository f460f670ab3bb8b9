//! Cursor's plugin: `.cursor-plugin/plugin.json` (Cursor's schema is
//! closed: only its fields), its hooks' command lines naming
//! `${CURSOR_PLUGIN_ROOT}`, and a marketplace in
//! `.cursor-plugin/marketplace.json` (a repository Cursor imports). A
//! plugin folder copied to `~/.cursor/plugins/local/NAME/` is loaded too.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::format::{Format, Marketplace, Named};

pub(super) static FORMAT: Format = Format {
    agent: "cursor",
    title: "Cursor",
    manifest: ".cursor-plugin/plugin.json",
    marketplace: Some(Marketplace {
        file: ".cursor-plugin/marketplace.json",
        json: marketplace_json,
    }),
    root: "CURSOR_PLUGIN_ROOT",
    hooks: Map::new,
    manifest_json,
    try_it,
};

fn manifest_json(named: &Named) -> Value {
    json!({
        "name": named.name,
        "displayName": "hookrt",
        "version": named.version,
        "description": named.description,
        "author": {"name": "hookrt"},
        "license": "Apache-2.0",
        "hooks": "./hooks/hooks.json",
    })
}

fn marketplace_json(named: &Named, marketplace: &str) -> Value {
    json!({
        "name": marketplace,
        "owner": {"name": "hookrt"},
        "plugins": [{
            "name": named.name,
            "source": format!("./plugins/{}", named.name),
            "description": named.description,
        }],
    })
}

fn try_it(named: &Named, out: &Path, marketplace: Option<&str>) -> String {
    match marketplace {
        Some(_) => format!(
            "push {} to a repository and import it in Cursor's plugin settings",
            out.display()
        ),
        None => format!(
            "copy it to ~/.cursor/plugins/local/{}/ and reload Cursor",
            named.name
        ),
    }
}
