//! Test hook (typed `Hook` trait): counts requested tool calls without a vote.
//!
//! `actions_requested_observed` subscribes as `observe:actions.requested`: the hook sees
//! every tool request but its answer and its failure count for nothing. With
//! `config = { panic = true }` it panics on every request (a counter with a bug), which
//! must not deny a single tool call.

use hookrt_sdk::prelude::*;

#[derive(Deserialize, Default)]
#[serde(crate = "hookrt_sdk::serde")]
pub struct Config {
    /// Panic on every request, as a counter with a bug would.
    #[serde(default)]
    panic: bool,
}

#[derive(Default)]
pub struct ToolCounter {
    panic: bool,
}

#[hookrt_sdk::hook]
impl Hook for ToolCounter {
    type Config = Config;

    fn configure(&mut self, config: Config) -> HookResult {
        self.panic = config.panic;
        Ok(())
    }

    fn actions_requested_observed(
        &mut self,
        data: ActionsRequested,
        _event: &Event,
        _cx: &Context,
    ) -> HookResult {
        if self.panic {
            panic!("tool counter bug: index out of range");
        }
        let count = data.actions.len().to_string();
        log::info("tool calls counted", &[("count", &count)]);
        Ok(())
    }
}
