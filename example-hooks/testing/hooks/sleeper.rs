//! Hostile test hook: sleeps ten seconds on every event. A sleep waits inside
//! a host call (`wasi:clocks` subscribe + `wasi:io/poll`), where epoch
//! interruption never fires: the runtime must still end it at the deadline.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Sleeper;

impl Sleeper {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        std::thread::sleep(std::time::Duration::from_secs(10));
        log::info("woke up", &[]);
        Ok(())
    }
}

hookrt_sdk::define_hook!(Sleeper {
    "*" => any,
});
