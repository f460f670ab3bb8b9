//! Test hook: logs a line that holds an API key, a bearer token and an email address,
//! plus an `authorization` field: the host must mask them before the line is kept.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct SecretLogger;

impl SecretLogger {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        log::info(
            "calling api with key sk-live-4f9a8b7c6d5e4f3a2b1c and token Bearer abc.def.ghi for ops@example.com",
            &[("authorization", "Bearer xyz123")],
        );
        Ok(())
    }
}

hookrt_sdk::define_hook!(SecretLogger {
    "*" => any,
});
