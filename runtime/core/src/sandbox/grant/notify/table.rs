//! The `notify` table: how many notifications a hook may show a minute and
//! how long one may take to reach the notifier. Read and checked from
//! `[hooks."<slug>".grants.notify]` (or `grants = ["notify"]`, its defaults)
//! when `hookrt.toml` is loaded.

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
    let raw: RawTable = value
        .clone()
        .try_into()
        .map_err(|e: toml::de::Error| vec![e.message().to_owned()])?;
    let mut problems = Vec::new();
    let mut table = Table::default();
    match raw.per_minute {
        None => {}
        Some(n) if (1..=MAX_PER_MINUTE).contains(&n) => table.per_minute = n,
        Some(n) => problems.push(format!(
            "per_minute = {n}: set it between 1 and {MAX_PER_MINUTE}"
        )),
    }
    match raw.timeout_ms {
        None => {}
        Some(ms) if (1..=MAX_TIMEOUT_MS).contains(&ms) => table.timeout_ms = ms,
        Some(ms) => problems.push(format!(
            "timeout_ms = {ms}: set it between 1 and {MAX_TIMEOUT_MS}"
        )),
    }
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
