//! What one grant is: a [`Grant`] (its name, the interfaces it gates, its
//! audit line, its table and its linking) and what its table reads as.

use wasmtime::component::Linker;

use crate::sandbox::grant::exec::table;
use crate::sandbox::grant::notify::table as notify_table;
use crate::sandbox::grant::read::table as read_table;
use crate::sandbox::grant::secret::table as secret_table;
use crate::sandbox::grant::transcript::table as transcript;
use crate::sandbox::grant::write::table as write;
use crate::sandbox::host::StoreData;

/// Everything about one grant.
#[derive(Debug)]
pub struct Grant {
    /// Its name in `grants` (`log`, `exec`, …).
    pub name: &'static str,
    /// The interfaces it gates, `package/interface` without a version
    /// (`hookrt:hook/state`, `wasi:http/outgoing-handler`).
    pub interfaces: &'static [&'static str],
    /// What it gives a hook, in a few words (for a listing of the grants).
    pub gives: &'static str,
    /// Whether a hook holds it unless `grants` says otherwise.
    pub default: bool,
    /// Whether its table is operator configuration that only a lock may
    /// vouch for: a folder whose hooks hold it does not load without a
    /// `hookrt.lock` pinning the table (and what it resolved to).
    pub needs_lock: bool,
    /// Reads and checks its table in `hookrt.toml` (`None`: the grant was
    /// named in the list form, without a table); the problems say what is
    /// wrong, each in one sentence.
    pub(crate) table: fn(Option<&toml::Value>) -> Result<GrantTable, Vec<String>>,
    /// Links its host functions (every world version that has them).
    pub(crate) link: fn(&mut Linker<StoreData>) -> wasmtime::Result<()>,
}

/// A grant's table as read: what its host functions need.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum GrantTable {
    /// A grant without settings (`log = {}`, or named in the list form).
    Empty,
    /// The `exec` table.
    Exec(table::Table),
    /// The `secret` table.
    Secret(secret_table::Table),
    /// The `transcript` table.
    Transcript(transcript::Table),
    /// The `write` table.
    Write(write::Table),
    /// The `read` table.
    Read(read_table::Table),
    /// The `notify` table.
    Notify(notify_table::Table),
}

/// A table for a grant that takes no settings: none, or `{}`.
pub(crate) fn no_table(value: Option<&toml::Value>) -> Result<GrantTable, Vec<String>> {
    match value {
        None => Ok(GrantTable::Empty),
        Some(toml::Value::Table(t)) if t.is_empty() => Ok(GrantTable::Empty),
        Some(_) => Err(vec!["takes no settings: write it as `{}`".to_owned()]),
    }
}
