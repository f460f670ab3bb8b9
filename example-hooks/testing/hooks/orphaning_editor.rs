//! Test hook, an invalid edit: removes the last tool result, orphaning its call.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct OrphaningEditor;

impl OrphaningEditor {
    fn step(&mut self, event: &Event, _cx: &Context) -> HookResult<Option<AgentInput>> {
        let data: StepCompleted = event.data()?;
        let Some(mut state) = data.state else {
            return Ok(None);
        };
        state.tool_results.pop();
        Ok(Some(state))
    }
}

hookrt_sdk::define_hook!(OrphaningEditor {
    "step.completed" => step,
});
