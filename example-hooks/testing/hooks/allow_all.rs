//! Test hook: allows every requested tool call.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct AllowAll;

impl AllowAll {
    fn requested(&mut self, event: &Event, _cx: &Context) -> HookResult<Vec<Approval>> {
        let data: ActionsRequested = event.data()?;
        Ok(vec![Approval::Allow; data.actions.len()])
    }
}

hookrt_sdk::define_hook!(AllowAll {
    "actions.requested" => requested,
});
