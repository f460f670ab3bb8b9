//! The registry of grants: every host capability a hook may be given.
//!
//! A [`Grant`] is one table (as an agent is one `Protocol`): its name in
//! `hookrt.toml`, the interfaces it gates, what `audit` says it gives, how
//! its `[hooks."<slug>".grants.<name>]` table is read, and how its host
//! functions are linked. [`ALL`] lists them; the import check (`grants.rs`),
//! the configuration, the linker, `audit` and the lock read it, and nothing
//! else names a grant. A new grant is one file here and one line in [`ALL`].

use std::collections::{BTreeMap, BTreeSet};

use wasmtime::component::{HasSelf, Linker};

use crate::sandbox::grant::spec::Grant;
use crate::sandbox::grant::table::GrantTable;
use crate::sandbox::grant::{
    exec, http, log, metrics, notify, read, secret, state, transcript, write,
};
use crate::sandbox::host::StoreData;
use crate::sandbox::wit::{v0_1_0, v0_2_0, v0_3_0, v0_4_0};

/// Every grant, by name.
pub const ALL: [&Grant; 10] = [
    &exec::GRANT,
    &http::GRANT,
    &log::GRANT,
    &metrics::GRANT,
    &notify::GRANT,
    &read::GRANT,
    &secret::GRANT,
    &state::GRANT,
    &transcript::GRANT,
    &write::GRANT,
];

/// The first grant among `held` whose table only a lock may vouch for
/// (`exec`): a hook holding one runs only as locked.
pub(crate) fn needing_lock(held: &BTreeSet<String>) -> Option<&'static Grant> {
    ALL.into_iter()
        .find(|g| g.needs_lock && held.contains(g.name))
}

/// Capabilities a hook can be granted: the registry's names.
pub const CAPABILITIES: [&str; ALL.len()] = {
    let mut names = [""; ALL.len()];
    let mut i = 0;
    while i < ALL.len() {
        names[i] = ALL[i].name;
        i += 1;
    }
    names
};

/// Interfaces world 0.4.0 declares whose grants this hookrt does not
/// provide yet: a hook importing one is refused at load, saying so.
pub(crate) const DESIGNED: [&str; 0] = [];

/// The grant named `name`.
pub(crate) fn named(name: &str) -> Option<&'static Grant> {
    ALL.into_iter().find(|g| g.name == name)
}

/// The grant gating `interface` (`package/interface`, no version).
pub(crate) fn gating(interface: &str) -> Option<&'static Grant> {
    ALL.into_iter().find(|g| g.interfaces.contains(&interface))
}

/// `grants` as written in `hookrt.toml`: a list of names
/// (`grants = ["log", "state"]`), or a table of each grant's own table
/// (`[hooks."<slug>".grants.exec]`, `log = {}`).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(untagged)]
pub(crate) enum Declared {
    /// The list form.
    Names(Vec<String>),
    /// The table form.
    Tables(BTreeMap<String, toml::Value>),
}

/// What is wrong with a declaration, and how to fix it.
pub(crate) struct Misdeclared {
    pub(crate) message: String,
    pub(crate) fix: String,
}

impl Declared {
    /// The grants it names.
    pub(crate) fn names(&self) -> BTreeSet<String> {
        match self {
            Declared::Names(list) => list.iter().cloned().collect(),
            Declared::Tables(map) => map.keys().cloned().collect(),
        }
    }

    /// Each named grant's table read by its grant (only those with
    /// settings), and what is wrong, for `[table]`.
    pub(crate) fn read(&self, table: &str) -> (BTreeMap<String, GrantTable>, Vec<Misdeclared>) {
        let declared: Vec<(&String, Option<&toml::Value>)> = match self {
            Declared::Names(list) => list.iter().map(|n| (n, None)).collect(),
            Declared::Tables(map) => map.iter().map(|(n, v)| (n, Some(v))).collect(),
        };
        let mut tables = BTreeMap::new();
        let mut wrong = Vec::new();
        for (name, value) in declared {
            let Some(grant) = named(name) else {
                wrong.push(Misdeclared {
                    message: format!("{table} grants unknown capability `{name}`"),
                    fix: format!("grant only {}", CAPABILITIES.join(", ")),
                });
                continue;
            };
            match (grant.table)(value) {
                Ok(t) if t.is_empty() => {}
                Ok(t) => {
                    tables.insert(name.clone(), t);
                }
                Err(problems) => wrong.extend(problems.into_iter().map(|p| Misdeclared {
                    message: format!("{table} grants.{name} {p}"),
                    fix: format!(
                        "write the table as docs/configuration.md shows ([{table}.grants.{name}])"
                    ),
                })),
            }
        }
        (tables, wrong)
    }
}

/// Links the world types of every version and each grant's host functions,
/// but `http`, which a sandbox links only when some hook may use it.
pub(crate) fn link(linker: &mut Linker<StoreData>) -> wasmtime::Result<()> {
    v0_4_0::hookrt::hook::types::add_to_linker::<_, HasSelf<_>>(linker, |s| s)?;
    v0_3_0::hookrt::hook::types::add_to_linker::<_, HasSelf<_>>(linker, |s| s)?;
    v0_2_0::hookrt::hook::types::add_to_linker::<_, HasSelf<_>>(linker, |s| s)?;
    v0_1_0::hookrt::hook::types::add_to_linker::<_, HasSelf<_>>(linker, |s| s)?;
    for grant in ALL.into_iter().filter(|g| g.name != http::GRANT.name) {
        (grant.link)(linker)?;
    }
    Ok(())
}

impl v0_4_0::hookrt::hook::types::Host for StoreData {}
impl v0_3_0::hookrt::hook::types::Host for StoreData {}
impl v0_2_0::hookrt::hook::types::Host for StoreData {}
impl v0_1_0::hookrt::hook::types::Host for StoreData {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grant_has_one_name_and_gates_its_own_interfaces() {
        let names: Vec<&str> = ALL.iter().map(|g| g.name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(names, sorted, "ALL is sorted by name, without duplicates");
        for g in ALL {
            for i in g.interfaces {
                assert_eq!(gating(i).map(|h| h.name), Some(g.name), "{i}");
                assert!(!DESIGNED.contains(i), "{i} is provided");
            }
        }
        assert_eq!(
            ALL.iter()
                .filter(|g| g.default)
                .map(|g| g.name)
                .collect::<Vec<_>>(),
            ["log"]
        );
    }
}
