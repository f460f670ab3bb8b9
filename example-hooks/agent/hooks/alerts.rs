//! Alerts on failures: a warning per failed tool call (tool name and call id only, never
//! its input or output), and an error line per failed turn or session.
//!
//! Each alert carries a key from `idempotency_key`, so the system that receives alerts
//! can drop the duplicate when a delivery is repeated (delivery is at-least-once).
//!
//! Written with the typed `Hook` trait: `action_result` subscribes to `action.result` and
//! receives its data parsed; `any` is the `*` handler.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Alerts;

#[hookrt_sdk::hook]
impl Hook for Alerts {
    fn action_result(&mut self, result: ActionResult, event: &Event, _cx: &Context) -> HookResult {
        if result.status == ActionStatus::Error {
            let key = idempotency_key(event, "tool-failure-alert");
            log::warn(
                "tool call failed",
                &[("tool", &result.tool), ("call_id", &result.call_id), ("alert_key", &key)],
            );
        }
        Ok(())
    }

    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {
        if [TurnFailed::KIND, SessionFailed::KIND].contains(&event.kind()) {
            let key = idempotency_key(event, "agent-failure-alert");
            log::error("agent failure", &[("kind", event.kind()), ("event_id", event.id()), ("alert_key", &key)]);
        }
        Ok(())
    }
}
