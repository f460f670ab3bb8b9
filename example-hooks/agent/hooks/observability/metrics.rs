//! Counts events per kind in instance memory (configure this hook to reuse its
//! instance, or counts restart with each fresh instance) and logs a summary when the
//! session completes. Also adds 1 to the host counter `events_total{kind}` per event,
//! which the host aggregates across instances (needs the `metrics` grant).

use std::collections::BTreeMap;

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Metrics {
    // BTreeMap so the summary line lists kinds in a stable order.
    per_kind: BTreeMap<String, u64>,
}

#[hookrt_sdk::hook]
impl Hook for Metrics {
    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {
        metrics::counter("events_total", 1, &[("kind", event.kind())]);

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

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str) -> Event {
        Event::from_json(&format!(
            r#"{{"schema_version":1,"id":"evt_{kind}","kind":"{kind}","timestamp":"2026-11-30T09:00:00Z",
                "coordinates":{{"agent":"a","session":"s","sequence":0}},"data":{{}}}}"#
        ))
        .expect("envelope")
    }

    #[test]
    fn each_event_adds_one_to_events_total_by_kind() {
        let mut hook = Metrics::default();
        let cx = Context::new("*", "observability/metrics", 100);
        let kinds = ["turn.started", "turn.started", "session.completed"];
        for kind in kinds {
            hook.any(&event(kind), &cx).expect("handled");
        }
        let recorded = metrics::recorded();
        assert_eq!(recorded.len(), 3);
        for (metric, kind) in recorded.iter().zip(kinds) {
            assert_eq!(
                metric,
                &metrics::Metric::Counter {
                    name: "events_total".into(),
                    delta: 1,
                    labels: vec![("kind".into(), kind.into())],
                }
            );
        }
        assert_eq!(hook.per_kind["turn.started"], 2);
    }
}
