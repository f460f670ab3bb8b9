//! Test hook, a valid edit: records the step index under its own key in
//! `extras` (its slug, as its context says: bare for a subagent's hook too).

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct ExtrasEditor;

impl ExtrasEditor {
    fn step(&mut self, event: &Event, cx: &Context) -> HookResult<Option<AgentInput>> {
        let data: StepCompleted = event.data()?;
        let Some(mut state) = data.state else {
            return Ok(None);
        };
        state.extras.insert(
            cx.slug().to_owned(),
            serde_json::json!({ "seen": data.index }),
        );
        Ok(Some(state))
    }
}

hookrt_sdk::define_hook!(ExtrasEditor {
    "step.completed" => step,
});
