//! Hostile (politely): returns an error for every event. The delivery must be recorded
//! as failed with this message.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Fails;

impl Fails {
    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {
        Err(HookError::new(format!(
            "refusing: this hook fails every event ({})",
            event.id()
        )))
    }
}

hookrt_sdk::define_hook!(Fails {
    "*" => any,
});
