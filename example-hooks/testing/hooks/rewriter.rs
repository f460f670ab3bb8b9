//! Test hook (world 0.3.0): rewrites each requested call's `command` by
//! appending its configured `suffix`, allows or abstains as configured, and
//! adds as context the command as it received it, so a test can see that a
//! later rewriter starts from an earlier one's result. With `permission =
//! true` it does the same to a permission request's input (allowing it, the
//! only answer that carries a rewrite); without, it abstains there.
//!
//! `config = { suffix = " --dry-run", allow = true, not_object = false,
//! permission = false }`; `not_object = true` answers a rewrite that is not a
//! JSON object (a broken policy: it must fail closed).

use hookrt_sdk::prelude::*;

#[derive(Deserialize, Default)]
#[serde(crate = "hookrt_sdk::serde")]
pub struct Config {
    suffix: String,
    #[serde(default)]
    allow: bool,
    #[serde(default)]
    not_object: bool,
    #[serde(default)]
    permission: bool,
}

#[derive(Default)]
pub struct Rewriter {
    config: Config,
}

#[hookrt_sdk::hook]
impl Hook for Rewriter {
    type Config = Config;

    fn configure(&mut self, config: Config) -> HookResult {
        self.config = config;
        Ok(())
    }

    fn actions_requested_rewrite(
        &mut self,
        data: ActionsRequested,
        _event: &Event,
        _cx: &Context,
    ) -> HookResult<Vec<CallAnswer>> {
        let approval = if self.config.allow {
            Approval::Allow
        } else {
            Approval::Abstain
        };
        Ok(data
            .actions
            .iter()
            .map(|a| {
                let mut input = a.input.clone();
                // Cline's shell tool takes a list of commands: each is rewritten.
                if let Some(list) = input.get_mut("commands").and_then(|c| c.as_array_mut()) {
                    for c in list.iter_mut() {
                        let command = c.as_str().unwrap_or_default().to_owned();
                        context::add(format!("saw `{command}`"));
                        *c = format!("{command}{}", self.config.suffix).into();
                    }
                } else {
                    let command = a.input["command"].as_str().unwrap_or_default();
                    context::add(format!("saw `{command}`"));
                    input["command"] = format!("{command}{}", self.config.suffix).into();
                }
                if self.config.not_object {
                    input = serde_json::json!([input]);
                }
                CallAnswer::rewrite(approval.clone(), input)
            })
            .collect())
    }

    fn permission_requested_rewrite(
        &mut self,
        data: PermissionRequested,
        _event: &Event,
        _cx: &Context,
    ) -> HookResult<PermissionAnswer> {
        if !self.config.permission {
            return Ok(PermissionAnswer::Abstain);
        }
        let command = data.input["command"].as_str().unwrap_or_default();
        context::add(format!("saw `{command}`"));
        let mut input = data.input.clone();
        input["command"] = format!("{command}{}", self.config.suffix).into();
        Ok(PermissionAnswer::AllowRewritten(input))
    }
}
