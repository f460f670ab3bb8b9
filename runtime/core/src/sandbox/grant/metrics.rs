//! The `metrics` grant: counters and gauges aggregated per hook by the host
//! (`sandbox/metrics.rs`).

use wasmtime::component::{HasSelf, Linker};

use super::{Grant, no_table};
use crate::sandbox::host::StoreData;
use crate::sandbox::wit::{v0_2_0, v0_3_0, v0_4_0};

/// The `metrics` grant.
pub(crate) const GRANT: Grant = Grant {
    name: "metrics",
    interfaces: &["hookrt:hook/metrics"],
    gives: "counters and gauges, aggregated per hook",
    default: false,
    needs_lock: false,
    table: no_table,
    link,
    needs_project: false,
    resolve: None,
};

fn link(l: &mut Linker<StoreData>) -> wasmtime::Result<()> {
    v0_4_0::hookrt::hook::metrics::add_to_linker::<_, HasSelf<_>>(l, |s| s)?;
    v0_3_0::hookrt::hook::metrics::add_to_linker::<_, HasSelf<_>>(l, |s| s)?;
    v0_2_0::hookrt::hook::metrics::add_to_linker::<_, HasSelf<_>>(l, |s| s)
}

/// One world's `metrics` host (the functions are the same in every version).
macro_rules! metrics_host {
    ($v:ident) => {
        impl $v::hookrt::hook::metrics::Host for StoreData {
            fn counter(&mut self, name: String, delta: u64, labels: Vec<(String, String)>) {
                self.metrics.counter(&name, delta, labels)
            }

            fn gauge(&mut self, name: String, value: f64, labels: Vec<(String, String)>) {
                self.metrics.gauge(&name, value, labels)
            }
        }
    };
}

metrics_host!(v0_4_0);
metrics_host!(v0_3_0);
metrics_host!(v0_2_0);
