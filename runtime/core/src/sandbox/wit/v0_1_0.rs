//! World 0.1.0: observe-only hooks. The host speaks the newest world; a
//! 0.1.0 hook gets the envelope converted down, and its log levels read up.

wasmtime::component::bindgen!({
    path: "../../wit/v0.1.0",
    world: "define-hook",
    ownership: Borrowing { duplicate_if_necessary: false },
});

use crate::sandbox::wit::v0_1_0::hookrt::hook::types as t;

older_world!();
