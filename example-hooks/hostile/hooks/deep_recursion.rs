//! Hostile: unbounded non-tail recursion. The runtime must survive the guest's stack
//! overflow (a trap), not crash the host.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct DeepRecursion;

#[inline(never)]
#[allow(unconditional_recursion)] // the whole point of this hook
fn descend(depth: u64, frame: [u64; 16]) -> u64 {
    // The frame array and black_box make each call use real stack and keep the
    // recursion from being turned into a loop.
    let frame = std::hint::black_box(frame);
    let below = descend(std::hint::black_box(depth + 1), frame);
    below.wrapping_add(frame[(depth % 16) as usize])
}

impl DeepRecursion {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        let total = descend(0, [1; 16]);
        log::info("unreachable", &[("total", &total.to_string())]);
        Ok(())
    }
}

hookrt_sdk::define_hook!(DeepRecursion {
    "*" => any,
});
