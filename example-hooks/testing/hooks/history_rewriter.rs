//! Test hook, an invalid edit: rewrites the first message (immutable history).

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct HistoryRewriter;

impl HistoryRewriter {
    fn step(&mut self, event: &Event, _cx: &Context) -> HookResult<Option<AgentInput>> {
        let data: StepCompleted = event.data()?;
        let Some(mut state) = data.state else {
            return Ok(None);
        };
        if let Some(first) = state.messages.first_mut() {
            first.content = Some("rewritten by history_rewriter".to_owned());
        }
        Ok(Some(state))
    }
}

hookrt_sdk::define_hook!(HistoryRewriter {
    "step.completed" => step,
});
