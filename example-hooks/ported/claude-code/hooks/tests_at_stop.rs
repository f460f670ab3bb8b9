// Written for the "tests at Stop" hooks of hook-corpus-public.md's larger corpus (completion checks at Stop), after diet103-stop-build-check: github.com/diet103/claude-code-infrastructure-showcase@a5818cb stop-build-check-enhanced.sh
//! At `Stop`, run the project's tests and keep the turn going with their
//! failures until they pass: the project's test command is the `exec`
//! table's `test` program (e.g. `node --test`, `npm test`, `cargo test`), with a
//! fixed template. The loop governor (`[governor] max_continues`) still
//! caps how often a turn is kept going.

use hookrt_sdk::prelude::*;

/// Lines of the test output quoted to the model.
const QUOTED_LINES: usize = 40;

#[derive(Default)]
pub struct TestsAtStop;

#[hookrt_sdk::hook]
impl Hook for TestsAtStop {
    type Config = NoConfig;

    fn turn_stopping(&mut self, _data: TurnStopping, _event: &Event, _cx: &Context) -> HookResult<Continuation> {
        let ran = exec::run("test", &[])?;
        log::info(
            "tests",
            &[("status", &format!("{:?}", ran.status)), ("ms", &ran.duration_ms.to_string())],
        );
        if ran.success() {
            return Ok(Continuation::Stop);
        }
        let out = String::from_utf8_lossy(&ran.stdout);
        let failing: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("not ok") || l.contains("Error") || l.contains("expected"))
            .take(QUOTED_LINES)
            .collect();
        Ok(Continuation::continue_turn(format!(
            "The project's tests fail; fix the code (not the tests) before you stop:\n{}",
            failing.join("\n")
        )))
    }
}
