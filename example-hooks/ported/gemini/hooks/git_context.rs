// Ported from gemini-docs-git-context: github.com/google-gemini/gemini-cli@0d5b7db docs/hooks/writing-hooks.md (inject-context.sh)
//! Before Gemini CLI's agent starts on a prompt (`BeforeAgent`), add the
//! five latest commits as context, as the original does with
//! `git log -5 --oneline`: here git runs through the `exec` grant with that
//! fixed template (no placeholder; it reads the project, writes nothing).

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct GitContext;

#[hookrt_sdk::hook]
impl Hook for GitContext {
    type Config = NoConfig;

    // Watched, never voted on: a git that fails blocks no prompt.
    fn prompt_submitted_observed(&mut self, _data: PromptSubmitted, _event: &Event, _cx: &Context) -> HookResult {
        let ran = exec::run("log", &[])?;
        let commits = String::from_utf8_lossy(&ran.stdout);
        if ran.success() && !commits.trim().is_empty() {
            context::add(format!("Recent commits:\n{}", commits.trim_end()));
        }
        Ok(())
    }
}
