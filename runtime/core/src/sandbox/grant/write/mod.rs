//! The `write` grant: append to the one file, or write files inside the one
//! folder, its table names, relative to the project folder.
//!
//! The table (`table.rs`) is operator configuration, like `exec`'s: a folder
//! whose hooks hold `write` does not load without a lock pinning it, and a
//! changed table is refused until locked again. The project is resolved at
//! load ([`Policy::resolve`]); each write opens its file beneath the project
//! one component at a time (`open.rs`: no `..`, no absolute path, no symlink
//! out, no hard link), under a cap per write, per delivery and per file, and
//! is a `[hookrt] write` line in the delivery's record.

mod open;
pub(crate) mod policy;
pub(crate) mod table;

use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::{HasSelf, Linker};

pub(crate) use policy::Policy;
pub(crate) use policy::Writer;
pub use table::{Place, Table};

use super::held::{self, Arming, Refusal, Resolving};
use super::{Grant, GrantTable};
use crate::sandbox::host::StoreData;
use crate::sandbox::wit::v0_4_0;
use crate::sandbox::wit::v0_4_0::hookrt::hook::write::WriteError;

/// The `write` grant.
pub(crate) const GRANT: Grant = Grant {
    name: "write",
    interfaces: &["hookrt:hook/write"],
    gives: "appends to the one file, or writes files in the one folder, of its write table",
    default: false,
    needs_lock: true,
    table: |v| table::parse(v).map(GrantTable::of),
    link,
    needs_project: true,
    resolve: Some(resolve),
};

/// The grant as a loaded hook holds it: its place in the project folder.
#[derive(Debug)]
struct Loaded(Arc<Policy>);

/// Resolves the table's place for writes in the project folder, never one
/// an event names.
fn resolve(table: &GrantTable, at: &Resolving<'_>) -> Result<Option<Arc<dyn held::Held>>, Refusal> {
    let (Some(table), Some(root)) = (table.get::<Table>(), at.project) else {
        return Ok(None);
    };
    held::kept(
        Policy::resolve(table, root),
        "check the project folder's permissions",
        Loaded,
    )
}

impl held::Held for Loaded {
    /// Its bytes are counted from zero each delivery.
    fn arm(&self, data: &mut StoreData, _: &Arming<'_>) {
        data.grants.put(
            GRANT.name,
            Writer {
                policy: self.0.clone(),
                used: 0,
            },
        );
    }

    fn audit(&self) -> (&'static str, &'static str, Vec<String>) {
        ("may_write", "may write", self.0.audit_lines())
    }
}

fn link(l: &mut Linker<StoreData>) -> wasmtime::Result<()> {
    v0_4_0::hookrt::hook::write::add_to_linker::<_, HasSelf<_>>(l, |s| s)
}

impl StoreData {
    /// Runs one write through the hook's grant, counting and recording it.
    fn write_with(
        &mut self,
        what: &str,
        path: Option<&str>,
        bytes: &[u8],
        op: impl FnOnce(&Policy, u64) -> Result<(), WriteError>,
    ) -> Result<(), WriteError> {
        let start = Instant::now();
        let Some(writer) = self.grants.get_mut::<Writer>(GRANT.name) else {
            return Err(WriteError::Denied(
                "this hook holds no write grant".to_owned(),
            ));
        };
        let result = op(&writer.policy, writer.used);
        if result.is_ok() {
            writer.used += bytes.len() as u64;
        }
        let mut fields = Vec::new();
        if let Some(p) = path {
            fields.push(("path".to_owned(), p.to_owned()));
        }
        fields.push(("bytes".to_owned(), bytes.len().to_string()));
        fields.push((
            "outcome".to_owned(),
            match &result {
                Ok(()) => "written".to_owned(),
                Err(e) => format!("{e:?}"),
            },
        ));
        fields.push((
            "duration_us".into(),
            start.elapsed().as_micros().to_string(),
        ));
        self.capture.record(format!("write {what}"), fields);
        result
    }
}

impl v0_4_0::hookrt::hook::write::Host for StoreData {
    fn append(&mut self, bytes: Vec<u8>) -> Result<(), WriteError> {
        self.write_with("append", None, &bytes, |p, used| p.append(&bytes, used))
    }

    fn write_file(&mut self, path: String, bytes: Vec<u8>) -> Result<(), WriteError> {
        self.write_with("file", Some(&path), &bytes, |p, used| {
            p.write_file(&path, &bytes, used)
        })
    }
}
