//! `notify`: desktop notifications (docs/packs/notify.md).

use hookrt_pack_rules::notify::Settings;

use crate::Pack;
use crate::settings::{SettingsError, hook_table, typed};

pub(crate) static PACK: Pack = Pack {
    name: "notify",
    summary: "A desktop notification when the agent needs you (its own notification, a permission it asks for) and when a turn ends",
    required: "",
    example: r#"# on = ["notification", "permission", "stop"]  # when
# per_minute = 6                               # more in any minute are dropped
"#,
    expand,
};

fn expand(settings: &toml::Table) -> Result<toml::Table, SettingsError> {
    let (typed, config): (Settings, _) = typed(settings)?;
    typed.check()?;
    let mut notify = toml::Table::new();
    notify.insert(
        "per_minute".into(),
        i64::try_from(typed.per_minute).unwrap_or(i64::MAX).into(),
    );
    notify.insert("timeout_ms".into(), 2_000.into());
    let mut grants = toml::Table::new();
    grants.insert("log".into(), toml::Table::new().into());
    grants.insert("notify".into(), notify.into());
    let mut table = hook_table(PACK.name, PACK.summary, config);
    table.insert("grants".into(), grants.into());
    table.insert("deadline_ms".into(), 2_500.into());
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_desktop_is_the_notify_grant() {
        let table = PACK.expand(&toml::Table::new()).expect("defaults");
        assert_eq!(
            table["grants"]["notify"]["per_minute"].as_integer(),
            Some(6)
        );
        let e = PACK
            .expand(&toml::from_str("on = ['never']").unwrap())
            .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("on"), "{e}");
    }
}
