//! The `tests-at-stop` pack's component: when the turn wants to end, the
//! tests `[packs.tests-at-stop]` names run through the `exec` grant; while
//! they fail the turn goes on with the end of their output
//! (`hookrt_pack_rules::tests_at_stop`, docs/packs/tests-at-stop.md).

use hookrt_pack_rules::tests_at_stop::{PROGRAM, Settings, continuation};
use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct TestsAtStop {
    settings: Option<Settings>,
}

#[hookrt_sdk::hook]
impl Hook for TestsAtStop {
    type Config = Settings;

    fn configure(&mut self, config: Settings) -> HookResult {
        config.check().map_err(|e| HookError::new(e.message))?;
        self.settings = Some(config);
        Ok(())
    }

    fn turn_stopping(&mut self, _data: TurnStopping, _event: &Event, _cx: &Context) -> HookResult<Continuation> {
        let settings = self
            .settings
            .as_ref()
            .ok_or_else(|| HookError::new("tests-at-stop was not configured"))?;
        let ran = exec::run(PROGRAM, &[])?;
        if ran.success() {
            log::info("the tests pass", &[]);
            return Ok(Continuation::Stop);
        }
        log::warn("the tests fail", &[("status", &format!("{:?}", ran.status))]);
        let mut output = ran.stdout;
        output.extend_from_slice(&ran.stderr);
        Ok(Continuation::continue_turn(continuation(&output, ran.timed_out, settings.shown_bytes)))
    }
}
