//! Test hook: asks a human before `http_fetch`, abstains on every other call.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct AskNetwork;

impl AskNetwork {
    fn requested(&mut self, event: &Event, _cx: &Context) -> HookResult<Vec<Approval>> {
        let data: ActionsRequested = event.data()?;
        Ok(data
            .actions
            .iter()
            .map(|action| match action.tool.as_str() {
                "http_fetch" => Approval::ask("ask_network: allow `http_fetch`?"),
                _ => Approval::Abstain,
            })
            .collect())
    }
}

hookrt_sdk::define_hook!(AskNetwork {
    "actions.requested" => requested,
});
