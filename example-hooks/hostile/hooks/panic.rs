//! Hostile: panics, which traps the component. The delivery must fail, nothing else.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Panic;

impl Panic {
    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {
        panic!(
            "hostile hook panicked on purpose while handling {}",
            event.id()
        );
    }
}

hookrt_sdk::define_hook!(Panic {
    "*" => any,
});
