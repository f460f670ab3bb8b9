//! The `safe-shell` pack's component: every agent's shell call judged by
//! `hookrt_pack_rules::safe_shell` with the settings of `[packs.safe-shell]`
//! (docs/packs/safe-shell.md). One answer per requested call: the
//! settings' answer with the findings as its reason, or abstain.

use hookrt_pack_rules::safe_shell::{Checker, Settings};
use hookrt_pack_rules::{Answer, tools};
use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct SafeShell {
    checker: Option<Checker>,
}

#[hookrt_sdk::hook]
impl Hook for SafeShell {
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
            .ok_or_else(|| HookError::new("safe-shell was not configured"))?;
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
    let Some(command) = tools::shell_command(tool, input) else {
        return Approval::Abstain;
    };
    let found = checker.check(&command, Some(cwd), Some(cwd));
    if found.is_empty() {
        return Approval::Abstain;
    }
    let reasons: Vec<String> = found.iter().map(|f| format!("{} ({})", f.reason, f.rule)).collect();
    let reason = format!("safe-shell: {}", reasons.join("; "));
    for f in &found {
        log::warn("caught", &[("rule", f.rule.as_str()), ("tool", tool)]);
    }
    match checker.answer() {
        Answer::Deny => Approval::deny(reason),
        Answer::Ask => Approval::ask(reason),
    }
}
