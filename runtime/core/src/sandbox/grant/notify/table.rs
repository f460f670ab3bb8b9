//! The `notify` table: how many notifications a hook may show a minute and
//! how long one may take to reach the notifier. Read and checked from
//! `[hooks."<slug>".grants.notify]` (or `grants = ["notify"]`, its defaults)
//! when `hookrt.toml` is loaded.

use crate::sandbox::grant::setting;
use serde::Deserialize;

/// Default notifications one hook may show in a minute: a hook that fires
/// on every tool call must not bury the desktop.
pub(crate) const DEFAULT_PER_MINUTE: u32 = 6;
/// Most a table may set.
pub(crate) const MAX_PER_MINUTE: u32 = 60;
/// Default wall clock one notification may take to reach the notifier (the
/// D-Bus call and its answer): a stalled notifier holds a delivery no longer.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 2_000;
/// Most a table may set: a call holds a delivery's thread.
pub(crate) const MAX_TIMEOUT_MS: u64 = 10_000;

/// The `notify` table of one hook.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Table {
    /// Notifications the hook may show in any 60 seconds; more are refused
    /// as rate-limited.
    pub per_minute: u32,
    /// Wall-clock bound of one notification's delivery to the notifier
    /// (never past the delivery's own deadline).
    pub timeout_ms: u64,
}

impl Default for Table {
    fn default() -> Self {
        Table {
            per_minute: DEFAULT_PER_MINUTE,
            timeout_ms: DEFAULT_TIMEOUT_MS,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    per_minute: Option<u32>,
    timeout_ms: Option<u64>,
}

/// Reads the `notify` table (`None`: named in the list form, the defaults);
/// the problems say what is wrong.
pub(crate) fn parse(value: Option<&toml::Value>) -> Result<Table, Vec<String>> {
    let Some(value) = value else {
        return Ok(Table::default());
    };
    let raw: RawTable = setting::raw(value)?;
    let mut problems = Vec::new();
    let per_minute = setting::bounded(
        &mut problems,
        "per_minute",
        raw.per_minute.map(u64::from),
        u64::from(DEFAULT_PER_MINUTE),
        u64::from(MAX_PER_MINUTE),
    );
    let table = Table {
        per_minute: u32::try_from(per_minute).unwrap_or(DEFAULT_PER_MINUTE),
        timeout_ms: setting::bounded(
            &mut problems,
            "timeout_ms",
            raw.timeout_ms,
            DEFAULT_TIMEOUT_MS,
            MAX_TIMEOUT_MS,
        ),
    };
    if problems.is_empty() {
        Ok(table)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Result<Table, Vec<String>> {
        parse(Some(&toml::Value::Table(text.parse().unwrap())))
    }

    #[test]
    fn a_notify_table_reads_with_its_defaults_and_refuses_what_is_out_of_bounds() {
        assert_eq!(parse(None), Ok(Table::default()));
        assert_eq!(table(""), Ok(Table::default()));
        assert_eq!(
            table("per_minute = 2\ntimeout_ms = 500"),
            Ok(Table {
                per_minute: 2,
                timeout_ms: 500
            })
        );
        assert_eq!(
            table("per_minute = 0\ntimeout_ms = 60000"),
            Err(vec![
                "per_minute = 0: set it between 1 and 60".to_owned(),
                "timeout_ms = 60000: set it between 1 and 10000".to_owned()
            ])
        );
        let unknown = table("sound = \"Glass\"").unwrap_err();
        assert!(unknown[0].contains("unknown field `sound`"), "{unknown:?}");
    }
}
