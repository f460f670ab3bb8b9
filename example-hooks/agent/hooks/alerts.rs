//! Alerts on failures: a warning per failed tool call (tool name and call id only, never
//! its input or output), and an error line with a running count per failed turn/session.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Alerts {
    failed_actions: u64,
    failures: u64,
}

impl Alerts {
    fn action_result(&mut self, event: &Event, _cx: &Context) -> HookResult {
        let result: ActionResult = event.data()?;
        if result.status == ActionStatus::Error {
            self.failed_actions += 1;
            let count = self.failed_actions.to_string();
            log::warn(
                "tool call failed",
                &[
                    ("tool", &result.tool),
                    ("call_id", &result.call_id),
                    ("failed_so_far", &count),
                ],
            );
        }
        Ok(())
    }

    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {
        let failing = [TurnFailed::KIND, SessionFailed::KIND];
        if failing.contains(&event.kind()) {
            self.failures += 1;
            let count = self.failures.to_string();
            log::error(
                "agent failure",
                &[
                    ("kind", event.kind()),
                    ("event_id", event.id()),
                    ("failures_so_far", &count),
                ],
            );
        }
        Ok(())
    }
}

hookrt_sdk::define_hook!(Alerts {
    "action.result" => action_result,
    "*" => any,
});
