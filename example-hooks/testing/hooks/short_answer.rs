//! Test hook, a malformed decision answer: allows one call whatever was
//! requested (two calls get one approval). The runtime must fail closed.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct ShortAnswer;

impl ShortAnswer {
    fn requested(&mut self, _event: &Event, _cx: &Context) -> HookResult<Vec<Approval>> {
        Ok(vec![Approval::Allow])
    }
}

hookrt_sdk::define_hook!(ShortAnswer {
    "actions.requested" => requested,
});
