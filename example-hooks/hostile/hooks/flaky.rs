//! Hostile: panics on the third delivery an instance receives. Under the `reuse`
//! policy this proves a trapped instance is replaced by a fresh one (the count
//! starts again at 1); under `fresh` it never reaches 3.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Flaky {
    deliveries: u32,
}

impl Flaky {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        self.deliveries += 1;
        log::info("delivery", &[("n_in_instance", &self.deliveries.to_string())]);
        if self.deliveries == 3 {
            panic!("flaky hook fails the third delivery of an instance");
        }
        Ok(())
    }
}

hookrt_sdk::define_hook!(Flaky {
    "*" => any,
});
