//! `budget`: tool calls per session and per minute (docs/packs/budget.md).

use hookrt_pack_rules::budget::Settings;

use crate::Pack;
use crate::settings::{SettingsError, hook_table, typed};

pub(crate) static PACK: Pack = Pack {
    name: "budget",
    summary: "Caps the tool calls one session may make, in all and per minute, so a runaway agent stops instead of looping",
    required: "",
    example: r#"# tool_calls_per_session = 500  # 0: no cap
# tool_calls_per_minute = 60    # 0: no cap
# answer = "deny"               # or "ask"
"#,
    expand,
};

fn expand(settings: &toml::Table) -> Result<toml::Table, SettingsError> {
    let (typed, config): (Settings, _) = typed(settings)?;
    typed.check()?;
    let mut table = hook_table(PACK.name, PACK.summary, config);
    // Each session's count is kept in the hook's own state.
    table.insert(
        "grants".into(),
        toml::Value::Array(vec!["log".into(), "state".into()]),
    );
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_holds_state_and_a_cap_out_of_range_is_named() {
        let table = PACK.expand(&toml::Table::new()).expect("defaults");
        assert_eq!(table["grants"].as_array().map(Vec::len), Some(2));
        let e = PACK
            .expand(&toml::from_str("tool_calls_per_minute = 20000").unwrap())
            .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("tool_calls_per_minute"));
        let e = PACK
            .expand(&toml::from_str("tool_calls_per_session = -1").unwrap())
            .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("tool_calls_per_session"), "{e}");
    }
}
