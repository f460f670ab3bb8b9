//! Counts events per kind in instance memory (configure this hook to reuse its
//! instance, or counts restart with each fresh instance) and logs a summary when the
//! session completes.

use std::collections::BTreeMap;

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Metrics {
    // BTreeMap so the summary line lists kinds in a stable order.
    per_kind: BTreeMap<String, u64>,
}

impl Metrics {
    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {
        let count = self.per_kind.entry(event.kind().to_owned()).or_default();
        *count += 1;
        let count = count.to_string();
        log::info(
            "event counted",
            &[("kind", event.kind()), ("count", &count)],
        );

        if event.kind() == SessionCompleted::KIND {
            let summary = self
                .per_kind
                .iter()
                .map(|(kind, n)| format!("{kind}={n}"))
                .collect::<Vec<_>>()
                .join(" ");
            let total = self.per_kind.values().sum::<u64>().to_string();
            log::info(
                "session summary",
                &[
                    ("session", &event.coordinates().session),
                    ("total", &total),
                    ("counts", &summary),
                ],
            );
        }
        Ok(())
    }
}

hookrt_sdk::define_hook!(Metrics {
    "*" => any,
});
