//! Test hook: logs what it reads from the wall clock and from randomness (through
//! `RandomState`'s random hash keys), so a replay can show both are pinned.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::time::{SystemTime, UNIX_EPOCH};

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct ClockReader;

#[hookrt_sdk::hook]
impl Hook for ClockReader {
    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
            .to_string();
        let hash = RandomState::new().hash_one(event.id()).to_string();
        log::info("read", &[("now", &now), ("hash", &hash)]);
        Ok(())
    }
}
