// Ported from gemini-docs-auto-test: github.com/google-gemini/gemini-cli@0d5b7db docs/hooks/writing-hooks.md (auto-test.sh)
//! After Gemini CLI writes or edits a `.ts` file (`AfterTool` on
//! `write_file|replace`), run its `.test.ts` beside it with vitest, when
//! there is one, and tell the model when the tests fail. The original runs
//! `npx vitest run <test>` after checking the file exists; here the pinned
//! vitest runs through the `exec` grant (`run {test} --globals`, `{test}` a
//! read-only `path`, which the host checks exists inside the project: a
//! missing test file is refused before anything runs, the original's "no
//! test file"), and a failure reaches the model as context (the original's
//! `decision: block` with the same reason).

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct AutoTest;

#[hookrt_sdk::hook]
impl Hook for AutoTest {
    type Config = NoConfig;

    fn action_result(&mut self, data: ActionResult, event: &Event, _cx: &Context) -> HookResult {
        if !matches!(data.tool.as_str(), "write_file" | "replace") {
            return Ok(());
        }
        let input = event.data_json()?;
        let Some(file) = input["input"]["file_path"].as_str() else {
            return Ok(());
        };
        let Some(stem) = file.strip_suffix(".ts").filter(|s| !s.ends_with(".test")) else {
            return Ok(());
        };
        let test = format!("{stem}.test.ts");
        let ran = match exec::run("vitest", &[("test", &test)]) {
            Ok(ran) => ran,
            Err(e) if e.to_string().contains("does not exist in the project") => {
                log::info("no test file", &[("file", file)]);
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        if ran.success() {
            log::info("tests passed", &[("test", &test)]);
            return Ok(());
        }
        // vitest reports failing tests on stdout and errors on stderr.
        let out = String::from_utf8_lossy(&ran.stdout) + String::from_utf8_lossy(&ran.stderr);
        let head: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).take(30).collect();
        context::add(format!("Tests failed: {test}\n{}", head.join("\n")));
        Ok(())
    }
}
