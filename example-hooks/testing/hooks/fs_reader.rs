//! Test hook: tries to read `/etc/hostname` and logs whether it worked. Using `std::fs`
//! makes the component import `wasi:filesystem/*`, which no hook is granted: the host
//! must refuse this hook at load, so the handler should never run.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct FsReader;

impl FsReader {
    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {
        match std::fs::read_to_string("/etc/hostname") {
            Ok(text) => {
                let len = text.len().to_string();
                log::warn(
                    "fs read succeeded",
                    &[("event_id", event.id()), ("bytes", &len)],
                );
            }
            Err(err) => {
                let err = err.to_string();
                log::info(
                    "fs read failed",
                    &[("event_id", event.id()), ("error", &err)],
                );
            }
        }
        Ok(())
    }
}

hookrt_sdk::define_hook!(FsReader {
    "*" => any,
});
