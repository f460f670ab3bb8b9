//! The `transcript` table: the cap of one read. Read from
//! `[hooks."<slug>".grants.transcript]`; the grant named without a table
//! has the defaults.

use crate::sandbox::grant::setting;
use serde::Deserialize;

/// Default cap of one read: the last turns of a long session.
pub(crate) const DEFAULT_MAX_BYTES: u64 = 256 << 10;
/// Most a table may set: what a read returns is copied into the guest's
/// memory, so the cap blocks guest-driven host memory exhaustion.
pub(crate) const MAX_MAX_BYTES: u64 = 8 << 20;

/// The `transcript` table: the cap of one read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Table {
    /// Most bytes one `tail` returns.
    pub max_bytes: u64,
}

impl Default for Table {
    fn default() -> Table {
        Table {
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

impl Table {
    /// What `audit` says of it.
    pub(crate) fn audit_line(&self) -> String {
        format!(
            "the session's transcript the agent names, inside the agent's transcripts folder, owned by this user: the last whole lines, at most {} bytes a read",
            self.max_bytes
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    max_bytes: Option<u64>,
}

/// Reads the table: `None` for the defaults (the list form, or `{}`).
pub(crate) fn parse(value: Option<&toml::Value>) -> Result<Option<Table>, Vec<String>> {
    let Some(value) = value else {
        return Ok(None);
    };
    let raw: RawTable = setting::raw(value)?;
    match raw.max_bytes {
        None => Ok(None),
        Some(n) if (1..=MAX_MAX_BYTES).contains(&n) => Ok(Some(Table { max_bytes: n })),
        Some(n) => Err(vec![format!(
            "max_bytes = {n}: set it between 1 and {MAX_MAX_BYTES}"
        )]),
    }
}
