//! Test hook: puts secrets where redaction used to miss them: a log field
//! key, an `sk-` key glued to a word (`token_sk-…`), and, when `config.refuse`
//! is set, the error that refuses its configuration.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct SecretKeys;

impl SecretKeys {
    fn setup(&mut self, config: &serde_json::Value) -> HookResult {
        if config.get("refuse").is_some() {
            return Err(HookError::new("bad key sk-live-4f9a8b7c6d5e4f3a2b1c"));
        }
        Ok(())
    }

    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        log::info(
            "using token_sk-live-4f9a8b7c6d5e4f3a2b1c",
            &[("sk-live-4f9a8b7c6d5e4f3a2b1c", "the key is the name")],
        );
        Ok(())
    }
}

hookrt_sdk::define_hook!(SecretKeys {
    configure => setup,
    "*" => any,
});
