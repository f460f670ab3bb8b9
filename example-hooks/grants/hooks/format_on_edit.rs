//! Format-on-edit (world 0.4.0, the `exec` grant): after the agent wrote or
//! edited a file, run the formatter the folder's exec table names on it.
//! Ported from Claude Code's hooks guide's first example (`PostToolUse` on
//! `Edit|Write` running `npx prettier --write "$file"`), with rustfmt, the
//! formatter of the pinned toolchain, for a test that installs nothing.
//!
//! The table names the program (`fmt`) and its template (`{file}` a
//! `writable-path`): the hook only names the file the agent edited.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct FormatOnEdit;

#[hookrt_sdk::hook]
impl Hook for FormatOnEdit {
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
        else {
            return Ok(());
        };
        let ran = exec::run("fmt", &[("file", path)])?;
        log::info(
            "formatted",
            &[
                ("file", path),
                ("status", &format!("{:?}", ran.status)),
                ("stderr", &String::from_utf8_lossy(&ran.stderr)),
            ],
        );
        Ok(())
    }
}
