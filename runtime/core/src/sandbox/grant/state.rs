//! The `state` grant: the hook's own key-value store, kept by the host
//! (`sandbox/state.rs`), surviving restarts, capped in size.

use wasmtime::component::{HasSelf, Linker};

use super::{Grant, no_table};
use crate::sandbox::host::StoreData;
use crate::sandbox::wit::{v0_2_0, v0_3_0, v0_4_0};

/// The `state` grant.
pub(crate) const GRANT: Grant = Grant {
    name: "state",
    interfaces: &["hookrt:hook/state"],
    gives: "its own key-value store, capped",
    default: false,
    needs_lock: false,
    table: no_table,
    link,
    needs_project: false,
    resolve: None,
};

fn link(l: &mut Linker<StoreData>) -> wasmtime::Result<()> {
    v0_4_0::hookrt::hook::state::add_to_linker::<_, HasSelf<_>>(l, |s| s)?;
    v0_3_0::hookrt::hook::state::add_to_linker::<_, HasSelf<_>>(l, |s| s)?;
    v0_2_0::hookrt::hook::state::add_to_linker::<_, HasSelf<_>>(l, |s| s)
}

/// One world's `state` host (the functions are the same in every version).
macro_rules! state_host {
    ($v:ident) => {
        impl $v::hookrt::hook::state::Host for StoreData {
            fn get(&mut self, key: String) -> Option<Vec<u8>> {
                self.state.get(&key)
            }

            fn set(&mut self, key: String, value: Vec<u8>) -> Result<(), String> {
                self.state.set(&key, &value)
            }

            fn delete(&mut self, key: String) {
                self.state.delete(&key)
            }
        }
    };
}

state_host!(v0_4_0);
state_host!(v0_3_0);
state_host!(v0_2_0);
