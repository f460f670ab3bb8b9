//! Test hook: panics (traps) on every decision event.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct TrappingDecider;

impl TrappingDecider {
    fn decide(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        panic!("trapping_decider traps on purpose");
    }
}

hookrt_sdk::define_hook!(TrappingDecider {
    "actions.requested" => decide,
    "file.edit.requested" => decide,
});
