//! What one grant is: a [`Grant`] (its name, the interfaces it gates, what
//! it gives, its table's reader, what it resolves to at load and its
//! linking).

use wasmtime::component::Linker;

use crate::sandbox::grant::held::Resolve;
use crate::sandbox::grant::table::GrantTable;
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
    /// Whether what it resolves to acts on the project folder (`exec`,
    /// `read`, `write`): a hook holding it needs one at load.
    pub needs_project: bool,
    /// What a hook holding it keeps once loaded, on this host (its table's
    /// programs, places, values or bus): `None` for a grant whose host
    /// functions need nothing of the hook's own (`log`, `state`, ...).
    pub(crate) resolve: Option<Resolve>,
}
