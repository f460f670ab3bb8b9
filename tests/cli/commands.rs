//! The `hookrt` binary as a user runs it: exit codes, messages, JSON lines.
//! Uses the real example hooks and the build cache shared with `tests/all`.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::common::{agent_fixture, claude_fixture, repo, with_stdin};
use crate::{hookrt, run, text};

fn json_lines(out: &Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is JSON"))
        .collect()
}

fn copy(from: &Path, to: &Path) {
    if from.is_dir() {
        fs::create_dir_all(to).unwrap();
        for e in fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            copy(&e.path(), &to.join(e.file_name()));
        }
    } else {
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(from, to).unwrap();
    }
}

/// The example agent's hooks plus the hostile infinite loop, in a temp folder.
fn agent_with_infinite_loop() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &repo().join("example-hooks/agent/hooks"),
        &dir.path().join("hooks"),
    );
    copy(
        &repo().join("example-hooks/hostile/hooks/infinite_loop.rs"),
        &dir.path().join("hooks/infinite_loop.rs"),
    );
    let config = fs::read_to_string(repo().join("example-hooks/agent/hookrt.toml")).unwrap();
    fs::write(
        dir.path().join("hookrt.toml"),
        config + "\n[hooks.infinite_loop]\nfuel = 2_000_000\ndeadline_ms = 50\n",
    )
    .unwrap();
    dir
}

fn transcript() -> String {
    repo()
        .join("example-hooks/agent/transcript.jsonl")
        .display()
        .to_string()
}

#[test]
fn check_names_each_problem_and_exits_nonzero() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir_all(d.join("hooks")).unwrap();
    fs::create_dir_all(d.join("channels")).unwrap();
    for f in [
        "hooks/audit.rs",
        "hooks/audit.wasm",
        "hooks/..escape.rs",
        "channels/slack.rs",
    ] {
        fs::write(d.join(f), "").unwrap();
    }
    let out = run(&["check", d.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with("3 problems found:"), "{err}");
    for expected in [
        format!(
            "{}: a `channels/` folder is not supported",
            d.join("channels").display()
        ),
        format!(
            "{}: unsafe slug `..escape`",
            d.join("hooks/..escape.rs").display()
        ),
        format!(
            "{}: duplicate slug `audit`: {} has the same slug",
            d.join("hooks/audit.wasm").display(),
            d.join("hooks/audit.rs").display()
        ),
    ] {
        assert!(err.contains(&expected), "missing `{expected}` in:\n{err}");
    }
    assert_eq!(err.matches("  fix: ").count(), 3, "every problem has a fix");
}

#[test]
fn run_contains_an_infinite_loop_within_its_budget_and_everything_else_is_ok() {
    let dir = agent_with_infinite_loop();
    let out = run(&[
        "run",
        dir.path().to_str().unwrap(),
        "--events",
        &transcript(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    let (summary, rest) = lines.split_last().unwrap();
    let deliveries: Vec<&Value> = rest.iter().filter(|l| l.get("hook").is_some()).collect();
    let looping: Vec<&Value> = deliveries
        .iter()
        .copied()
        .filter(|d| d["hook"] == "infinite_loop")
        .collect();
    assert_eq!(looping.len(), 38, "one wildcard delivery per event");
    for d in &looping {
        assert!(
            d["outcome"] == "out_of_fuel" || d["outcome"] == "timeout",
            "{d}"
        );
        assert!(d["fuel_used"].as_u64().unwrap() <= 2_000_000, "{d}");
    }
    assert!(
        deliveries
            .iter()
            .filter(|d| d["hook"] != "infinite_loop")
            .all(|d| d["outcome"] == "ok")
    );
    assert_eq!(summary["summary"]["deliveries"], 159 + 38);
    assert_eq!(summary["summary"]["outcomes"]["ok"], 159);
    assert_eq!(summary["summary"]["durability"], "accepted");
    for key in [
        "event_id",
        "kind",
        "hook",
        "handler",
        "attempt",
        "outcome",
        "duration_us",
        "fuel_used",
    ] {
        assert!(
            deliveries[0].get(key).is_some(),
            "delivery lines carry `{key}`"
        );
    }
}

#[test]
fn a_second_run_with_unchanged_hooks_compiles_nothing() {
    let dir = agent_with_infinite_loop();
    let args = [
        "-v",
        "run",
        dir.path().to_str().unwrap(),
        "--events",
        &transcript(),
    ];
    let first = run(&args);
    assert!(first.status.success());
    let second = run(&args);
    let err = text(&second.stderr);
    assert!(
        err.contains("9 hook(s) ready in")
            && err.contains(": 0 built, 0 compiled by Cranelift, 9 loaded from cache"),
        "{err}"
    );
    assert!(!err.contains("cargo_built=true") && !err.contains("cranelift_compiled=true"));
}

fn events_with_bad_lines() -> tempfile::NamedTempFile {
    let good: Vec<String> = fs::read_to_string(transcript())
        .unwrap()
        .lines()
        .take(3)
        .map(String::from)
        .collect();
    let mut f = tempfile::NamedTempFile::new().unwrap();
    let bad_kind = good[1].replace("turn.started", "trun.started");
    writeln!(
        f,
        "{}\n{{oops\n{}\n{bad_kind}\n{}",
        good[0], good[1], good[2]
    )
    .unwrap();
    f
}

#[test]
fn malformed_lines_are_named_by_number_and_the_rest_still_run() {
    let events = events_with_bad_lines();
    let agent = repo().join("example-hooks/agent");
    let out = run(&[
        "run",
        agent.to_str().unwrap(),
        "--events",
        events.path().to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "malformed input makes the run fail after the good lines ran"
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("line 2: not a valid envelope: key must be a string"),
        "{err}"
    );
    assert!(
        err.contains("line 4: unknown event kind `trun.started` (did you mean `turn.started`?)"),
        "{err}"
    );
    let lines = json_lines(&out);
    let ids: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["event_id"].as_str())
        .collect();
    assert!(ids.contains(&"evt_0001") && ids.contains(&"evt_0002") && ids.contains(&"evt_0003"));
    assert_eq!(lines.last().unwrap()["summary"]["malformed_lines"], 2);
    assert_eq!(lines.last().unwrap()["summary"]["events"], 3);
}

#[test]
fn strict_stops_at_the_first_malformed_line() {
    let events = events_with_bad_lines();
    let agent = repo().join("example-hooks/agent");
    let out = run(&[
        "run",
        agent.to_str().unwrap(),
        "--events",
        events.path().to_str().unwrap(),
        "--strict",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let ids: Vec<String> = json_lines(&out)
        .iter()
        .filter_map(|l| l["event_id"].as_str().map(String::from))
        .collect();
    assert!(
        ids.iter().all(|id| id == "evt_0001"),
        "nothing after line 2 ran: {ids:?}"
    );
    assert!(text(&out.stderr).contains("stopping at line 2 (--strict)"));
}

#[test]
fn events_can_come_from_stdin() {
    let agent = repo().join("example-hooks/agent");
    let mut child = hookrt(&["run", agent.to_str().unwrap(), "--events", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let first = fs::read_to_string(transcript())
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(first.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines = json_lines(&out);
    assert_eq!(lines.last().unwrap()["summary"]["events"], 1);
}

#[test]
fn a_typescript_hooks_mapped_artifact_is_read_in_at_load_not_in_its_first_delivery() {
    use std::io::BufRead;
    // Mapped pages are read from disk when first touched: a TypeScript
    // hook's artifact (~40 MB) is read in at load instead, so its first
    // delivery never waits on the disk inside its deadline.
    let agent = repo().join("example-hooks/agent");
    // A load stamps an artifact it had to check (hooks/cache/stamp.rs); only a
    // stamped one is mapped, the rest is read into memory whole. On an empty
    // cache the first load compiles and stores the artifact, and the second
    // stamps it only once it is `SETTLE` (2 s) old: so two loads, that far
    // apart, come before the one looked at, whatever the cache held
    // (scripts/test fills it first; a plain `cargo test` does not).
    for wait in [true, false] {
        let checked = run(&["check", agent.to_str().unwrap()]);
        assert!(checked.status.success(), "{}", text(&checked.stderr));
        if wait {
            std::thread::sleep(std::time::Duration::from_millis(2_100));
        }
    }
    let mut child = hookrt(&["run", agent.to_str().unwrap(), "--events", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&fs::read(transcript()).unwrap()).unwrap();
    // A delivery printed: the hooks are loaded. Stdin stays open, so the
    // process stays up to be looked at.
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("\"outcome\""), "{first}");
    let smaps = fs::read_to_string(format!("/proc/{}/smaps", child.id())).unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    // Each artifact's read-only mapping (its code and metadata; a writable
    // one is an instance's memory image), as (file, size, resident) in kB.
    let mut artifacts: Vec<(String, u64, u64)> = Vec::new();
    let mut current: Option<usize> = None;
    for line in smaps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields
            .first()
            .is_some_and(|f| f.contains('-') && !f.ends_with(':'))
        {
            current = None;
            let (perms, path) = (fields[1], fields.get(5).copied().unwrap_or(""));
            if path.ends_with(".cwasm") && !perms.contains('w') {
                let at = match artifacts.iter().position(|a| a.0 == path) {
                    Some(at) => at,
                    None => {
                        artifacts.push((path.to_owned(), 0, 0));
                        artifacts.len() - 1
                    }
                };
                current = Some(at);
            }
        } else if let Some(at) = current {
            let kb = || fields[1].parse::<u64>().unwrap();
            match fields[0] {
                "Size:" => artifacts[at].1 += kb(),
                "Rss:" => artifacts[at].2 += kb(),
                _ => {}
            }
        }
    }
    let large: Vec<_> = artifacts
        .iter()
        .filter(|(_, size, _)| *size >= 4 << 10)
        .collect();
    assert_eq!(
        large.len(),
        2,
        "two artifacts of 4 MiB or more, tool_timer.ts's and secret_scan.py's: {artifacts:?}"
    );
    for (path, size, resident) in large {
        assert_eq!(
            resident, size,
            "every page of {path} is in memory before any TypeScript or Python delivery"
        );
    }
}

#[test]
fn audit_json_reports_the_real_configuration() {
    let agent = repo().join("example-hooks/agent");
    let out = run(&["audit", agent.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hooks = report["hooks"].as_array().unwrap();
    let slugs: Vec<&str> = hooks.iter().map(|h| h["slug"].as_str().unwrap()).collect();
    assert_eq!(
        slugs,
        [
            "audit",
            "alerts",
            "context-pruner",
            "observability/metrics",
            "policy",
            "protected-paths",
            "secret_scan",
            "tool_timer"
        ]
    );
    let metrics = &hooks[3];
    assert_eq!(metrics["instance"], "reuse");
    assert_eq!(metrics["limits"]["fuel"], 5_000_000);
    assert_eq!(metrics["limits"]["deadline_ms"], 200);
    assert_eq!(metrics["limits"]["memory_bytes"], 32 << 20);
    assert_eq!(hooks[4]["source_kind"], "crate");
    assert_eq!(
        hooks[4]["subscriptions"],
        serde_json::json!([{"kind": "actions.requested", "class": "decision", "may": ["deny", "ask", "allow", "add context"]}])
    );
    assert_eq!(
        (hooks[4]["on_failure"].as_str(), hooks[4]["name"].as_str()),
        (Some("deny"), Some("Tool approval policy"))
    );
    assert_eq!(hooks[5]["config_keys"], serde_json::json!(["protected"]));
    assert_eq!(
        hooks[2]["subscriptions"],
        serde_json::json!([{"kind": "step.completed", "class": "edit", "may": ["edit agent input"]}])
    );
    assert!(
        hooks
            .iter()
            .all(|h| h["world"] == "hookrt:hook/define-hook@0.4.0")
    );
    assert_eq!(
        hooks[1]["subscriptions"],
        serde_json::json!([{"kind": "action.result", "class": "observe", "may": ["add context"]}, {"kind": "*", "class": "any", "may": []}])
    );
    let imports = |i: usize| {
        hooks[i]["imports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["import"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert!(hooks.iter().all(|h| {
        h["imports"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["granted"] == true)
    }));
    assert_eq!(hooks[5]["grants"], serde_json::json!(["log", "state"]));
    // The TypeScript hook: built by componentize-js with every WASI feature
    // off, it imports the world's types and `log`, nothing else.
    assert_eq!(hooks[7]["source_kind"], "typescript");
    assert_eq!(
        imports(7),
        ["hookrt:hook/log@0.4.0", "hookrt:hook/types@0.4.0"]
    );
    // The Python hook: CPython's filesystem and socket imports are there,
    // each audited as inert, and granted; of the world, what it uses.
    assert_eq!(hooks[6]["source_kind"], "python");
    assert!(
        hooks[6]["imports"].as_array().unwrap().iter().any(|i| {
            i["import"]
                .as_str()
                .unwrap()
                .starts_with("wasi:filesystem/")
                && i["detail"].as_str().unwrap().starts_with("inert")
                && i["granted"] == true
        }),
        "{}",
        hooks[6]["imports"]
    );
    assert!(imports(6).contains(&"hookrt:hook/state@0.4.0".to_owned()));
    assert_eq!(
        hooks[7]["subscriptions"],
        serde_json::json!([
            {"kind": "observe:actions.requested", "class": "observe", "may": ["add context"]},
            {"kind": "action.result", "class": "observe", "may": ["add context"]},
            {"kind": "session.completed", "class": "observe", "may": []}
        ])
    );
    assert!(
        imports(0).contains(&"hookrt:hook/log@0.4.0".to_owned()),
        "audit logs: {:?}",
        imports(0)
    );
    assert!(
        imports(5).contains(&"hookrt:hook/state@0.4.0".to_owned()),
        "protected-paths keeps state: {:?}",
        imports(5)
    );
    assert!(
        hooks
            .iter()
            .all(|h| h["component_sha256"].as_str().unwrap().len() == 64)
    );
}

#[test]
fn journal_runs_are_persisted_and_a_rerun_is_all_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let agent = repo().join("example-hooks/agent");
    let args = [
        "run",
        agent.to_str().unwrap(),
        "--events",
        &transcript(),
        "--journal",
        db.to_str().unwrap(),
    ];
    let first = json_lines(&run(&args));
    let s = &first.last().unwrap()["summary"];
    assert_eq!(
        (
            s["durability"].as_str(),
            s["events"].as_u64(),
            s["deliveries"].as_u64()
        ),
        (Some("persisted"), Some(38), Some(159))
    );
    assert!(
        first
            .iter()
            .filter(|d| d.get("attempt").is_some())
            .all(|d| d["attempt"] == 1)
    );
    let second = json_lines(&run(&args));
    assert_eq!(second.len(), 1, "nothing is delivered again");
    assert_eq!(
        (
            second[0]["summary"]["duplicates"].as_u64(),
            second[0]["summary"]["events"].as_u64()
        ),
        (Some(38), Some(0))
    );
    let status: Value =
        serde_json::from_slice(&run(&["journal", "status", db.to_str().unwrap()]).stdout).unwrap();
    assert_eq!(
        status,
        serde_json::json!({"events": 38, "pending": 0, "done": 159, "dead": 0, "repeated": 0})
    );
}

#[test]
fn journal_commands_refuse_a_missing_file_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("typo.db");
    let out = run(&["journal", "status", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no such file (a journal is created by `hookrt run --journal`)"),
        "{}",
        text(&out.stderr)
    );
    assert!(!missing.exists());
}

#[test]
fn drain_timeout_cancels_slow_deliveries_and_leaves_them_pending() {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &repo().join("example-hooks/hostile/hooks/infinite_loop.rs"),
        &dir.path().join("hooks/slow.rs"),
    );
    fs::write(
        dir.path().join("hookrt.toml"),
        "[hooks.slow]\nfuel = 10_000_000_000\ndeadline_ms = 600_000\n",
    )
    .unwrap();
    let db = dir.path().join("j.db");
    let out = run(&[
        "run",
        dir.path().to_str().unwrap(),
        "--events",
        &transcript(),
        "--journal",
        db.to_str().unwrap(),
        "--drain-timeout",
        "0",
    ]);
    let lines = json_lines(&out);
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["events"], 38, "every event was stored");
    assert_eq!(
        summary["deliveries"].as_u64().unwrap() + summary["left_unacked"].as_u64().unwrap(),
        38
    );
    assert!(summary["left_unacked"].as_u64().unwrap() >= 1);
    let status: Value =
        serde_json::from_slice(&run(&["journal", "status", db.to_str().unwrap()]).stdout).unwrap();
    assert_eq!(status["pending"], summary["left_unacked"]);
}

#[test]
fn run_prints_what_decision_and_edit_events_decided() {
    let agent = repo().join("example-hooks/agent");
    let lines = json_lines(&run(&[
        "run",
        agent.to_str().unwrap(),
        "--events",
        &transcript(),
    ]));
    let resolved: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("resolution").is_some())
        .collect();
    let kinds: Vec<&str> = resolved
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    // 5 actions.requested, 1 file.edit.requested, 7 step.completed, 2 turn.completed.
    assert_eq!(resolved.len(), 15, "{kinds:?}");
    let calls: Vec<&Value> = resolved
        .iter()
        .filter_map(|l| l["resolution"]["tool_approval"]["calls"].as_array())
        .flatten()
        .collect();
    let rm = calls.iter().find(|c| c["call_id"] == "call_06").unwrap();
    assert_eq!(
        (rm["verdict"]["answer"].as_str(), rm["decided_by"].as_str()),
        (Some("deny"), Some("policy"))
    );
    let fetch = calls.iter().find(|c| c["call_id"] == "call_04").unwrap();
    assert_eq!(fetch["verdict"]["answer"], "ask");
    let file = resolved
        .iter()
        .find(|l| l["kind"] == "file.edit.requested")
        .unwrap();
    assert_eq!(
        file["resolution"]["file_edit"]["result"]["answer"],
        "not_handled"
    );
    let pruned = resolved
        .iter()
        .filter(|l| l["resolution"]["edit"]["changed"] == true)
        .count();
    assert!(pruned >= 1, "the context pruner edited at least one step");
}

#[test]
fn hook_state_survives_a_process_restart() {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &repo().join("example-hooks/testing/hooks/state_counter.rs"),
        &dir.path().join("hooks/counter.rs"),
    );
    fs::write(
        dir.path().join("hookrt.toml"),
        "[hooks.counter]\ngrants = [\"log\", \"state\"]\n",
    )
    .unwrap();
    let db = dir.path().join("j.db");
    let all: Vec<String> = fs::read_to_string(transcript())
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let counts = |events: &[String]| -> Vec<u64> {
        let f = dir.path().join("events.jsonl");
        fs::write(&f, events.join("\n")).unwrap();
        let out = run(&[
            "run",
            dir.path().to_str().unwrap(),
            "--events",
            f.to_str().unwrap(),
            "--journal",
            db.to_str().unwrap(),
            "--logs",
        ]);
        json_lines(&out)
            .iter()
            .filter_map(|l| l["logs"].as_array())
            .map(|logs| {
                logs.iter()
                    .find_map(|l| {
                        l["fields"].as_array()?.iter().find(|f| f[0] == "count")?[1]
                            .as_str()?
                            .parse()
                            .ok()
                    })
                    .unwrap()
            })
            .collect()
    };
    assert_eq!(counts(&all[..2]), [1, 2]);
    assert_eq!(
        counts(&all[2..4]),
        [3, 4],
        "the second process reads the first one's state from the journal"
    );
}

#[test]
fn run_takes_an_eve_stream_as_it_is_and_delivers_every_event() {
    let stream = repo().join("tests/fixtures/eve/stream.ndjson");
    let agent = repo().join("example-hooks/agent");
    let out = run(&[
        "run",
        agent.to_str().unwrap(),
        "--format",
        "eve",
        "--agent",
        "weather",
        "--session",
        "https://weather.example/eve/v1/session/ses_1/stream",
        "--events",
        stream.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    let summary = &lines.last().unwrap()["summary"];
    let events = std::fs::read_to_string(&stream).unwrap().lines().count() as u64;
    assert_eq!(summary["malformed_lines"], 0);
    assert_eq!(summary["refused"], 0);
    assert_eq!(summary["events"], events);
    // The audit hook observes every primary event (`*`): all but the three
    // prompts of the `researcher` child task, which are in its scope.
    let audited = lines.iter().filter(|l| l["hook"] == "audit").count() as u64;
    assert_eq!(audited, events - 3);
    assert!(
        !text(&out.stderr).contains('\u{1b}'),
        "no colour codes in redirected stderr"
    );
}

#[test]
fn an_eve_stream_needs_its_agent_and_session() {
    let out = run(&["run", "x", "--format", "eve", "--events", "-"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("--agent") && err.contains("--session"),
        "{err}"
    );
}

/// `hookrt claude-hook` on `agent` with `input` on stdin, the agent built
/// first (claude-hook never builds).
fn claude_hook(agent: &Path, input: &str) -> Output {
    build_agent(agent);
    claude_hook_with(agent, input, &[], &[])
}

/// `hookrt build agent`, when it is a folder.
fn build_agent(agent: &Path) {
    if agent.is_dir() {
        let built = run(&["build", agent.to_str().unwrap()]);
        assert!(built.status.success(), "{}", text(&built.stderr));
    }
}

/// `hookrt claude-hook` with extra arguments and environment, nothing built.
fn claude_hook_with(agent: &Path, input: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = hookrt(&["claude-hook", agent.to_str().unwrap()]);
    command.args(args).envs(env.iter().copied());
    with_stdin(command, input)
}

fn claude_input(event: &str) -> Value {
    serde_json::from_str(&claude_fixture(event)).unwrap()
}

#[test]
fn claude_hook_answers_each_documented_event_as_claude_code_expects() {
    let agent = repo().join("example-hooks/agent");
    for (event, _) in hookrt::front::bridge::Bridge::named("claude-code")
        .unwrap()
        .events()
    {
        let out = claude_hook(&agent, &claude_input(event).to_string());
        assert_eq!(out.status.code(), Some(0), "{event}: {}", text(&out.stderr));
        // npm test: the policy hook abstains, so Claude Code's own rules decide.
        assert_eq!(text(&out.stdout), "", "{event} prints nothing");
    }
    let mut rm = claude_input("PreToolUse");
    rm["tool_input"]["command"] = "rm -rf build/ && npm test".into();
    let out = claude_hook(&agent, &rm.to_string());
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(
        answer,
        serde_json::json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "recursive forced delete (rm -rf) is not allowed by the policy hook; delete specific paths instead"
        }})
    );
    // A skill's shell command is gated the same way, and the answer names it.
    let mut skill = claude_input("PreSkillShellCommand");
    skill["tool_input"]["command"] = "rm -rf build/".into();
    let out = claude_hook(&agent, &skill.to_string());
    let answer: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"],
        "PreSkillShellCommand"
    );
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    // An event this Claude Code does not have yet: observed, no answer.
    let mut newer = claude_input("Notification");
    newer["hook_event_name"] = "PreWidgetRender".into();
    let out = claude_hook(&agent, &newer.to_string());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    let err = text(&out.stderr);
    assert!(
        err.contains("kind=custom.claude.pre_widget_render") && !err.contains("hookrt: hook"),
        "delivered to the hooks, none failed: {err}"
    );
    let mut fetch = claude_input("PreToolUse");
    fetch["tool_name"] = "WebFetch".into();
    let out = claude_hook(&agent, &fetch.to_string());
    let answer: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "ask");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecisionReason"],
        "Allow the agent to use the network tool `WebFetch`?"
    );
}

#[test]
fn claude_hook_fails_closed_for_a_tool_call_it_cannot_decide() {
    let agent = repo().join("example-hooks/agent");
    let broken = r#"{"hook_event_name":"PreToolUse","session_id":"s""#;
    let out = claude_hook(&agent, broken);
    assert_eq!(out.status.code(), Some(2), "exit 2 blocks the tool call");
    assert!(text(&out.stderr).contains("blocked because hookrt could not decide on it"));
    assert_eq!(text(&out.stdout), "");
    let missing = repo().join("example-hooks/no-such-agent");
    let out = claude_hook(&missing, &claude_input("PreToolUse").to_string());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("the agent folder does not exist"),
        "{}",
        text(&out.stderr)
    );
    // Anything else fails open: exit 1 is a non-blocking error for Claude Code.
    let out = claude_hook(&missing, &claude_input("Stop").to_string());
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn claude_hook_refuses_a_tool_input_too_dense_to_parse_within_its_bound() {
    // 7 MB of `0,`: under the 16 MiB read bound, some 220 MB once parsed.
    let agent = repo().join("example-hooks/agent");
    let mut dense = claude_input("PreToolUse");
    dense["tool_input"]["v"] = Value::Array(vec![Value::from(0); 3_500_000]);
    let out = claude_hook(&agent, &dense.to_string());
    assert_eq!(out.status.code(), Some(2), "exit 2 blocks the tool call");
    let err = text(&out.stderr);
    assert!(
        err.contains("MiB once parsed, more than the 64 MiB a command hook allows"),
        "{err}"
    );
    assert_eq!(text(&out.stdout), "");
}

#[test]
fn claude_hook_never_builds_and_fails_closed_on_its_slow_and_crashing_paths() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    fs::create_dir_all(agent.join("hooks")).unwrap();
    let src = fs::read_to_string(repo().join("example-hooks/testing/hooks/deny_all.rs")).unwrap();
    // A source no cache holds: stale.
    let nonce = format!("{:?}", std::time::SystemTime::now());
    fs::write(agent.join("hooks/gate.rs"), format!("{src}\n// {nonce}\n")).unwrap();
    let marker = dir.path().join("cargo-ran");
    let fake = dir.path().join("cargo");
    fs::write(
        &fake,
        format!("#!/bin/sh\ntouch {}\nsleep 60\n", marker.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let input = claude_input("PreToolUse").to_string();
    let started = std::time::Instant::now();
    let out = claude_hook_with(
        &agent,
        &input,
        &[],
        &[("CARGO_BIN", fake.to_str().unwrap())],
    );
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(took < std::time::Duration::from_secs(2), "took {took:?}");
    assert!(
        text(&out.stderr).contains(&format!("hookrt build {}", agent.display())),
        "{}",
        text(&out.stderr)
    );
    assert!(!marker.exists(), "cargo was started");

    // A panic while a tool call waits: exit 2, not Rust's 101.
    let example = repo().join("example-hooks/agent");
    build_agent(&example);
    let out = claude_hook_with(
        &example,
        &input,
        &[],
        &[("HOOKRT_CLAUDE_HOOK_TEST_PANIC", "1")],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = claude_hook_with(
        &example,
        &claude_input("Stop").to_string(),
        &[],
        &[("HOOKRT_CLAUDE_HOOK_TEST_PANIC", "1")],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "not a gate: a non-blocking error"
    );

    // A hook slower than --deadline-ms: exit 2 at the deadline.
    let slow = dir.path().join("slow");
    fs::create_dir_all(slow.join("hooks")).unwrap();
    fs::copy(
        repo().join("example-hooks/hostile/hooks/infinite_loop.rs"),
        slow.join("hooks/infinite_loop.rs"),
    )
    .unwrap();
    fs::write(
        slow.join("hookrt.toml"),
        "[hooks.infinite_loop]\nfuel = 10_000_000_000\ndeadline_ms = 60_000\n",
    )
    .unwrap();
    build_agent(&slow);
    let started = std::time::Instant::now();
    let out = claude_hook_with(&slow, &input, &["--deadline-ms", "500"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--deadline-ms"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "ended at its own deadline"
    );
}

#[test]
fn an_overlong_input_line_is_skipped_as_malformed_and_the_rest_still_run() {
    let good: Vec<String> = fs::read_to_string(transcript())
        .unwrap()
        .lines()
        .take(2)
        .map(String::from)
        .collect();
    // 3 MiB of JSON on one line: more than any envelope may take.
    let huge = format!("{{\"pad\":\"{}\"}}", "x".repeat(3 * 1024 * 1024));
    let mut f = tempfile::NamedTempFile::new().unwrap();
    writeln!(f, "{}\n{huge}\n{}", good[0], good[1]).unwrap();
    let agent = repo().join("example-hooks/agent");
    let out = run(&[
        "run",
        agent.to_str().unwrap(),
        "--events",
        f.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let limit = 1024 * 1024 + 64 * 1024;
    assert!(
        err.contains(&format!(
            "line 2: {} bytes, longer than the {limit} bytes an envelope line may take; skipped",
            huge.len()
        )),
        "{err}"
    );
    let lines = json_lines(&out);
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["malformed_lines"], 1);
    assert_eq!(summary["events"], 2);
}

/// `(hook, handler, outcome)` of every delivery line of a run.
fn outcomes(out: &Output) -> Vec<(String, String, String)> {
    json_lines(out)
        .iter()
        .filter(|l| l.get("outcome").is_some())
        .map(|l| {
            let s = |k: &str| l[k].as_str().unwrap_or_default().to_owned();
            (s("hook"), s("handler"), s("outcome"))
        })
        .collect()
}

#[test]
fn build_out_writes_a_prebuilt_folder_that_runs_without_the_sdk_or_cargo() {
    let out = tempfile::tempdir().unwrap();
    let prebuilt = out.path().join("agent");
    let agent = repo().join("example-hooks/agent");
    let built = run(&[
        "build",
        agent.to_str().unwrap(),
        "--out",
        prebuilt.to_str().unwrap(),
    ]);
    assert!(built.status.success(), "{}", text(&built.stderr));
    let mut files: Vec<String> = walk(&prebuilt)
        .iter()
        .map(|p| p.strip_prefix(&prebuilt).unwrap().display().to_string())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "hookrt.toml",
            "hooks/alerts.wasm",
            "hooks/audit.wasm",
            "hooks/context-pruner.wasm",
            "hooks/observability/metrics.wasm",
            "hooks/policy.wasm",
            "hooks/protected-paths.wasm",
            "hooks/secret_scan.wasm",
            "hooks/tool_timer.wasm",
        ]
    );
    let from_source = run(&["run", agent.to_str().unwrap(), "--events", &transcript()]);
    // No SDK beside the binary and no cargo on PATH: nothing may need them.
    let from_prebuilt = hookrt(&[
        "run",
        "--prebuilt",
        prebuilt.to_str().unwrap(),
        "--events",
        &transcript(),
    ])
    .env("HOOKRT_SDK_DIR", "/nonexistent/guest-sdk")
    .env("CARGO_BIN", "/nonexistent/cargo")
    .output()
    .unwrap();
    assert!(
        from_prebuilt.status.success(),
        "{}",
        text(&from_prebuilt.stderr)
    );
    assert!(!outcomes(&from_source).is_empty());
    assert_eq!(outcomes(&from_prebuilt), outcomes(&from_source));
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            all.extend(walk(&p));
        } else {
            all.push(p);
        }
    }
    all
}

#[test]
fn prebuilt_flag_refuses_a_source_hook_naming_it_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &repo().join("example-hooks/hostile/hooks/witness.rs"),
        &dir.path().join("hooks/witness.rs"),
    );
    let out = run(&["check", "--prebuilt", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(&dir.path().join("hooks/witness.rs").display().to_string()),
        "{err}"
    );
    assert!(
        err.contains("loaded in `prebuilt` mode: nothing is compiled"),
        "{err}"
    );
    assert!(err.contains("hookrt build DIR --out OUT"), "{err}");
}

#[test]
fn a_hook_built_by_hookrt_sees_no_host_secret_in_its_build_environment() {
    let dir = tempfile::tempdir().unwrap();
    // The user's HOME as the build would see it; cargo and rustup keep theirs.
    let home = dir.path().join("home");
    fs::create_dir_all(&home).unwrap();
    // A crate hook: a single-file hook may not say `option_env!`.
    copy(
        &repo().join("example-hooks/testing/hooks/env_leak"),
        &dir.path().join("hooks/env_leak"),
    );
    let lib = dir.path().join("hooks/env_leak/src/lib.rs");
    let src = fs::read_to_string(&lib).unwrap();
    // A fresh source, so this build (not an earlier cached one) is what runs.
    let nonce = format!("{:?}", std::time::SystemTime::now());
    fs::write(&lib, format!("{src}\n// {nonce}\n")).unwrap();
    let out = hookrt(&[
        "run",
        dir.path().to_str().unwrap(),
        "--events",
        &transcript(),
        "--logs",
    ])
    .env("HOOKRT_TEST_SECRET", "hunter2-host-secret")
    .env("HOME", &home)
    .env("CARGO_HOME", tool_home("CARGO_HOME", ".cargo"))
    .env("RUSTUP_HOME", tool_home("RUSTUP_HOME", ".rustup"))
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let field = |name: &str| -> Vec<String> {
        json_lines(&out)
            .iter()
            .filter_map(|l| l["logs"].as_array())
            .flatten()
            .filter_map(|log| log["fields"].as_array())
            .flatten()
            .filter(|f| f[0] == name)
            .map(|f| f[1].as_str().unwrap().to_owned())
            .collect()
    };
    let seen = field("secret");
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|s| s == "absent"), "{seen:?}");
    for (name, users) in [
        ("home", home.clone()),
        ("cargo_home", tool_home("CARGO_HOME", ".cargo")),
        ("rustup_home", tool_home("RUSTUP_HOME", ".rustup")),
    ] {
        let seen = field(name);
        assert!(!seen.is_empty());
        assert!(
            seen.iter()
                .all(|h| !h.starts_with(home.to_str().unwrap()) && Path::new(h) != users),
            "the build saw the user's {name}: {seen:?}"
        );
    }
}

/// Where cargo's or rustup's own home is (`key`, else below `$HOME`).
fn tool_home(key: &str, below_home: &str) -> PathBuf {
    std::env::var_os(key)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(below_home))
}

#[test]
fn a_single_file_hook_including_a_host_file_is_refused_at_check_and_nothing_of_the_file_shows() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("credentials");
    fs::write(&secret, "aws_secret_access_key = CANARY-7f1e-do-not-leak\n").unwrap();
    fs::create_dir_all(dir.path().join("agent/hooks")).unwrap();
    let agent = dir.path().join("agent");
    for (name, code) in [
        (
            "bytes",
            format!(
                "const K: &[u8] = include_bytes!({:?});",
                secret.to_str().unwrap()
            ),
        ),
        (
            "text",
            "const K: &str = include_str!(concat!(env!(\"HOME\"), \"/.aws/credentials\"));"
                .to_owned(),
        ),
        (
            "called",
            format!(
                "macro_rules! call {{ ($m:ident) => {{ $m!({:?}) }} }}\nconst K: &[u8] = call!(include_bytes);",
                secret.to_str().unwrap()
            ),
        ),
        (
            "module",
            format!("#[path = {:?}]\nmod k;", secret.to_str().unwrap()),
        ),
        (
            "number",
            format!(
                "macro_rules! call {{ ($n:tt . $m:ident) => {{ $m!({:?}) }} }}\nconst K: &[u8] = call!(1.include_bytes);",
                secret.to_str().unwrap()
            ),
        ),
        (
            "made",
            format!(
                "macro_rules! m {{ ($i:ident) => {{ #[path = {:?}] mod $i; }} }}\nm!(k);",
                secret.to_str().unwrap()
            ),
        ),
        ("home", "const K: &str = env!(\"HOME\");".to_owned()),
    ] {
        let _ = fs::remove_dir_all(agent.join("hooks"));
        fs::create_dir_all(agent.join("hooks")).unwrap();
        let source = format!(
            "use hookrt_sdk::prelude::*;\n{code}\n#[derive(Default)]\npub struct Leak;\nimpl Leak {{ fn any(&mut self, _e: &Event, _c: &Context) -> HookResult {{ Ok(()) }} }}\nhookrt_sdk::define_hook!(Leak {{ \"*\" => any, }});\n"
        );
        fs::write(agent.join(format!("hooks/{name}.rs")), source).unwrap();
        let started = std::time::Instant::now();
        let out = hookrt(&["check", agent.to_str().unwrap()])
            .output()
            .unwrap();
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(!out.status.success(), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("hooks/{name}.rs")),
            "{name}: {stderr}"
        );
        assert!(
            stderr.contains("would read a file of the host"),
            "{name}: {stderr}"
        );
        assert!(stderr.contains("line "), "{name}: {stderr}");
        for output in [&stdout, &stderr] {
            assert!(
                !output.contains("CANARY"),
                "{name}: the file's text shows: {output}"
            );
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{name}: refused before cargo ran"
        );
    }
}

#[test]
fn a_crate_hook_whose_build_script_never_ends_stops_its_build_at_the_timeout() {
    // A build script that never ends (a proc macro would do the same): the
    // cargo time limit stops cargo, rustc and the build script together.
    let dir = tempfile::tempdir().unwrap();
    let krate = dir.path().join("agent/hooks/stuck");
    // In the crate's folder: where the build may write, Landlock or not.
    let started_mark = krate.join("build-script-started");
    fs::create_dir_all(krate.join("src")).unwrap();
    fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"stuck\"\nversion = \"0.1.0\"\nedition = \"2024\"\nbuild = \"build.rs\"\n\n[lib]\ncrate-type = [\"cdylib\"]\n\n[workspace]\n",
    )
    .unwrap();
    fs::write(krate.join("src/lib.rs"), "").unwrap();
    // No dependency: its lock names the crate and the SDK patch it leaves
    // unused (the SDK's own version), as `hookrt lock` writes it (crate
    // hooks build --locked).
    let sdk = fs::read_to_string(repo().join("guest-sdk/Cargo.toml")).unwrap();
    let sdk_version = sdk
        .lines()
        .find_map(|l| l.strip_prefix("version = "))
        .expect("guest-sdk/Cargo.toml states its version");
    fs::write(
        krate.join("Cargo.lock"),
        format!("# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 4\n\n[[package]]\nname = \"stuck\"\nversion = \"0.1.0\"\n\n[[patch.unused]]\nname = \"hookrt-sdk\"\nversion = {sdk_version}\n"),
    )
    .unwrap();
    fs::write(
        krate.join("build.rs"),
        format!(
            "fn main() {{ std::fs::write({:?}, \"\").unwrap(); loop {{ std::thread::sleep(std::time::Duration::from_secs(1)); }} }}\n",
            started_mark.to_str().unwrap()
        ),
    )
    .unwrap();
    // A cache of its own: the build's processes name it in their arguments.
    let cache = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let mut child = hookrt(&["check", dir.path().join("agent").to_str().unwrap()])
        .env("HOOKRT_CARGO_BUILD_TIMEOUT_S", "30")
        .env("HOOKRT_CACHE_DIR", cache.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Before the limit, a build without one would run for ever.
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(240) {
            let _ = child.kill();
            panic!("the build was never stopped");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("cargo ran longer than 30 s building it and was stopped"),
        "{err}"
    );
    assert!(err.contains("HOOKRT_CARGO_BUILD_TIMEOUT_S"), "{err}");
    assert!(started_mark.exists(), "the build script ran");
    // Nothing of the build outlives it: not cargo, not the build script.
    assert_no_process_names(cache.path());
}

#[test]
fn the_default_cache_is_per_user_private_and_nothing_is_read_from_or_written_to_the_agent_folder() {
    // A component-only agent folder (from `build --out`), with a planted
    // artifact where the cache used to live.
    let tmp = tempfile::tempdir().unwrap();
    let agent = tmp.path().join("agent");
    let built = run(&[
        "build",
        repo().join("example-hooks/agent").to_str().unwrap(),
        "--out",
        agent.to_str().unwrap(),
    ]);
    assert!(built.status.success(), "{}", text(&built.stderr));
    let planted = agent.join(".hookrt/artifacts/planted.cwasm");
    copy(&repo().join("example-hooks/agent/hookrt.toml"), &planted);
    let xdg = tmp.path().join("xdg");
    let out = hookrt(&["check", agent.to_str().unwrap()])
        .env_remove("HOOKRT_CACHE_DIR")
        .env("XDG_CACHE_HOME", &xdg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let cache = xdg.join("hookrt");
    assert_eq!(mode(&cache), 0o700);
    // One artifact and its MAC file per hook, and one start record each.
    let artifacts = walk(&cache.join("artifacts"));
    let code = artifacts
        .iter()
        .filter(|a| a.extension().is_some_and(|e| e == "cwasm"));
    assert_eq!((code.count(), artifacts.len()), (8, 16), "{artifacts:?}");
    let starts = walk(&cache.join("starts"));
    assert_eq!(starts.len(), 8, "{starts:?}");
    assert!(artifacts.iter().chain(&starts).all(|a| mode(a) == 0o600));
    assert_eq!(mode(&cache.join("starts")), 0o700);
    assert_eq!(walk(&agent.join(".hookrt")), [planted]);
}

#[test]
fn lock_pins_the_folder_and_audit_json_shows_each_hooks_lock_status() {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &repo().join("example-hooks/hostile/hooks/witness.rs"),
        &dir.path().join("hooks/witness.rs"),
    );
    let d = dir.path().to_str().unwrap();
    let status = |out: &Output| -> Vec<(String, String)> {
        let v: Value = serde_json::from_slice(&out.stdout).expect("audit JSON");
        v["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["slug"].as_str().unwrap().to_owned(),
                    h["lock"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let pair = |s: &str| vec![("witness".to_owned(), s.to_owned())];
    assert_eq!(status(&run(&["audit", "--json", d])), pair("unlocked"));
    let locked = run(&["lock", d]);
    assert!(locked.status.success(), "{}", text(&locked.stderr));
    assert!(dir.path().join("hookrt.lock").is_file());
    assert_eq!(status(&run(&["audit", "--json", d])), pair("locked"));

    // A wider grant is drift: refused by run, shown by audit.
    fs::write(
        dir.path().join("hookrt.toml"),
        "[hooks.witness]\ngrants = [\"log\", \"state\"]\n",
    )
    .unwrap();
    let refused = run(&["run", d, "--events", &transcript()]);
    assert_eq!(refused.status.code(), Some(1));
    let err = text(&refused.stderr);
    assert!(
        err.contains(
            "hook `witness` drifted from hookrt.lock: its settings in hookrt.toml changed: settings.grants [\"log\"] -> [\"log\",\"state\"]"
        ),
        "{err}"
    );
    let audit = run(&["audit", "--json", d]);
    assert_eq!(status(&audit), pair("drifted"));
    let v: Value = serde_json::from_slice(&audit.stdout).unwrap();
    assert!(
        v["hooks"][0]["lock_detail"]
            .as_str()
            .unwrap()
            .contains("grants expected [log]")
    );
    let text_audit = text(&run(&["audit", d]).stdout);
    assert!(
        text_audit.contains("   lock       DRIFTED: hook `witness` drifted"),
        "{text_audit}"
    );
}

#[test]
fn audit_text_spells_values_as_hookrt_toml_does() {
    let agent = repo().join("example-hooks/agent");
    let out = run(&["audit", agent.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(
        report.contains("1. audit (single_file, hookrt:hook/define-hook@0.4.0)"),
        "{report}"
    );
    assert!(report.contains("on failure of a decision: deny"));
    assert!(
        !report.contains("SingleFile") && !report.contains("Deny"),
        "no Rust debug names"
    );
}

#[test]
fn a_skipped_duplicate_is_said_on_stderr() {
    let agent = repo().join("example-hooks/agent");
    let first = fs::read_to_string(transcript())
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    let mut f = tempfile::NamedTempFile::new().unwrap();
    writeln!(f, "{first}\n{first}").unwrap();
    let out = run(&[
        "run",
        agent.to_str().unwrap(),
        "--events",
        f.path().to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(
        text(&out.stderr)
            .contains("hookrt: event `evt_0001` was already taken; skipped as a duplicate"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(json_lines(&out).last().unwrap()["summary"]["duplicates"], 1);
}

/// `hookrt test AGENT` on the example transcript against `expect` (`--update` to write it).
fn replay_transcript(agent: &str, expect: &Path, update: bool) -> Output {
    let events = repo().join("example-hooks/agent/transcript.jsonl");
    let mut args = vec![
        "test",
        agent,
        "--events",
        events.to_str().unwrap(),
        "--expect",
        expect.to_str().unwrap(),
    ];
    if update {
        args.push("--update");
    }
    run(&args)
}

/// `hookrt test --update` records `expect`, then `hookrt test` passes against it.
fn records_then_passes(agent: &str, expect: &Path) {
    let out = replay_transcript(agent, expect, true);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = replay_transcript(agent, expect, false);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("ok: "),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn new_writes_a_hook_that_passes_check_and_test() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let a = agent.to_str().unwrap();
    let out = run(&[
        "new",
        &format!("{a}/hooks/tool-guard"),
        "--events",
        "actions.requested,message.completed,observe:file.edit.requested,task.started",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let source = fs::read_to_string(agent.join("hooks/tool-guard.rs")).unwrap();
    assert!(source.contains("impl Hook for ToolGuard"), "{source}");
    // Laid out as rustfmt does: a signature over 100 columns on several lines.
    assert!(
        source.contains(
            "    fn actions_requested(\n        &mut self,\n        data: ActionsRequested,\n"
        ),
        "{source}"
    );
    assert!(
        source.contains("        data: FileEditRequested,\n"),
        "{source}"
    );
    assert!(
        source.contains(
            "    fn message_completed(\n        &mut self,\n        data: MessageCompleted,\n"
        ),
        "{source}"
    );
    // 99 columns: one line.
    assert!(
        source.contains(
            "    fn task_started(&mut self, data: eve::TaskStarted, event: &Event, cx: &Context) -> HookResult {\n"
        ),
        "{source}"
    );
    // A kind only Eve's stream carries gets Eve's data type (above).
    let out = run(&[
        "new",
        &format!("{a}/hooks/watcher"),
        "--crate",
        "--events",
        "*",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(agent.join("hooks/watcher/Cargo.toml").is_file());

    let out = run(&["check", a]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(
            "warning: `tool-guard` votes on `actions.requested` and fails closed by default"
        ),
        "{}",
        text(&out.stderr)
    );

    let expect = dir.path().join("expected.jsonl");
    let out = replay_transcript(a, &expect, false);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("expected.jsonl does not exist: run `hookrt test"));
    records_then_passes(a, &expect);

    // Refusals name what is wrong and the fix.
    let out = run(&[
        "new",
        &format!("{a}/hooks/typo"),
        "--events",
        "mesage.completed",
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr)
            .contains("unknown event kind `mesage.completed` (did you mean `message.completed`?)"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&[
        "new",
        &format!("{a}/hooks/deploys"),
        "--events",
        "custom.deploy.finished",
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(
            "`custom.deploy.finished` is an agent server's own kind: the SDK has no typed method for it; use `*`"
        ),
        "{}",
        text(&out.stderr)
    );
    let out = run(&["new", &format!("{a}/hooks/tool-guard")]);
    assert!(text(&out.stderr).contains("already exists: the slug `tool-guard` is taken"));
    let out = run(&[
        "new",
        &format!("{a}/subagents/researcher/hooks/notes"),
        "--events",
        "message.completed",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(agent.join("subagents/researcher/hooks/notes.rs").is_file());
    assert!(
        text(&out.stdout).contains(&format!("  hookrt check {a}\n")),
        "the next steps name the agent folder: {}",
        text(&out.stdout)
    );
}

#[test]
fn a_ts_hook_whose_top_level_never_ends_stops_its_build_at_the_timeout() {
    // The top level runs while the component is built (Wizer), with no fuel:
    // the build timeout stops node and Wizer together.
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("hooks")).unwrap();
    fs::write(
        dir.path().join("hooks/stuck.ts"),
        "import { defineHook } from \"hookrt\";\nwhile (Date.now() > 0) {}\nexport default defineHook({ \"*\"() {} });\n",
    )
    .unwrap();
    // A cache of its own: the build's processes name it in their arguments.
    let cache = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let out = hookrt(&["check", dir.path().to_str().unwrap()])
        .env("HOOKRT_JS_BUILD_TIMEOUT_S", "5")
        .env("HOOKRT_CACHE_DIR", cache.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("the TS build ran longer than 5 s and was stopped"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(120));
    // Nothing of the build outlives it: not node, not the Wizer node started
    // (SIGKILL is delivered at once; the dead are reaped within moments).
    assert_no_process_names(cache.path());
}

/// `hookrt new --lang LANG` writes `tool-notes.EXT` holding `expect`, says to
/// run `toolchain`, and the hook checks and records then passes a replay;
/// the slug is then taken whatever the language. The agent folder's path.
fn new_script_hook_checks_and_tests(
    dir: &Path,
    lang: &str,
    ext: &str,
    expect: &[&str],
    toolchain: &str,
) -> PathBuf {
    let agent = dir.join("agent");
    let a = agent.to_str().unwrap();
    let out = run(&[
        "new",
        &format!("{a}/hooks/tool-notes"),
        "--lang",
        lang,
        "--events",
        "actions.requested,action.result,file.edit.requested,step.completed,turn.stopping,observe:turn.completed,*",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let source = fs::read_to_string(agent.join(format!("hooks/tool-notes.{ext}"))).unwrap();
    for fragment in expect {
        assert!(source.contains(fragment), "{fragment}: {source}");
    }
    assert!(text(&out.stdout).contains(toolchain));

    let out = run(&["check", a]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let expect = dir.join("expected.jsonl");
    records_then_passes(a, &expect);
    let recorded = fs::read_to_string(&expect).unwrap();
    assert!(recorded.contains("tool-notes"), "{recorded}");
    let out = run(&["new", &format!("{a}/hooks/tool-notes")]);
    assert!(text(&out.stderr).contains("already exists: the slug `tool-notes` is taken"));
    agent
}

#[test]
fn new_ts_writes_a_hook_that_checks_and_tests() {
    let dir = tempfile::tempdir().unwrap();
    let agent = new_script_hook_checks_and_tests(
        dir.path(),
        "ts",
        "ts",
        &[
            "export default defineHook({",
            "  \"actions.requested\"(event, ctx) {",
        ],
        "scripts/js-toolchain",
    );
    // A crate is Rust only.
    let a = agent.to_str().unwrap();
    let out = run(&[
        "new",
        &format!("{a}/hooks/other"),
        "--lang",
        "ts",
        "--crate",
    ]);
    assert!(text(&out.stderr).contains("a TypeScript hook is one file"));
}

#[test]
fn new_py_writes_a_hook_that_checks_and_tests() {
    let dir = tempfile::tempdir().unwrap();
    new_script_hook_checks_and_tests(
        dir.path(),
        "py",
        "py",
        &[
            "class ToolNotes(Hook):",
            "    def actions_requested(self, data, event, ctx):",
            "    def turn_stopping(self, data, event, ctx):",
        ],
        "scripts/py-toolchain",
    );
}

/// A temp agent with `typed_policy` blocking `blocked`, and the transcript with
/// a redelivery (`evt_0005` again as attempt 2) at its end.
fn policy_agent(dir: &Path, blocked: &str) -> PathBuf {
    let agent = dir.join("agent");
    copy(
        &repo().join("example-hooks/testing/hooks/typed_policy.rs"),
        &agent.join("hooks/typed_policy.rs"),
    );
    fs::write(
        agent.join("hookrt.toml"),
        format!("[hooks.typed_policy]\non_failure = \"deny\"\nconfig = {{ blocked = [\"{blocked}\"] }}\n"),
    )
    .unwrap();
    agent
}

fn events_with_redelivery(dir: &Path) -> PathBuf {
    let text = fs::read_to_string(transcript()).unwrap();
    let again = text
        .lines()
        .find(|l| l.contains("\"id\":\"evt_0005\""))
        .unwrap()
        .replacen("\"coordinates\"", "\"attempt\":2,\"coordinates\"", 1);
    let path = dir.join("events.jsonl");
    fs::write(&path, format!("{text}{again}\n")).unwrap();
    path
}

#[test]
fn test_replays_twice_to_identical_bytes_and_replays_a_redelivery() {
    let dir = tempfile::tempdir().unwrap();
    let agent = policy_agent(dir.path(), "run_shell");
    let events = events_with_redelivery(dir.path());
    let mut written = Vec::new();
    for name in ["one.jsonl", "two.jsonl"] {
        let expect = dir.path().join(name);
        let out = run(&[
            "test",
            agent.to_str().unwrap(),
            "--events",
            events.to_str().unwrap(),
            "--expect",
            expect.to_str().unwrap(),
            "--update",
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        written.push(fs::read(&expect).unwrap());
    }
    assert_eq!(written[0], written[1], "byte-identical replays");
    let records: Vec<Value> = text(&written[0])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let attempts: Vec<u64> = records
        .iter()
        .filter(|r| r["event"] == "evt_0005" && r["hook"] == "typed_policy")
        .map(|r| r["attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(attempts, [1, 2], "the redelivery reached the hook again");
}

#[test]
fn test_names_the_event_hook_and_field_of_a_changed_decision() {
    let dir = tempfile::tempdir().unwrap();
    let agent = policy_agent(dir.path(), "run_shell");
    let events = events_with_redelivery(dir.path());
    let expect = dir.path().join("expected.jsonl");
    let args = |update: bool| {
        let mut v = vec![
            "test".to_owned(),
            agent.to_str().unwrap().to_owned(),
            "--events".into(),
            events.to_str().unwrap().into(),
            "--expect".into(),
            expect.to_str().unwrap().into(),
        ];
        if update {
            v.push("--update".into());
        }
        v
    };
    let go = |update: bool| {
        let a = args(update);
        run(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    assert!(go(true).status.success());
    // The policy now blocks another tool: the decision on evt_0005 changes.
    policy_agent(dir.path(), "read_file");
    let out = go(false);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "evt_0005 (actions.requested), attempt 1, hook typed_policy, handler actions.requested: `answer[0].answer` differs\n  expected: \"abstain\"\n  actual:   \"deny\""
        ),
        "{err}"
    );
    assert!(
        err.contains("if the change is intended, run again with --update"),
        "{err}"
    );
}

#[test]
fn a_failed_vote_says_on_stderr_that_it_denied_the_calls() {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &repo().join("example-hooks/testing/hooks/trapping_decider.rs"),
        &dir.path().join("hooks/trapping_decider.rs"),
    );
    let requested = fs::read_to_string(transcript())
        .unwrap()
        .lines()
        .find(|l| l.contains("\"id\":\"evt_0005\""))
        .unwrap()
        .to_owned();
    let mut f = tempfile::NamedTempFile::new().unwrap();
    writeln!(f, "{requested}").unwrap();
    let out = run(&[
        "run",
        dir.path().to_str().unwrap(),
        "--events",
        f.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("optional hook failed; it counts as a deny of every requested call (on_failure = \"deny\"); no cascade"),
        "{err}"
    );
    assert!(!err.contains("recorded, no cascade"), "{err}");
}

#[test]
fn links_planted_at_an_expectation_file_or_a_journal_lock_are_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let precious = dir.path().join("precious");
    fs::write(&precious, "keep me\n").unwrap();
    // `test --update` replaces the link with the records; the target stays.
    let expect = dir.path().join("expected.jsonl");
    std::os::unix::fs::symlink(&precious, &expect).unwrap();
    let agent = repo().join("example-hooks/agent");
    let read = replay_transcript(agent.to_str().unwrap(), &expect, false);
    assert!(!read.status.success());
    assert!(
        text(&read.stderr).contains("symbolic link"),
        "{}",
        text(&read.stderr)
    );
    let out = replay_transcript(agent.to_str().unwrap(), &expect, true);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(fs::read_to_string(&precious).unwrap(), "keep me\n");
    assert!(
        !fs::symlink_metadata(&expect)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A journal whose lock file is a link is refused.
    let journal = dir.path().join("journal.db");
    std::os::unix::fs::symlink(&precious, dir.path().join("journal.db.lock")).unwrap();
    let out = run(&[
        "run",
        agent.to_str().unwrap(),
        "--events",
        &transcript(),
        "--journal",
        journal.to_str().unwrap(),
    ]);
    assert!(!out.status.success(), "a linked journal lock is refused");
    assert_eq!(fs::read_to_string(&precious).unwrap(), "keep me\n");
}

#[test]
fn claude_install_merges_every_event_once_and_the_hook_it_writes_runs() {
    let agent = repo().join("example-hooks/agent");
    build_agent(&agent);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".claude/settings.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let mine = serde_json::json!({"theme": "dark", "hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "./my-guard.sh"}]}]}});
    fs::write(&file, serde_json::to_string_pretty(&mine).unwrap()).unwrap();
    let settings = file.to_str().unwrap();
    let agent_dir = agent.to_str().unwrap();

    // --dry-run shows the change and writes nothing.
    let before = fs::read(&file).unwrap();
    let dry = run(&[
        "claude",
        "install",
        agent_dir,
        "--settings",
        settings,
        "--dry-run",
    ]);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    assert!(
        text(&dry.stdout)
            .lines()
            .any(|l| l.starts_with('+') && l.contains("\"PostToolBatch\": [")),
        "{}",
        text(&dry.stdout)
    );
    assert_eq!(fs::read(&file).unwrap(), before);

    let out = run(&["claude", "install", agent_dir, "--settings", settings]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        // Every event of the pinned Claude Code but `WorktreeCreate`.
        text(&out.stdout).contains(&format!(
            "{} Claude Code events",
            hookrt::front::bridge::Bridge::named("claude-code")
                .unwrap()
                .events()
                .len()
                - 1
        )),
        "{}",
        text(&out.stdout)
    );
    let written = fs::read(&file).unwrap();
    let v: Value = serde_json::from_slice(&written).unwrap();
    assert_eq!(v["theme"], "dark");
    let hooks = v["hooks"].as_object().unwrap();
    // Every event but WorktreeCreate, whose hook must create the worktree.
    assert_eq!(
        hooks.len(),
        hookrt::front::bridge::Bridge::named("claude-code")
            .unwrap()
            .events()
            .len()
            - 1
    );
    assert!(hooks.get("WorktreeCreate").is_none());
    assert_eq!(
        v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "./my-guard.sh"
    );
    // Again: nothing changes.
    let again = run(&["claude", "install", agent_dir, "--settings", settings]);
    assert!(text(&again.stdout).contains("already up to date"));
    assert_eq!(fs::read(&file).unwrap(), written);

    // The PreToolUse entry it wrote, run as Claude Code runs it, denies rm -rf.
    let entry = &v["hooks"]["PreToolUse"][1]["hooks"][0];
    assert_eq!(entry["onFailure"], "block");
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let mut input = claude_input("PreToolUse");
    input["tool_input"]["command"] = "rm -rf build/".into();
    let mut command = Command::new(entry["command"].as_str().unwrap());
    command
        .args(&args)
        .envs(hookrt(&[]).get_envs().filter_map(|(k, v)| Some((k, v?))));
    let out = with_stdin(command, &input.to_string());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");

    // Over HTTP instead: the command entries are replaced, the user's stays.
    let url = "http://127.0.0.1:7700";
    let out = run(&[
        "claude",
        "install",
        agent_dir,
        "--settings",
        settings,
        "--http",
        url,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
    let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2);
    assert_eq!(
        pre[1]["hooks"][0]["url"],
        "http://127.0.0.1:7700/v1/claude-code?event=PreToolUse&budget_ms=8000"
    );
    assert_eq!(pre[1]["hooks"][0]["allowedEnvVars"][0], "HOOKRT_TOKEN");

    // Settings that are not JSON are refused, never overwritten.
    fs::write(&file, "{ not json").unwrap();
    let out = run(&["claude", "install", agent_dir, "--settings", settings]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("is not JSON"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), "{ not json");
}

#[test]
fn audit_says_which_hooks_can_rewrite_block_or_keep_a_turn_going() {
    let agent = crate::common::TempAgent::new()
        .hook("testing/hooks/rewriter.rs", "rewriter.rs")
        .hook("testing/hooks/gatekeeper.rs", "gatekeeper.rs")
        .hook("testing/hooks/deny_all.rs", "deny_all.rs")
        .config("[hooks.\"rewriter\"]\nconfig = { suffix = \"\" }\n");
    let dir = agent.path().to_str().unwrap();
    let out = run(&["audit", dir]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let may: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("   may "))
        .collect();
    assert_eq!(
        may,
        [
            "   may        block (prompt.submitted), continue turn (turn.stopping), block (compaction.requested), block (task.created), block (config.changed)",
            "   may        rewrite input (actions.requested), rewrite input (permission.requested)",
        ],
        "{report}"
    );
    let json: Value = serde_json::from_slice(&run(&["audit", "--json", dir]).stdout).unwrap();
    let deny_all = &json["hooks"][0];
    assert_eq!(deny_all["slug"], "deny_all");
    assert_eq!(
        deny_all["subscriptions"][0]["may"],
        serde_json::json!(["deny", "ask", "allow", "add context"])
    );
}

/// `hookrt install --agent NAME`, for each agent beside Claude Code, into a
/// project that already has the user's own hooks in the agent's file: the
/// user's hooks stay, every event gets hookrt's entry in the agent's shape
/// and unit, a second run changes nothing, `--dry-run` writes nothing, and
/// the tool gate's entry, run as the agent runs it (a shell command line),
/// denies `rm -rf` in the agent's words.
#[test]
fn install_writes_each_agents_own_file_keeping_the_users_hooks_and_its_gate_denies() {
    let agent = repo().join("example-hooks/agent");
    build_agent(&agent);
    let agent_dir = agent.to_str().unwrap();
    // agent, its project file, the user's own file, the tool gate and
    // where its entry's command line is, the deny input, the deny answer.
    let cases = [
        (
            "codex",
            ".codex/hooks.json",
            serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}),
            "PreToolUse",
            ("tool_input", "command"),
            ("/hookSpecificOutput/permissionDecision", "deny"),
        ),
        (
            "gemini",
            ".gemini/settings.json",
            serde_json::json!({"theme": "dark", "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5000}]}]}}),
            "BeforeTool",
            ("tool_input", "command"),
            ("/decision", "deny"),
        ),
        (
            "cursor",
            ".cursor/hooks.json",
            serde_json::json!({"version": 1, "hooks": {"preToolUse": [{"command": "./guard.sh"}]}}),
            "preToolUse",
            ("tool_input", "command"),
            ("/permission", "deny"),
        ),
        (
            "goose",
            ".agents/plugins/hookrt/hooks/hooks.json",
            serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "^developer__shell$", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}]}}),
            "PreToolUse",
            ("tool_input", "command"),
            ("/decision", "block"),
        ),
        (
            "copilot",
            ".github/hooks/hookrt.json",
            serde_json::json!({"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./guard.sh"}]}}),
            "preToolUse",
            ("toolArgs", "command"),
            ("/permissionDecision", "deny"),
        ),
    ];
    for (name, path, mine, gate, (field, key), (pointer, deny)) in cases {
        let project = tempfile::tempdir().unwrap();
        let file = project.path().join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(&file, serde_json::to_string_pretty(&mine).unwrap()).unwrap();
        let install = |extra: &[&str]| {
            let mut args = vec!["install", "--agent", name, agent_dir];
            args.extend_from_slice(extra);
            let mut c = hookrt(&args);
            c.current_dir(project.path());
            c.output().unwrap()
        };
        let before = fs::read(&file).unwrap();
        let dry = install(&["--dry-run"]);
        assert!(dry.status.success(), "{name}: {}", text(&dry.stderr));
        assert!(
            text(&dry.stdout).contains("+"),
            "{name}: {}",
            text(&dry.stdout)
        );
        assert_eq!(fs::read(&file).unwrap(), before, "{name}: --dry-run wrote");
        let out = install(&[]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let written = fs::read(&file).unwrap();
        let v: Value = serde_json::from_slice(&written).unwrap();
        let bridge = hookrt::front::bridge::Bridge::named(name).unwrap();
        let hooks = v["hooks"].as_object().unwrap();
        assert_eq!(hooks.len(), bridge.events().len(), "{name}: every event");
        for (key, value) in mine.as_object().unwrap() {
            if key != "hooks" {
                assert_eq!(&v[key], value, "{name}: the user's `{key}` stays");
            }
        }
        let entries = v["hooks"][gate].as_array().unwrap();
        assert_eq!(entries.len(), 2, "{name}: the user's entry and hookrt's");
        assert_eq!(
            entries[0], mine["hooks"][gate][0],
            "{name}: the user's entry stays first"
        );
        let again = install(&[]);
        assert!(text(&again.stdout).contains("already up to date"), "{name}");
        assert_eq!(
            fs::read(&file).unwrap(),
            written,
            "{name}: a second run changed it"
        );

        // The gate's entry, run as the agent runs it.
        let entry = match &entries[1]["hooks"] {
            Value::Array(list) => list[0].clone(),
            _ => entries[1].clone(),
        };
        let line = ["command", "bash"]
            .iter()
            .find_map(|k| entry[*k].as_str())
            .unwrap_or_else(|| panic!("{name}: no command line in {entry}"));
        let mut input: Value = serde_json::from_str(&agent_fixture(name, gate)).unwrap();
        input[field][key] = "rm -rf build/".into();
        let mut command = Command::new("sh");
        command
            .args(["-c", line])
            .envs(hookrt(&[]).get_envs().filter_map(|(k, v)| Some((k, v?))));
        let out = with_stdin(command, &input.to_string());
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        let answer: Value = serde_json::from_str(text(&out.stdout).trim())
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", text(&out.stdout)));
        assert_eq!(
            answer.pointer(pointer).and_then(Value::as_str),
            Some(deny),
            "{name}: {answer}"
        );
    }
    // An agent without http hooks forwards from its command hook.
    let out = run(&[
        "install",
        "--agent",
        "codex",
        agent_dir,
        "--http",
        "http://127.0.0.1:7700",
        "--dry-run",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("--deadline-ms 10000 --http http://127.0.0.1:7700"),
        "{}",
        text(&out.stdout)
    );
    let out = run(&["install", "--agent", "zed", agent_dir]);
    assert!(
        text(&out.stderr).contains(
            "no agent `zed`: give --agent one of claude-code, codex, gemini, cursor, copilot"
        ),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn help_describes_each_command_on_its_own_line() {
    let out = run(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    let line = |command: &str| {
        help.lines()
            .find(|l| l.trim_start().starts_with(&format!("{command} ")))
            .unwrap_or_else(|| panic!("`{command}` is listed in:\n{help}"))
            .to_owned()
    };
    let keygen = line("keygen");
    assert!(keygen.contains("Make an Ed25519 key"), "{keygen}");

    let audit = line("audit");
    assert!(
        audit.contains("Show what each hook is") && audit.contains("gates decided each tool call"),
        "{audit}"
    );
}

/// Within 10 s, no process's command line names `dir` (a stopped build's
/// processes are all gone: the dead are reaped within moments).
fn assert_no_process_names(dir: &Path) {
    let needle = dir.to_string_lossy().into_owned();
    let building = || -> Vec<String> {
        fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| fs::read(e.ok()?.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(&needle))
            .collect()
    };
    let waited = std::time::Instant::now();
    while !building().is_empty() && waited.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        building(),
        Vec::<String>::new(),
        "the build's processes were all stopped"
    );
}
