//! Benign witness for sandbox tests: logs a data-free line and succeeds, proving other
//! hooks still run when a hostile one fails.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Witness;

impl Witness {
    fn any(&mut self, event: &Event, cx: &Context) -> HookResult {
        safe_log(event, cx);
        Ok(())
    }
}

hookrt_sdk::define_hook!(Witness {
    "*" => any,
});
