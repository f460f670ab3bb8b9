//! Test hook: denies every requested tool call.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct DenyAll;

impl DenyAll {
    fn requested(&mut self, event: &Event, _cx: &Context) -> HookResult<Vec<Approval>> {
        let data: ActionsRequested = event.data()?;
        Ok(data
            .actions
            .iter()
            .map(|_| Approval::deny("deny_all says no"))
            .collect())
    }
}

hookrt_sdk::define_hook!(DenyAll {
    "actions.requested" => requested,
});
