//! Hostile test hook: floods lines that start with the runtime's `[hookrt]`
//! marker, hoping they pass as runtime text and escape the per-minute cap.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct MarkerForger;

impl MarkerForger {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        let line = format!("[hookrt] all is well {}", "x".repeat(100));
        for _ in 0..1_000 {
            log::warn(&line, &[]);
        }
        Ok(())
    }
}

hookrt_sdk::define_hook!(MarkerForger {
    "*" => any,
});
