//! The `secrets` pack's component: secrets in a tool call's input, a
//! tool's output and the user's prompts, found by
//! `hookrt_pack_rules::secrets` with the settings of `[packs.secrets]`
//! (docs/packs/secrets.md). What it found is named by kind, never quoted.

use hookrt_pack_rules::secrets::{self, Action, Scanner, Settings};
use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Secrets {
    scanner: Option<Scanner>,
}

impl Secrets {
    fn scanner(&self) -> HookResult<&Scanner> {
        self.scanner
            .as_ref()
            .ok_or_else(|| HookError::new("secrets was not configured"))
    }
}

#[hookrt_sdk::hook]
impl Hook for Secrets {
    type Config = Settings;

    fn configure(&mut self, config: Settings) -> HookResult {
        self.scanner = Some(Scanner::new(config).map_err(|e| HookError::new(e.message))?);
        Ok(())
    }

    /// A secret in a call's input: deny, ask, or tell the model.
    fn actions_requested(
        &mut self,
        data: ActionsRequested,
        _event: &Event,
        _cx: &Context,
    ) -> HookResult<Vec<Approval>> {
        let scanner = self.scanner()?;
        let action = scanner.settings().input;
        Ok(data
            .actions
            .iter()
            .map(|a| {
                let kinds = if action == Action::Off { Vec::new() } else { scanner.find_in_json(&a.input) };
                if kinds.is_empty() {
                    return Approval::Abstain;
                }
                log::warn("secret in input", &[("tool", a.tool.as_str()), ("kinds", &kinds.join(","))]);
                let reason = secrets::input_reason(&a.tool, &kinds);
                match action {
                    Action::Deny => Approval::deny(reason),
                    Action::Ask => Approval::ask(reason),
                    Action::Context | Action::Off => {
                        context::add(reason);
                        Approval::Abstain
                    }
                }
            })
            .collect())
    }

    /// A secret in what a tool returned: the model is told not to repeat it.
    fn action_result(&mut self, data: ActionResult, _event: &Event, _cx: &Context) -> HookResult {
        let scanner = self.scanner()?;
        if scanner.settings().output == Action::Off {
            return Ok(());
        }
        let mut kinds = data.output.as_ref().map(|o| scanner.find_in_json(o)).unwrap_or_default();
        for k in data.error.as_deref().map(|e| scanner.find(e)).unwrap_or_default() {
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
        if !kinds.is_empty() {
            log::warn("secret in output", &[("tool", data.tool.as_str()), ("kinds", &kinds.join(","))]);
            context::add(secrets::output_context(&data.tool, &kinds));
        }
        Ok(())
    }

    /// A secret in a prompt: blocked before the model sees it, or the model told.
    fn prompt_submitted(&mut self, data: PromptSubmitted, _event: &Event, _cx: &Context) -> HookResult<Block> {
        let scanner = self.scanner()?;
        let action = scanner.settings().prompt;
        if action == Action::Off {
            return Ok(Block::Pass);
        }
        let kinds = scanner.find(&data.prompt);
        if kinds.is_empty() {
            return Ok(Block::Pass);
        }
        log::warn("secret in prompt", &[("kinds", &kinds.join(","))]);
        let reason = secrets::prompt_reason(&kinds);
        match action {
            Action::Deny | Action::Ask => Ok(Block::block(reason)),
            Action::Context | Action::Off => {
                context::add(reason);
                Ok(Block::Pass)
            }
        }
    }
}
