//! Test hook: logs what the build environment held in `HOOKRT_TEST_SECRET`,
//! `HOME`, `CARGO_HOME` and `RUSTUP_HOME` when it was compiled (`option_env!`
//! is read at compile time). hookrt builds hooks in a scrubbed environment
//! with homes of its own, so it must log `absent` for the secret, and homes
//! that are not the user's.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct EnvLeak;

impl EnvLeak {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        let secret = option_env!("HOOKRT_TEST_SECRET").unwrap_or("absent");
        let home = option_env!("HOME").unwrap_or("absent");
        let cargo_home = option_env!("CARGO_HOME").unwrap_or("absent");
        let rustup_home = option_env!("RUSTUP_HOME").unwrap_or("absent");
        log::info(
            "build environment",
            &[
                ("secret", secret),
                ("home", home),
                ("cargo_home", cargo_home),
                ("rustup_home", rustup_home),
            ],
        );
        Ok(())
    }
}

hookrt_sdk::define_hook!(EnvLeak {
    "*" => any,
});
