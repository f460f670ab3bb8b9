//! Redaction reaches every hook-controlled string: log field keys, keys glued
//! to a word, metric names and labels, and `configure` refusals.

use hookrt::Outcome;

use crate::common::{TempAgent, load, opts, transcript};

#[test]
fn a_secret_in_a_log_field_key_or_glued_to_a_word_is_masked() {
    let agent = TempAgent::new().hook("testing/hooks/secret_keys.rs", "keys.rs");
    let d = load(agent.path())
        .dispatch(&transcript()[0])
        .unwrap()
        .deliveries
        .remove(0);
    assert_eq!(d.outcome, Outcome::Ok, "{:?}", d.error);
    assert_eq!(d.logs[0].message, "using token_[redacted:api-key]");
    assert_eq!(
        d.logs[0].fields,
        [(
            "[redacted:api-key]".to_string(),
            "the key is the name".to_string()
        )]
    );
}

#[test]
fn a_secret_in_a_configure_refusal_is_masked_in_the_load_problem() {
    let agent = TempAgent::new()
        .hook("testing/hooks/secret_keys.rs", "keys.rs")
        .config("[hooks.keys]\nconfig = { refuse = true }\n");
    let problems = match hookrt::Runtime::load_blocking(agent.path(), &opts(), &mut |_| {}) {
        Ok(_) => panic!("load should fail"),
        Err(p) => p.0,
    };
    assert_eq!(problems.len(), 1);
    assert_eq!(
        problems[0].message,
        "refused its configuration: bad key [redacted:api-key]"
    );
}

#[test]
fn a_secret_in_a_metric_name_or_label_is_masked() {
    let agent = TempAgent::new()
        .hook("testing/hooks/label_flood.rs", "labels.rs")
        .config("[hooks.labels]\ngrants = [\"log\", \"metrics\"]\n");
    let rt = load(agent.path());
    rt.dispatch(&transcript()[0]).unwrap();
    let names: Vec<(String, Vec<(String, String)>)> = rt
        .metrics()
        .snapshot()
        .into_iter()
        .filter(|((_, name, _), _)| name.starts_with("calls_"))
        .map(|((_, name, labels), _)| (name, labels))
        .collect();
    assert_eq!(
        names,
        [(
            "calls_[redacted:api-key]".to_string(),
            vec![("[redacted:api-key]".to_string(), "x".to_string())]
        )]
    );
}
