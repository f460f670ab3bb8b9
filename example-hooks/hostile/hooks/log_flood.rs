//! Hostile: 100 000 log lines of 1 KiB and 1 MiB on stdout, then success. The runtime
//! must cap log bytes/lines per delivery and not buffer stdout without bound.

use std::io::Write;

use hookrt_sdk::prelude::*;

const LINES: usize = 100_000;
const LINE_BYTES: usize = 1024;
const STDOUT_BYTES: usize = 1024 * 1024;

#[derive(Default)]
pub struct LogFlood;

impl LogFlood {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        let message = "x".repeat(LINE_BYTES);
        for _ in 0..LINES {
            log::info(&message, &[]);
        }
        let block = "y".repeat(1023);
        for _ in 0..STDOUT_BYTES / 1024 {
            println!("{block}");
        }
        // Output errors (stdout closed or refused) are the runtime's business, not ours.
        let _ = std::io::stdout().flush();
        Ok(())
    }
}

hookrt_sdk::define_hook!(LogFlood {
    "*" => any,
});
