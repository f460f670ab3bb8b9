//! The `protect-paths` pack's component: every agent's file and shell
//! calls judged by `hookrt_pack_rules::protect_paths` with the settings of
//! `[packs.protect-paths]` (docs/packs/protect-paths.md). One answer per
//! requested call: the settings' answer with the findings, or abstain.

use hookrt_pack_rules::protect_paths::{Checker, Settings};
use hookrt_pack_rules::{Answer, tools};
use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct ProtectPaths {
    checker: Option<Checker>,
}

#[hookrt_sdk::hook]
impl Hook for ProtectPaths {
    type Config = Settings;

    fn configure(&mut self, config: Settings) -> HookResult {
        self.checker = Some(Checker::new(config).map_err(|e| HookError::new(e.message))?);
        Ok(())
    }

    fn actions_requested(
        &mut self,
        data: ActionsRequested,
        event: &Event,
        _cx: &Context,
    ) -> HookResult<Vec<Approval>> {
        let checker = self
            .checker
            .as_ref()
            .ok_or_else(|| HookError::new("protect-paths was not configured"))?;
        let json = event.data_json()?;
        Ok(data
            .actions
            .iter()
            .map(|a| judge(checker, &a.tool, &a.input, &tools::call_folder(&json, &a.input)))
            .collect())
    }
}

/// The answer for one call.
fn judge(checker: &Checker, tool: &str, input: &serde_json::Value, cwd: &str) -> Approval {
    let found = checker.check(tool, input, Some(cwd), Some(cwd));
    if found.is_empty() {
        return Approval::Abstain;
    }
    let reasons: Vec<&str> = found.iter().map(|f| f.reason.as_str()).collect();
    let reason = format!("protect-paths: {}", reasons.join("; "));
    for f in &found {
        log::warn("caught", &[("rule", f.rule.as_str()), ("tool", tool)]);
    }
    match checker.answer() {
        Answer::Deny => Approval::deny(reason),
        Answer::Ask => Approval::ask(reason),
    }
}
