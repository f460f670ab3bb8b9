//! Test hook: logs one `scope` line per delivery with the context's scope (`primary`,
//! `subagent:<id>` or `aggregate`), agent, session, transport kind, the length of the raw
//! data text (2 for an aggregate observer's `{}`) and the event id. Never the data itself.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct ScopeReporter;

impl ScopeReporter {
    fn any(&mut self, event: &Event, cx: &Context) -> HookResult {
        let scope = cx.scope().to_string();
        let data_len = event.raw_data().len().to_string();
        log::info(
            "scope",
            &[
                ("scope", &scope),
                ("agent", cx.agent()),
                ("session", cx.session()),
                ("transport", &cx.transport().kind),
                ("data_len", &data_len),
                ("event_id", event.id()),
            ],
        );
        Ok(())
    }
}

hookrt_sdk::define_hook!(ScopeReporter {
    "*" => any,
});
