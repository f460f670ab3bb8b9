//! Ported from anthropic-docs-bash-command-log (https://code.claude.com/docs/en/hooks-guide, quickstart: log bash commands).
//!
//! The original, a `PreToolUse` hook on `Bash`, appends each command and its
//! description (`No description` when it has none) to
//! `~/.claude/bash-command-log.txt` with `jq`. Here it watches
//! `actions.requested` without a vote (a failure denies nothing) and appends
//! the same line through the `write` grant, whose table names the one file
//! (relative to the project: `.claude/bash-command-log.txt`).

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct BashCommandLog;

#[hookrt_sdk::hook]
impl Hook for BashCommandLog {
    type Config = NoConfig;

    fn actions_requested_observed(
        &mut self,
        data: ActionsRequested,
        _event: &Event,
        _cx: &Context,
    ) -> HookResult {
        for call in data.actions.iter().filter(|a| a.tool == "Bash") {
            let command = call.input["command"].as_str().unwrap_or("");
            let description = call.input["description"]
                .as_str()
                .unwrap_or("No description");
            write::append(format!("{command} - {description}\n").as_bytes())?;
        }
        Ok(())
    }
}
