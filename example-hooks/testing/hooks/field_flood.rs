//! Hostile test hook: one log line with ten thousand empty fields (free by
//! bytes): only a cap on fields per line bounds what the host keeps.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct FieldFlood;

impl FieldFlood {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        let fields = vec![("", ""); 10_000];
        log::info("many fields", &fields);
        Ok(())
    }
}

hookrt_sdk::define_hook!(FieldFlood {
    "*" => any,
});
