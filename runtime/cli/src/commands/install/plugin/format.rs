//! What one agent's plugin format is (`plugin/claude_code.rs`,
//! `plugin/codex.rs`, `plugin/cursor.rs`, `plugin/goose.rs` each give one), and what its
//! manifest and marketplace say of the plugin.

use std::path::Path;

use serde_json::{Map, Value};

/// One agent's plugin format.
pub(super) struct Format {
    /// The agent's bridge name.
    pub(super) agent: &'static str,
    /// Its name for people.
    pub(super) title: &'static str,
    /// The manifest, relative to the plugin's root.
    pub(super) manifest: &'static str,
    /// The agent's marketplace, where it has one.
    pub(super) marketplace: Option<Marketplace>,
    /// The variable a hook's command names the plugin's root by.
    pub(super) root: &'static str,
    /// `hooks/hooks.json` before hookrt's entries are merged in.
    pub(super) hooks: fn() -> Map<String, Value>,
    /// The manifest.
    pub(super) manifest_json: fn(&Named) -> Value,
    /// How to try the plugin (or the marketplace) written at a path.
    pub(super) try_it: fn(&Named, &Path, Option<&str>) -> String,
}

/// An agent's marketplace: a folder listing plugins it installs from.
pub(super) struct Marketplace {
    /// The marketplace file, relative to the marketplace's root.
    pub(super) file: &'static str,
    /// The marketplace file listing the plugin at `./plugins/<name>`.
    pub(super) json: fn(&Named, &str) -> Value,
}

/// What the manifest and the marketplace say of the plugin.
pub(super) struct Named {
    /// Its name (`--name`).
    pub(super) name: String,
    /// hookrt's version.
    pub(super) version: &'static str,
    /// What it does, in a line.
    pub(super) description: &'static str,
}

impl Named {
    /// The plugin `name`.
    pub(super) fn new(name: &str) -> Named {
        Named {
            name: name.to_owned(),
            version: env!("CARGO_PKG_VERSION"),
            description: "Hooks run by hookrt: each one a WebAssembly component in a sandbox, its grants audited, the folder locked",
        }
    }
}
