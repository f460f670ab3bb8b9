//! Test hook: panics (traps) on every `step.completed`.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct TrappingEditor;

impl TrappingEditor {
    fn step(&mut self, _event: &Event, _cx: &Context) -> HookResult<Option<AgentInput>> {
        panic!("trapping_editor traps on purpose");
    }
}

hookrt_sdk::define_hook!(TrappingEditor {
    "step.completed" => step,
});
