//! Audit trail: one line per event with ids, kind and timing only, never event data
//! (message content and tool outputs can hold secrets).

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Audit;

impl Audit {
    fn any(&mut self, event: &Event, cx: &Context) -> HookResult {
        safe_log(event, cx);
        let at = event.coordinates();
        log::debug(
            "audit coordinates",
            &[
                ("event_id", event.id()),
                ("timestamp", event.timestamp()),
                ("session", &at.session),
                ("turn", at.turn.as_deref().unwrap_or("-")),
                ("step", at.step.as_deref().unwrap_or("-")),
                ("retry", if event.is_retry() { "true" } else { "false" }),
            ],
        );
        Ok(())
    }
}

hookrt_sdk::define_hook!(Audit {
    "*" => any,
});
