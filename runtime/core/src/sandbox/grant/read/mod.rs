//! The `read` grant: the project folder, read-only.
//!
//! Which folder is the project is the host's decision (`hooks::project`),
//! made at load, never an event's. The table (`table.rs`) only narrows: it
//! adds deny patterns to the defaults (`deny.rs`), which it cannot remove,
//! and caps the bytes of a file and of a delivery. So it is not pinned by
//! the lock as `exec`'s is: a planted table can refuse more, never read
//! more. Each path is resolved inside the project and opened without
//! following a symlink (`policy.rs`); each use is a `[hookrt] read` line in
//! the delivery's record (what, how many bytes, the outcome, how long).

mod deny;
pub(crate) mod policy;
pub(crate) mod table;

use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::{HasSelf, Linker};

pub(crate) use policy::Access;
pub(crate) use policy::Policy;
pub use table::Table;

use super::held::{self, Arming, Refusal, Resolving};
use super::{Grant, GrantTable};
use crate::sandbox::host::StoreData;
use crate::sandbox::wit::v0_4_0;
use crate::sandbox::wit::v0_4_0::hookrt::hook::read::ReadError;

/// The `read` grant.
pub(crate) const GRANT: Grant = Grant {
    name: "read",
    interfaces: &["hookrt:hook/read"],
    gives: "reads the project folder, read-only, but what its deny patterns refuse",
    default: false,
    needs_lock: false,
    table: |v| table::parse(v).map(GrantTable::of),
    link,
    needs_project: true,
    resolve: Some(resolve),
};

/// The grant as a loaded hook holds it: the project folder, opened.
#[derive(Debug)]
struct Loaded(Arc<Policy>);

/// Opens the project folder for reads under the table.
fn resolve(table: &GrantTable, at: &Resolving<'_>) -> Result<Option<Arc<dyn held::Held>>, Refusal> {
    let (Some(table), Some(root)) = (table.get::<Table>(), at.project) else {
        return Ok(None);
    };
    held::kept(
        Policy::open(table, root),
        "check the project folder's permissions",
        Loaded,
    )
}

impl held::Held for Loaded {
    /// Its bytes are counted from zero each delivery.
    fn arm(&self, data: &mut StoreData, _: &Arming<'_>) {
        data.grants.put(GRANT.name, Access::new(self.0.clone()));
    }

    fn audit(&self) -> (&'static str, &'static str, Vec<String>) {
        ("may_read", "may read", self.0.audit_lines())
    }
}

fn link(l: &mut Linker<StoreData>) -> wasmtime::Result<()> {
    v0_4_0::hookrt::hook::read::add_to_linker::<_, HasSelf<_>>(l, |s| s)
}

impl Policy {
    /// What `audit` says of it: the folder and caps, then every pattern
    /// refused (the defaults, then the table's).
    pub(crate) fn audit_lines(&self) -> Vec<String> {
        let t = &self.table;
        vec![
            format!(
                "{}, read-only: files up to {} bytes, {} bytes per delivery; no `..`, no absolute path, no symlink out",
                self.project.display(),
                t.file_bytes,
                t.delivery_bytes
            ),
            format!("never {}", self.deny.join(" ")),
        ]
    }
}

impl StoreData {
    /// One use of the read grant: `op` on `path` within what the delivery
    /// has left, its bytes counted against that, and a `[hookrt] read` line
    /// recorded, refused or not.
    fn read_use<T>(
        &mut self,
        op: &str,
        path: &str,
        run: impl FnOnce(&Policy, &str, u64) -> Result<(T, u64), ReadError>,
    ) -> Result<T, ReadError> {
        let start = Instant::now();
        let deadline = self.deadline;
        let Some(access) = self.grants.get_mut::<Access>(GRANT.name) else {
            return Err(ReadError::Denied(
                "this hook holds no read grant".to_owned(),
            ));
        };
        let left = access.left(deadline);
        let result = run(&access.policy, path, left);
        let size = result.as_ref().map_or(0, |(_, bytes)| *bytes);
        access.used += size;
        self.capture.record(
            "read".to_owned(),
            use_fields(op, path, size, result.as_ref().err(), start),
        );
        result.map(|(found, _)| found)
    }
}

impl v0_4_0::hookrt::hook::read::Host for StoreData {
    fn read_file(&mut self, path: String) -> Result<Vec<u8>, ReadError> {
        self.read_use("read-file", &path, |policy, path, left| {
            policy.read_file(path, left).map(|bytes| {
                let size = bytes.len() as u64;
                (bytes, size)
            })
        })
    }

    fn list_dir(&mut self, path: String) -> Result<Vec<String>, ReadError> {
        self.read_use("list-dir", &path, |policy, path, left| {
            policy.list_dir(path, left)
        })
    }
}

/// Most bytes of the path a `[hookrt] read` line quotes.
const QUOTED_PATH_BYTES: usize = 256;

/// The fields of one use's `[hookrt] read` line.
fn use_fields(
    op: &str,
    path: &str,
    bytes: u64,
    refused: Option<&ReadError>,
    start: Instant,
) -> Vec<(String, String)> {
    let mut cut = path.len().min(QUOTED_PATH_BYTES);
    while !path.is_char_boundary(cut) {
        cut -= 1;
    }
    let outcome = match refused {
        None => "ok".to_owned(),
        Some(ReadError::Denied(why)) => format!("denied: {why}"),
        Some(ReadError::NotFound) => "not found".to_owned(),
        Some(ReadError::TooLarge(size)) => format!("too large: {size} bytes"),
        Some(ReadError::Failed(why)) => format!("failed: {why}"),
    };
    vec![
        ("op".into(), op.into()),
        ("path".into(), path[..cut].into()),
        ("bytes".into(), bytes.to_string()),
        ("outcome".into(), outcome),
        (
            "duration_us".into(),
            start.elapsed().as_micros().to_string(),
        ),
    ]
}
