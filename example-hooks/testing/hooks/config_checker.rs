//! Test hook: refuses a config without `threshold` >= 1; accepts every event.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct ConfigChecker;

impl ConfigChecker {
    fn setup(&mut self, config: &serde_json::Value) -> HookResult {
        match config.get("threshold").and_then(serde_json::Value::as_f64) {
            Some(threshold) if threshold >= 1.0 => Ok(()),
            _ => Err(HookError::new("config.threshold must be a number >= 1")),
        }
    }

    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        Ok(())
    }
}

hookrt_sdk::define_hook!(ConfigChecker {
    configure => setup,
    "*" => any,
});
