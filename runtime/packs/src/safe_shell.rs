//! `safe-shell`: destructive and exfiltrating shell commands in every
//! agent's shell tool (docs/packs/safe-shell.md).

use hookrt_pack_rules::safe_shell::{Checker, Settings};

use crate::Pack;
use crate::settings::{SettingsError, hook_table, typed};

pub(crate) static PACK: Pack = Pack {
    name: "safe-shell",
    summary: "Refuses destructive and exfiltrating shell commands: recursive deletes outside the project, downloads piped into a shell, force pushes, skipped git hooks, world-writable files, sudo, secrets sent over the network, disk wipes",
    required: "",
    example: r#"# answer = "deny"                    # or "ask": a human decides
# disable = ["privilege-escalation"]  # rules switched off, by name
# allow = ['^git push --force origin my-scratch-branch$']  # commands let through
# deny = { docker-prune = '^docker system prune' }         # more to refuse
"#,
    expand,
};

fn expand(settings: &toml::Table) -> Result<toml::Table, SettingsError> {
    let (typed, config): (Settings, _) = typed(settings)?;
    Checker::new(typed)?;
    Ok(hook_table(PACK.name, PACK.summary, config))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> SettingsError {
        PACK.expand(&toml::from_str(text).expect("TOML"))
            .expect_err("refused")
    }

    #[test]
    fn settings_are_filled_in_and_each_wrong_one_is_named() {
        let table = PACK
            .expand(&toml::Table::new())
            .expect("no settings is every default");
        let config = table["config"].as_table().expect("config");
        assert_eq!(config["answer"].as_str(), Some("deny"));
        assert_eq!(table["on_failure"].as_str(), Some("deny"));
        let e = refused("allw = []");
        assert_eq!(e.key.as_deref(), Some("allw"));
        assert!(e.message.contains("unknown field `allw`"), "{e}");
        assert_eq!(e.docs, "docs/packs/safe-shell.md");
        let e = refused("allow = 'rm'");
        assert_eq!(e.key.as_deref(), Some("allow"));
        assert!(e.message.contains("expected a sequence"), "{e}");
        let e = refused("disable = ['sudo']");
        assert!(
            e.message.contains("unknown variant `sudo`")
                && e.message.contains("privilege-escalation"),
            "{e}"
        );
        assert!(
            refused("allow = ['(']")
                .to_string()
                .contains("`allow[0]` is not a regular expression")
        );
    }
}
