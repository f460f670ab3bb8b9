//! hookrt's rule packs: hooks that ship inside hookrt, prebuilt, and are
//! switched on and configured in `hookrt.toml` only (`[packs.NAME]`), so a
//! user needs no Rust, Node or Python to use them.
//!
//! Each pack is its component (built from `guest/<name>/` by `build.rs`
//! and embedded here), the rules it runs (`hookrt-pack-rules`), this
//! crate's module that checks its settings and says what its hook runs
//! with (the keys `hookrt.toml` would give a hook: `config`, `grants`,
//! `on_failure`, …), and its page `docs/packs/<name>.md`. The library
//! loads a pack as the hook `packs/<name>`, so `audit`, the lock and the
//! trail see it like any other.

mod audit_log;
mod budget;
mod format_on_edit;
mod notify;
mod notify_webhook;
mod protect_paths;
mod safe_shell;
mod secrets;
mod settings;
mod tests_at_stop;

pub use settings::SettingsError;

include!(concat!(env!("OUT_DIR"), "/components.rs"));

/// One pack.
#[derive(Debug)]
pub struct Pack {
    /// Its name under `[packs.NAME]`.
    pub name: &'static str,
    /// One line: what it does.
    pub summary: &'static str,
    /// The settings it cannot go without, which `hookrt init` writes as
    /// they are (TOML lines; empty when every setting has a default).
    pub required: &'static str,
    /// What else it takes, for `hookrt init`'s commented settings: TOML lines.
    pub example: &'static str,
    /// Checks `[packs.NAME]` and gives the hook's table.
    expand: fn(&toml::Table) -> Result<toml::Table, SettingsError>,
}

/// Every pack, by name.
pub static ALL: &[&Pack] = &[
    &safe_shell::PACK,
    &protect_paths::PACK,
    &secrets::PACK,
    &budget::PACK,
    &format_on_edit::PACK,
    &tests_at_stop::PACK,
    &notify::PACK,
    &notify_webhook::PACK,
    &audit_log::PACK,
];

/// The pack named `name`.
pub fn find(name: &str) -> Option<&'static Pack> {
    ALL.iter().copied().find(|p| p.name == name)
}

impl Pack {
    /// Its documentation page, relative to the repository's root.
    pub fn docs(&self) -> String {
        format!("docs/packs/{}.md", self.name)
    }

    /// Its component, as shipped.
    pub fn component(&self) -> &'static [u8] {
        self.entry().1
    }

    /// The sha256 (hex) of its component.
    pub fn sha256(&self) -> &'static str {
        self.entry().2
    }

    fn entry(&self) -> &'static (&'static str, &'static [u8], &'static str) {
        COMPONENTS
            .iter()
            .find(|(n, _, _)| *n == self.name)
            .expect("build.rs builds a component for every pack of ALL")
    }

    /// Checks the settings written under `[packs.NAME]`, and gives what the
    /// pack's hook runs with, as `hookrt.toml` would write it for a hook
    /// (`config` holds the settings with every default filled in).
    pub fn expand(&self, settings: &toml::Table) -> Result<toml::Table, SettingsError> {
        (self.expand)(settings).map_err(|e| e.of(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pack_has_a_component_and_a_docs_page() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for pack in ALL {
            assert!(pack.component().starts_with(b"\0asm"), "{}", pack.name);
            assert_eq!(pack.sha256().len(), 64);
            assert!(
                root.join(pack.docs()).is_file(),
                "{} has no {}",
                pack.name,
                pack.docs()
            );
            // What `hookrt init` writes, its commented settings switched on.
            let uncommented: String = pack
                .example
                .lines()
                .filter(|l| l.starts_with("# ") && l.contains(" = "))
                .map(|l| format!("{}\n", l[2..].split("  #").next().unwrap_or_default()))
                .collect();
            let written = format!("{}{uncommented}", pack.required);
            let settings: toml::Table = toml::from_str(&written).expect("init writes TOML");
            pack.expand(&settings)
                .unwrap_or_else(|e| panic!("{}: {e}\n{written}", pack.name));
        }
    }
}
