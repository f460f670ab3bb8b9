//! Hostile test hook: a million empty log lines, then one line with ten
//! thousand empty fields. Empty entries cost no bytes, so only caps on
//! entries (lines, fields per line) bound what the host keeps.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct EntryFlood;

impl EntryFlood {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        for _ in 0..1_000_000 {
            log::info("", &[]);
        }
        Ok(())
    }
}

hookrt_sdk::define_hook!(EntryFlood {
    "*" => any,
});
