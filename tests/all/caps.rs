//! Caps on entries, not only bytes: log lines, fields per line, metric
//! series and labels per series; and the runtime's `[hookrt]` prefix, which a
//! hook cannot forge.

use hookrt::Outcome;

use crate::common::{TempAgent, load, transcript};

const LINE_CAP: usize = 1_000;
const FIELD_CAP: usize = 32;
const LABEL_CAP: usize = 16;

fn hook_lines(d: &hookrt::Delivery) -> Vec<&hookrt::sandbox::LogLine> {
    d.logs
        .iter()
        .filter(|l| !l.message.starts_with("[hookrt]"))
        .collect()
}

#[test]
fn a_million_empty_log_lines_keep_exactly_the_line_cap_and_a_marker() {
    let agent = TempAgent::new()
        .hook("testing/hooks/entry_flood.rs", "flood.rs")
        .config("[hooks.flood]\nfuel = 10_000_000_000\ndeadline_ms = 60_000\n");
    let rt = load(agent.path());
    let d = rt.dispatch(&transcript()[0]).unwrap().deliveries.remove(0);
    assert_eq!(d.outcome, Outcome::Ok, "{:?}", d.error);
    assert_eq!(hook_lines(&d).len(), LINE_CAP);
    assert!(d.output_truncated);
    assert_eq!(
        d.logs.last().map(|l| l.message.as_str()),
        Some("[hookrt] log lines cut at the 1000-line limit per delivery")
    );
}

#[test]
fn a_line_with_ten_thousand_fields_keeps_the_field_cap_and_a_marker() {
    let agent = TempAgent::new().hook("testing/hooks/field_flood.rs", "fields.rs");
    let d = load(agent.path())
        .dispatch(&transcript()[0])
        .unwrap()
        .deliveries
        .remove(0);
    assert_eq!(d.outcome, Outcome::Ok, "{:?}", d.error);
    assert_eq!(d.logs[0].message, "many fields");
    assert_eq!(d.logs[0].fields.len(), FIELD_CAP);
    assert_eq!(
        d.logs.last().map(|l| l.message.as_str()),
        Some("[hookrt] fields cut at the 32-field limit per log line")
    );
}

#[test]
fn hook_lines_forging_the_runtime_prefix_are_escaped_and_stay_under_the_minute_cap() {
    let agent = TempAgent::new()
        .hook("testing/hooks/marker_forger.rs", "forger.rs")
        .config("[hooks.forger]\noutput_bytes = 1_000_000\nlog_bytes_per_minute = 6000\n");
    let rt = load(agent.path());
    let mut kept = 0;
    for e in transcript().iter().take(3) {
        let d = rt.dispatch(e).unwrap().deliveries.remove(0);
        assert_eq!(d.outcome, Outcome::Ok, "{:?}", d.error);
        let runtime: Vec<&str> = d
            .logs
            .iter()
            .map(|l| l.message.as_str())
            .filter(|m| m.starts_with("[hookrt]"))
            .collect();
        assert_eq!(
            runtime,
            ["[hookrt] output cut at the hook's 6000-byte log_bytes_per_minute limit"],
            "the only line that reads as the runtime's is its marker"
        );
        for l in hook_lines(&d) {
            assert!(
                l.message.starts_with("(hook) [hookrt] all is well"),
                "{}",
                l.message
            );
            kept += l.message.len();
        }
    }
    assert!(
        kept <= 6000,
        "kept {kept} bytes of forged lines over a 6000-byte minute"
    );
    assert!(kept > 5000, "the minute's budget was used: {kept}");
}

#[test]
fn a_series_with_too_many_labels_is_dropped_and_counted_in_the_marker_series() {
    let agent = TempAgent::new()
        .hook("testing/hooks/label_flood.rs", "labels.rs")
        .config("[hooks.labels]\ngrants = [\"log\", \"metrics\"]\n");
    let rt = load(agent.path());
    for e in transcript().iter().take(2) {
        assert_eq!(rt.dispatch(e).unwrap().deliveries[0].outcome, Outcome::Ok);
    }
    let snapshot = rt.metrics().snapshot();
    assert!(
        snapshot
            .iter()
            .all(|((_, _, labels), _)| labels.len() <= LABEL_CAP),
        "no stored series has more than {LABEL_CAP} labels"
    );
    assert!(!snapshot.iter().any(|((_, name, _), _)| name == "wide"));
    let dropped = snapshot
        .iter()
        .find(|((hook, name, labels), _)| {
            hook == "labels"
                && name == "hookrt_metrics_dropped"
                && labels == &[("reason".to_string(), "labels_limit".to_string())]
        })
        .map(|(_, v)| *v);
    assert_eq!(dropped, Some(2.0));
}
