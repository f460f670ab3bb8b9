// Ported from anthropic-docs-prettier: https://code.claude.com/docs/en/hooks-guide (code formatting hook).
//! Prettier on each TypeScript file Claude Code edited (`PostToolUse` on
//! `Edit|Write`, `npx prettier --write "$file_path"` for `.ts` files), through
//! the `exec` grant: the table names the pinned `prettier` and its template
//! `--write {file}`, `{file}` a `writable-path`, so the program may write
//! that one file and nothing else.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Prettier;

#[hookrt_sdk::hook]
impl Hook for Prettier {
    type Config = NoConfig;

    fn action_result(&mut self, data: ActionResult, _event: &Event, _cx: &Context) -> HookResult {
        if !matches!(data.tool.as_str(), "Edit" | "Write" | "MultiEdit") {
            return Ok(());
        }
        let Some(path) = data
            .output
            .as_ref()
            .and_then(|o| o.get("filePath"))
            .and_then(|p| p.as_str())
            .filter(|p| p.ends_with(".ts"))
        else {
            return Ok(());
        };
        let ran = exec::run("prettier", &[("file", path)])?;
        if !ran.success() {
            // The guide's hook ignores prettier's failure (a syntax error
            // the model is about to fix); the log keeps it.
            log::warn(
                "prettier failed",
                &[
                    ("file", path),
                    ("stderr", &String::from_utf8_lossy(&ran.stderr)),
                ],
            );
        }
        Ok(())
    }
}
