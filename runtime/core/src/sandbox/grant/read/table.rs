//! The `read` table: the deny patterns a hook's table adds to the defaults
//! (`deny.rs`), and the size caps of one file and of one delivery. Read and
//! checked from `[hooks."<slug>".grants.read]`; the grant named without a
//! table (`grants = ["read"]`) reads as the defaults.

use serde::Deserialize;

use super::deny;
use crate::sandbox::grant::setting;

/// Default cap of one file a hook reads: a source file, a config file.
pub(crate) const DEFAULT_FILE_BYTES: u64 = 1 << 20;
/// Most a table may set: what is read is copied into the guest's memory, to
/// block guest-controlled resource exhaustion of the host.
pub(crate) const MAX_FILE_BYTES: u64 = 16 << 20;
/// Default of what one delivery may read in all (file contents and names).
pub(crate) const DEFAULT_DELIVERY_BYTES: u64 = 8 << 20;
/// Most a table may set.
pub(crate) const MAX_DELIVERY_BYTES: u64 = 64 << 20;

/// The `read` table of one hook.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Table {
    /// Patterns refused besides the defaults.
    pub deny: Vec<String>,
    /// Cap of one file; a larger one is refused as too large.
    pub file_bytes: u64,
    /// Cap of what one delivery reads in all.
    pub delivery_bytes: u64,
}

impl Default for Table {
    fn default() -> Table {
        Table {
            deny: Vec::new(),
            file_bytes: DEFAULT_FILE_BYTES,
            delivery_bytes: DEFAULT_DELIVERY_BYTES,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    #[serde(default)]
    deny: Vec<String>,
    file_bytes: Option<u64>,
    delivery_bytes: Option<u64>,
}

/// Reads the `read` table; the problems say what is wrong.
pub(crate) fn parse(value: Option<&toml::Value>) -> Result<Table, Vec<String>> {
    let Some(value) = value else {
        return Ok(Table::default());
    };
    let raw: RawTable = setting::raw(value)?;
    let mut problems: Vec<String> = raw
        .deny
        .iter()
        .filter_map(|p| deny::check(p).err())
        .collect();
    if raw.deny.len() > deny::MAX_PATTERNS {
        problems.push(format!(
            "deny has {} patterns: at most {} (a folder pattern `dir/` covers what is under it)",
            raw.deny.len(),
            deny::MAX_PATTERNS
        ));
    }
    let mut bounded = |key: &str, v: Option<u64>, default: u64, max: u64| {
        setting::bounded(&mut problems, key, v, default, max)
    };
    let file_bytes = bounded(
        "file_bytes",
        raw.file_bytes,
        DEFAULT_FILE_BYTES,
        MAX_FILE_BYTES,
    );
    let delivery_bytes = bounded(
        "delivery_bytes",
        raw.delivery_bytes,
        DEFAULT_DELIVERY_BYTES,
        MAX_DELIVERY_BYTES,
    );
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Table {
        deny: raw.deny,
        file_bytes,
        delivery_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Result<Table, Vec<String>> {
        parse(Some(&toml::Value::Table(text.parse().unwrap())))
    }

    #[test]
    fn a_table_adds_patterns_and_sets_caps_within_bounds() {
        assert_eq!(parse(None), Ok(Table::default()));
        assert_eq!(table(""), Ok(Table::default()));
        let t = table("deny = [\"secrets/\", \"*.sqlite\"]\nfile_bytes = 4096\n").unwrap();
        assert_eq!(t.deny, ["secrets/", "*.sqlite"]);
        assert_eq!(
            (t.file_bytes, t.delivery_bytes),
            (4096, DEFAULT_DELIVERY_BYTES)
        );
    }

    #[test]
    fn a_table_cannot_take_a_default_away_nor_name_a_path_outside() {
        let err = table("allow = [\".env\"]\n").unwrap_err();
        assert!(err[0].contains("unknown field `allow`"), "{err:?}");
        let err = table("deny = [\"/etc\", \"../x\"]\nfile_bytes = 0\n").unwrap_err();
        assert_eq!(
            err,
            [
                "deny pattern `/etc` must be relative, `/`-separated",
                "deny pattern `../x` has an empty, `.` or `..` part",
                "file_bytes = 0: set it between 1 and 16777216",
            ]
        );
    }
}
