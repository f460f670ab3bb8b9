//! Hostile: never returns. The runtime must stop it with fuel or the epoch deadline.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct InfiniteLoop;

impl InfiniteLoop {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        let mut n: u64 = 0;
        loop {
            // black_box keeps the optimizer from proving the loop has no effect.
            n = std::hint::black_box(n.wrapping_add(1));
        }
    }
}

hookrt_sdk::define_hook!(InfiniteLoop {
    "*" => any,
});
