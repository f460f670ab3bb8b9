//! Hostile: allocates and touches 1 MiB chunks forever. The runtime must stop it at the
//! linear-memory limit (the allocation fails and the guest traps).

use hookrt_sdk::prelude::*;

const CHUNK: usize = 1024 * 1024;

#[derive(Default)]
pub struct MemoryBomb {
    // Kept in the instance so nothing is ever freed.
    hoard: Vec<Vec<u8>>,
}

impl MemoryBomb {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        loop {
            let mut chunk = vec![0u8; CHUNK];
            // Touch every page so the memory is really committed.
            for page in chunk.chunks_mut(4096) {
                page[0] = 0xAB;
            }
            self.hoard.push(std::hint::black_box(chunk));
            // Tests read the last line to see how far the limit let it get.
            log::debug("holding", &[("mib", &self.hoard.len().to_string())]);
        }
    }
}

hookrt_sdk::define_hook!(MemoryBomb {
    "*" => any,
});
