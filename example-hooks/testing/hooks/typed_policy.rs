//! Test hook (typed `Hook` trait): denies the tools listed in its typed config.
//!
//! `config = { blocked = ["run_shell"] }`; a config that does not fit `Config` (a missing
//! or mistyped `blocked`) refuses the hook at load with serde's message.

use hookrt_sdk::prelude::*;

#[derive(Deserialize)]
#[serde(crate = "hookrt_sdk::serde")]
pub struct Config {
    /// Tool names to deny.
    blocked: Vec<String>,
}

#[derive(Default)]
pub struct TypedPolicy {
    blocked: Vec<String>,
}

#[hookrt_sdk::hook]
impl Hook for TypedPolicy {
    type Config = Config;

    fn configure(&mut self, config: Config) -> HookResult {
        self.blocked = config.blocked;
        Ok(())
    }

    fn actions_requested(
        &mut self,
        data: ActionsRequested,
        _event: &Event,
        _cx: &Context,
    ) -> HookResult<Vec<Approval>> {
        Ok(data
            .actions
            .iter()
            .map(|a| {
                if self.blocked.contains(&a.tool) {
                    Approval::deny(format!("`{}` is blocked by config", a.tool))
                } else {
                    Approval::Abstain
                }
            })
            .collect())
    }
}
