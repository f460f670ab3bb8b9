// Ported from claudekit-typecheck-changed: github.com/carlrannaberg/claudekit@f22a4f9 cli/hooks/typecheck-changed.ts
//! The TypeScript compiler after each edit of a `.ts`/`.tsx` file
//! (`PostToolUse`): the original runs `tsc --noEmit` in the project and, on
//! errors, exits 2 with them, which Claude Code shows the model. Here the
//! pinned `tsc` runs through the `exec` grant (`--noEmit`, no placeholder:
//! it reads the project's `tsconfig.json`, writes nothing) and its errors
//! reach the model as context on the same event.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct TypecheckChanged;

#[hookrt_sdk::hook]
impl Hook for TypecheckChanged {
    type Config = NoConfig;

    fn action_result(&mut self, data: ActionResult, _event: &Event, _cx: &Context) -> HookResult {
        let edited = data
            .output
            .as_ref()
            .and_then(|o| o.get("filePath"))
            .and_then(|p| p.as_str())
            .is_some_and(|p| p.ends_with(".ts") || p.ends_with(".tsx"));
        if !edited {
            return Ok(());
        }
        let ran = exec::run("tsc", &[])?;
        if ran.success() {
            return Ok(());
        }
        let errors = String::from_utf8_lossy(&ran.stdout);
        context::add(format!(
            "████ Type Error ████\nTypeScript compilation failed; fix these errors:\n{}",
            errors.trim_end()
        ));
        Ok(())
    }
}
