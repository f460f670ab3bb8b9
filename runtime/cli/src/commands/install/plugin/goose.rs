//! goose's plugin, in the Open Plugins format goose implements (v1.0.0,
//! open-plugins.com): `.plugin/plugin.json` (its name, version and
//! description), `hooks/hooks.json` in the plugin's root, its commands
//! naming `${PLUGIN_ROOT}` (goose puts the plugin's folder there, and in
//! the hook's environment). No marketplace: goose loads a plugin folder
//! copied to `~/.agents/plugins/NAME/` or a project's
//! `.agents/plugins/NAME/` (its `plugins install` takes plugins with skills
//! only).

use std::path::Path;

use serde_json::{Map, Value, json};

use super::format::{Format, Named};

pub(super) static FORMAT: Format = Format {
    agent: "goose",
    title: "goose (Open Plugins)",
    manifest: ".plugin/plugin.json",
    marketplace: None,
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
    })
}

fn try_it(named: &Named, _out: &Path, _marketplace: Option<&str>) -> String {
    format!(
        "copy it to ~/.agents/plugins/{}/ (or a project's .agents/plugins/{}/) and start goose",
        named.name, named.name
    )
}
