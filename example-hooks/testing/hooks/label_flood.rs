//! Hostile test hook: one counter call with a thousand labels, and many
//! series; a metric name and a label key that carry an API key.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct LabelFlood;

impl LabelFlood {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        let keys: Vec<String> = (0..1_000).map(|i| format!("k{i}")).collect();
        let labels: Vec<(&str, &str)> = keys.iter().map(|k| (k.as_str(), "v")).collect();
        metrics::counter("wide", 1, &labels);
        metrics::counter("calls_sk-live-4f9a8b7c6d5e4f3a2b1c", 1, &[("sk-live-4f9a8b7c6d5e4f3a2b1c", "x")]);
        Ok(())
    }
}

hookrt_sdk::define_hook!(LabelFlood {
    "*" => any,
});
