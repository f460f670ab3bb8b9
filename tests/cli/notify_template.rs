//! `hookrt new --template notify` in Rust, TypeScript and Python: the hook
//! and its `notify` grant, written beside what the folder's `hookrt.toml`
//! already holds, pass `hookrt check` and `hookrt test` (a replay records each
//! notification without showing it).

use std::fs;
use std::path::Path;

use serde_json::json;

use crate::{run, text};

/// Claude Code's notification and a turn's end, as the bridge maps them.
fn recorded_events() -> String {
    let coordinates = |seq: u64| json!({"agent": "claude-code", "session": "s1", "turn": "t1", "step": null, "sequence": seq, "subagent": null});
    [
        json!({"schema_version": 1, "id": "evt_n1", "kind": "custom.claude.notification",
               "timestamp": "2026-12-06T10:00:00Z", "coordinates": coordinates(0),
               "data": {"message": "Claude needs your permission to use Bash", "title": "Permission needed", "notification_type": "permission_prompt"}}),
        json!({"schema_version": 1, "id": "evt_n2", "kind": "turn.stopping",
               "timestamp": "2026-12-06T10:00:01Z", "coordinates": coordinates(1),
               "data": {"continued": false, "last_message": "Done: all tests pass."}}),
    ]
    .map(|e| e.to_string())
    .join("\n")
        + "\n"
}

/// `hookrt new AGENT/hooks/desk-notify --template notify --lang LANG` beside
/// what `hookrt.toml` already holds, then `check`, then a replay.
fn new_template_notify_checks_and_replays(lang: &str) {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    fs::create_dir_all(&agent).unwrap();
    fs::write(agent.join("hookrt.toml"), "[defaults]\nmax_attempts = 1\n").unwrap();
    let a = agent.to_str().unwrap();
    let path = format!("{a}/hooks/desk-notify");
    let out = run(&["new", &path, "--template", "notify", "--lang", lang]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("holds [hooks.\"desk-notify\"] and its grants")
            && !said.contains("hookrt lock"),
        "a notify hook needs no lock: {said}"
    );
    let toml = fs::read_to_string(agent.join("hookrt.toml")).unwrap();
    assert!(
        toml.starts_with("[defaults]\nmax_attempts = 1\n")
            && toml.contains("[hooks.\"desk-notify\".grants.notify]\nper_minute = 6"),
        "{toml}"
    );
    let out = run(&["check", a]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    records_then_replays(dir.path(), a);
}

#[test]
fn new_template_notify_in_rust_writes_a_hook_and_its_grant_that_check_and_test() {
    new_template_notify_checks_and_replays("rust");
}

#[test]
fn new_template_notify_in_typescript_writes_a_hook_and_its_grant_that_check_and_test() {
    new_template_notify_checks_and_replays("ts");
}

#[test]
fn new_template_notify_in_python_writes_a_hook_and_its_grant_that_check_and_test() {
    new_template_notify_checks_and_replays("py");
}

/// `hookrt test --update` on the recorded events records each notification
/// as not shown, and `hookrt test` then passes against it.
fn records_then_replays(dir: &Path, a: &str) {
    let events = dir.join("events.jsonl");
    fs::write(&events, recorded_events()).unwrap();
    let expect = dir.join("expected.jsonl");
    let test = |update: bool| {
        let mut args = vec![
            "test",
            a,
            "--events",
            events.to_str().unwrap(),
            "--expect",
            expect.to_str().unwrap(),
        ];
        if update {
            args.push("--update");
        }
        run(&args)
    };
    let out = test(true);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let recorded = fs::read_to_string(&expect).unwrap();
    assert_eq!(
        recorded
            .matches("not shown: a replay records it only")
            .count(),
        2,
        "{recorded}"
    );
    assert!(
        recorded.contains("\"title\":\"Permission needed\""),
        "{recorded}"
    );
    assert!(
        recorded.contains("\"title\":\"claude-code: turn complete\""),
        "{recorded}"
    );
    let out = test(false);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("ok: "),
        "{}",
        text(&out.stdout)
    );
}
