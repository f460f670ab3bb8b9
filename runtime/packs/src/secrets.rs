//! `secrets`: secrets in tool input, tool output and prompts
//! (docs/packs/secrets.md).

use hookrt_pack_rules::secrets::{Scanner, Settings};

use crate::Pack;
use crate::settings::{SettingsError, hook_table, typed};

pub(crate) static PACK: Pack = Pack {
    name: "secrets",
    summary: "Keeps secrets (cloud, git host, chat and payment tokens, API keys, private keys) out of tool calls and prompts, and tells the model not to repeat one a tool printed",
    required: "",
    example: r#"# input = "deny"     # a secret in a tool call's input: "deny", "ask", "context" or "off"
# output = "context"  # in a tool's output: "context" (the model is told) or "off"
# prompt = "deny"     # in a prompt: "deny" (blocked), "context" or "off"
# patterns = { internal-token = 'itk_[A-Za-z0-9]{32}' }  # more to find
# disable = ["jwt"]   # built-in detectors switched off
"#,
    expand,
};

fn expand(settings: &toml::Table) -> Result<toml::Table, SettingsError> {
    let (typed, config): (Settings, _) = typed(settings)?;
    Scanner::new(typed)?;
    Ok(hook_table(PACK.name, PACK.summary, config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_filled_in_and_wrong_settings_are_named() {
        let table = PACK.expand(&toml::Table::new()).expect("defaults");
        let config = table["config"].as_table().expect("config");
        assert_eq!(config["input"].as_str(), Some("deny"));
        assert_eq!(config["output"].as_str(), Some("context"));
        let refused = |t: &str| {
            PACK.expand(&toml::from_str(t).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert!(
            refused("output = 'deny'").contains("output"),
            "{}",
            refused("output = 'deny'")
        );
        assert!(
            refused("prompt = 'maybe'").contains("`prompt`"),
            "{}",
            refused("prompt = 'maybe'")
        );
        assert!(refused("patterns = { x = '(' }").contains("patterns.x"));
    }
}
