//! The `secret` grant: a request carrying a host secret the hook never sees.
//!
//! The table (`table.rs`) is operator configuration: each secret's source,
//! the origins it is bound to and where in a request it goes; `hookrt.lock`
//! pins it (never a value), and a folder whose hooks hold `secret` does not
//! load without a lock. At load each value is read (`source.rs`: the
//! environment, or a file of the user's, mode 0600) and handed to the
//! runtime's redactor, which masks it as a class wherever hookrt writes. A
//! `send` (`policy.rs`, `send.rs`) checks the origin, puts the value in and
//! masks it out of what comes back; each use is a `[hookrt] secret` line in
//! the delivery's record, which the journal keeps.

pub(crate) mod policy;
mod send;
pub(crate) mod source;
pub(crate) mod table;

use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::{HasSelf, Linker};

pub(crate) use policy::Policy;
pub use table::Table;

use super::held::{self, Arming, Refusal, Resolving};
use super::{Grant, GrantTable};
use crate::sandbox::host::StoreData;
use crate::sandbox::wit::v0_4_0;
use crate::sandbox::wit::v0_4_0::hookrt::hook::secret::{Request, Response, SecretError};

/// The `secret` grant.
pub(crate) const GRANT: Grant = Grant {
    name: "secret",
    interfaces: &["hookrt:hook/secret"],
    gives: "sends requests carrying the secrets of its secret table, to their origins only",
    default: false,
    needs_lock: true,
    table: |v| table::parse(v).map(GrantTable::of),
    link,
    needs_project: false,
    resolve: Some(resolve),
};

/// The grant as a loaded hook holds it: each value read (or why it is not).
#[derive(Debug)]
struct Loaded(Arc<Policy>);

/// Reads each value where the table says: a file others may read, or one
/// that cannot be read, refuses the hook.
fn resolve(table: &GrantTable, _: &Resolving<'_>) -> Result<Option<Arc<dyn held::Held>>, Refusal> {
    let Some(table) = table.get::<Table>() else {
        return Ok(None);
    };
    held::kept(
        Policy::resolve(table),
        "make the secret's file the user's own, mode 0600, holding the value alone (docs/configuration.md, the `secret` grant)",
        Loaded,
    )
}

impl held::Held for Loaded {
    fn arm(&self, data: &mut StoreData, _: &Arming<'_>) {
        data.grants.put(GRANT.name, self.0.clone());
    }

    fn audit(&self) -> (&'static str, &'static str, Vec<String>) {
        ("may_send", "may send", self.0.audit_lines())
    }

    fn masked(&self) -> Vec<(String, String)> {
        self.0.values()
    }
}

fn link(l: &mut Linker<StoreData>) -> wasmtime::Result<()> {
    v0_4_0::hookrt::hook::secret::add_to_linker::<_, HasSelf<_>>(l, |s| s)
}

impl v0_4_0::hookrt::hook::secret::Host for StoreData {
    fn send(&mut self, name: String, request: Request) -> Result<Response, SecretError> {
        let Some(policy) = self.grants.get::<Arc<Policy>>(GRANT.name).cloned() else {
            return Err(SecretError::Unknown(
                "this hook holds no secret grant".to_owned(),
            ));
        };
        let start = Instant::now();
        let result = policy.send(&name, &request, self.deadline);
        self.capture.record(
            format!("secret {name}"),
            use_fields(&request, &result, start),
        );
        result
    }
}

/// The fields of one use's `[hookrt] secret` line: where it went (the URL
/// as the hook wrote it: the value is never in it), how it ended, how long,
/// how many bytes.
fn use_fields(
    request: &Request,
    result: &Result<Response, SecretError>,
    start: Instant,
) -> Vec<(String, String)> {
    let mut fields = vec![
        ("method".to_owned(), request.method.clone()),
        ("url".to_owned(), request.url.clone()),
        ("request_bytes".to_owned(), request.body.len().to_string()),
    ];
    match result {
        Ok(r) => {
            fields.push(("status".into(), r.status.to_string()));
            fields.push(("response_bytes".into(), r.body.len().to_string()));
        }
        Err(e) => fields.push(("refused".into(), format!("{e:?}"))),
    }
    fields.push((
        "duration_ms".into(),
        start.elapsed().as_millis().to_string(),
    ));
    fields
}
