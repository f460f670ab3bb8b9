//! The `http` grant: `wasi:http` outgoing requests, only to the origins in
//! the hook's `http_allow` list (the policy is `sandbox/http.rs`, the checks
//! on each request `sandbox/egress.rs`).

use wasmtime::component::Linker;

use super::{Grant, no_table};
use crate::sandbox::host::StoreData;

/// The `http` grant.
pub(crate) const GRANT: Grant = Grant {
    name: "http",
    interfaces: &["wasi:http/outgoing-handler", "wasi:http/types"],
    gives: "outbound HTTP to the origins in http_allow",
    default: false,
    needs_lock: false,
    table: no_table,
    link,
    needs_project: false,
    resolve: None,
};

/// Linked only by a sandbox some hook of which holds the grant
/// (`engine::Links::http`): it is a twentieth of a one-event process.
fn link(l: &mut Linker<StoreData>) -> wasmtime::Result<()> {
    wasmtime_wasi_http::p2::add_only_http_to_linker_sync(l)
}
