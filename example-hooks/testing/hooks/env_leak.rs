//! Test hook: logs what the build environment held in `HOOKRT_TEST_SECRET`
//! and `HOME` when it was compiled (`option_env!` is read at compile time).
//! hookrt builds hooks in a scrubbed environment, so it must log `absent`
//! for the secret, and a `HOME` that is not the user's.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct EnvLeak;

impl EnvLeak {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        let secret = option_env!("HOOKRT_TEST_SECRET").unwrap_or("absent");
        let home = option_env!("HOME").unwrap_or("absent");
        log::info("build environment", &[("secret", secret), ("home", home)]);
        Ok(())
    }
}

hookrt_sdk::define_hook!(EnvLeak {
    "*" => any,
});
