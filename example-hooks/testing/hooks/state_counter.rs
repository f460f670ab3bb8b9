//! Test hook: counts its deliveries in host state under `count`, so the count survives
//! fresh instances and restarts; logs it with the field `count`.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct StateCounter;

impl StateCounter {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        let count = state::get_json::<u64>("count")?.unwrap_or(0) + 1;
        state::set_json("count", &count)?;
        log::info("counted", &[("count", &count.to_string())]);
        Ok(())
    }
}

hookrt_sdk::define_hook!(StateCounter {
    "*" => any,
});
