//! Test hook: succeeds on every event; what matters is its build script.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct BuildMarker;

impl BuildMarker {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        Ok(())
    }
}

hookrt_sdk::define_hook!(BuildMarker {
    "*" => any,
});
