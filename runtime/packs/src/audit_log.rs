//! `audit-log`: a JSON line per event in one file of the project
//! (docs/packs/audit-log.md).

use hookrt_pack_rules::audit_log::Settings;

use crate::Pack;
use crate::settings::{SettingsError, hook_table, typed};

pub(crate) static PACK: Pack = Pack {
    name: "audit-log",
    summary: "Writes a JSON line per tool call, result, prompt (its size, never its text), permission request and turn into one file of the project, secrets masked",
    required: "",
    example: r#"# file = ".hookrt/audit.jsonl"     # relative to the project
# max_file_bytes = 16777216         # writes past it are refused
# kinds = ["actions.requested", "action.result", "prompt.submitted"]  # what is written
"#,
    expand,
};

fn expand(settings: &toml::Table) -> Result<toml::Table, SettingsError> {
    let (typed, config): (Settings, _) = typed(settings)?;
    typed.check()?;
    let mut write = toml::Table::new();
    write.insert("file".into(), typed.file.clone().into());
    write.insert("max_write_bytes".into(), 65_536.into());
    write.insert(
        "max_file_bytes".into(),
        i64::try_from(typed.max_file_bytes)
            .unwrap_or(i64::MAX)
            .into(),
    );
    let mut grants = toml::Table::new();
    grants.insert("log".into(), toml::Table::new().into());
    grants.insert("write".into(), write.into());
    let mut table = hook_table(PACK.name, PACK.summary, config);
    table.insert("grants".into(), grants.into());
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_the_write_grants_one_place() {
        let table = PACK.expand(&toml::Table::new()).expect("defaults");
        assert_eq!(
            table["grants"]["write"]["file"].as_str(),
            Some(".hookrt/audit.jsonl")
        );
        let e = PACK
            .expand(&toml::from_str("file = '../outside.jsonl'").unwrap())
            .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("file"), "{e}");
    }
}
