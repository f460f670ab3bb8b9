// Ported from disler-ruff-validator: github.com/disler/claude-code-hooks-mastery@052ad1c .claude/hooks/validators/ruff_validator.py
//! Ruff on each Python file Claude Code wrote (`PostToolUse` on `Write`):
//! the original runs `uvx ruff check <file>` and answers `decision: block`
//! with the lint errors, which Claude Code shows the model. Here the
//! pinned ruff runs through the `exec` grant (`check --no-cache {file}`,
//! `{file}` a read-only `path`: it writes no cache into the project) and
//! the errors reach the model as context on the same event.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct RuffValidator;

#[hookrt_sdk::hook]
impl Hook for RuffValidator {
    type Config = NoConfig;

    fn action_result(&mut self, data: ActionResult, _event: &Event, _cx: &Context) -> HookResult {
        if data.tool != "Write" {
            return Ok(());
        }
        let Some(path) = data
            .output
            .as_ref()
            .and_then(|o| o.get("filePath"))
            .and_then(|p| p.as_str())
            .filter(|p| p.ends_with(".py"))
        else {
            return Ok(());
        };
        let ran = exec::run("ruff", &[("file", path)])?;
        if ran.success() {
            return Ok(());
        }
        let found = String::from_utf8_lossy(&ran.stdout);
        context::add(format!("Lint check failed:\n{}", found.trim_end()));
        Ok(())
    }
}
