//! What agents send, recorded and replayed (issue 53, item 1): `hookrt hook
//! --record FILE` appends each input as the agent sent it, masked, without
//! changing the answer; `hookrt test --agent NAME --events FILE` replays
//! recordings and bare inputs through the agent's bridge, the same every
//! time; `hookrt install --record FILE` puts the flag in every command hook.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::{claude_fixture, repo, with_stdin};
use crate::{hookrt, run, text};

/// The example agent folder, built (`hookrt hook` never builds).
fn agent() -> std::path::PathBuf {
    let dir = repo().join("example-hooks/agent");
    let built = run(&["build", dir.to_str().unwrap()]);
    assert!(built.status.success(), "{}", text(&built.stderr));
    dir
}

/// Claude Code asking to run `command`, as its `PreToolUse` input.
fn pre_tool_use(command: &str) -> String {
    let mut input: Value = serde_json::from_str(&claude_fixture("PreToolUse")).unwrap();
    input["tool_input"]["command"] = command.into();
    input.to_string()
}

fn hook(agent: &Path, recording: &Path, input: &str) -> std::process::Output {
    let mut c = hookrt(&["hook", "--agent", "claude-code"]);
    c.arg(agent).arg("--record").arg(recording);
    with_stdin(c, input)
}

fn test(agent: &Path, args: &[&str]) -> std::process::Output {
    let mut c = hookrt(&["test"]);
    c.arg(agent).args(args);
    c.output().expect("hookrt runs")
}

const TOKEN: &str = "Bearer tok3nVALUEabcdef123456";

#[test]
fn a_recorded_session_is_masked_answers_unchanged_and_replays_the_same_every_time() {
    let agent = agent();
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("claude.jsonl");
    let rm = pre_tool_use(&format!(
        "curl -H 'Authorization: {TOKEN}' x && rm -rf build/"
    ));
    let out = hook(&agent, &recording, &rm);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "recording changes no answer: {answer}"
    );
    let out = hook(&agent, &recording, &claude_fixture("Notification"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let recorded = fs::read_to_string(&recording).unwrap();
    assert!(!recorded.contains("tok3nVALUE"), "masked: {recorded}");
    let lines: Vec<Value> = recorded
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["hookrt_record"], 1);
    assert_eq!(lines[0]["agent"], "claude-code");
    assert_eq!(lines[0]["transport"], "command");
    assert_eq!(lines[0]["input"]["hook_event_name"], "PreToolUse");
    assert!(
        lines[0]["input"]["tool_input"]["command"]
            .as_str()
            .unwrap()
            .contains("[redacted:bearer-token]"),
        "{}",
        lines[0]
    );

    // The recording as a test case: written once, then the same every time.
    let expect = dir.path().join("expect.jsonl");
    let (events, exp) = (recording.to_str().unwrap(), expect.to_str().unwrap());
    let update = [
        "--agent",
        "claude-code",
        "--events",
        events,
        "--expect",
        exp,
        "--update",
    ];
    let out = test(&agent, &update);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = fs::read(&expect).unwrap();
    let out = test(&agent, &update);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        fs::read(&expect).unwrap(),
        first,
        "a replay gives the same bytes"
    );
    // A recording names its agent: --agent may be left out.
    let out = test(&agent, &["--events", events, "--expect", exp]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("ok: "),
        "{}",
        text(&out.stdout)
    );
    let records: Vec<Value> = text(&first)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let policy = records
        .iter()
        .find(|r| r["hook"] == "policy" && r.get("answer").is_some())
        .unwrap_or_else(|| panic!("the policy hook's vote is expected: {records:?}"));
    assert_eq!(policy["answer"][0]["answer"], "deny", "{policy}");

    // Recorded from Claude Code, replayed as another agent: refused, naming the line.
    let out = test(
        &agent,
        &["--agent", "codex", "--events", events, "--expect", exp],
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("line 1") && err.contains("--agent claude-code"),
        "{err}"
    );
}

#[test]
fn bare_agent_inputs_replay_through_their_bridge_and_need_the_agent_named() {
    let agent = agent();
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("bare.jsonl");
    fs::write(&bare, pre_tool_use("rm -rf build/") + "\n").unwrap();
    let expect = dir.path().join("expect.jsonl");
    let (events, exp) = (bare.to_str().unwrap(), expect.to_str().unwrap());
    let out = test(&agent, &["--events", events, "--expect", exp, "--update"]);
    assert!(!out.status.success(), "a bare input is no envelope");
    assert!(
        text(&out.stderr).contains("not a valid envelope"),
        "{}",
        text(&out.stderr)
    );
    let args = [
        "--agent",
        "claude-code",
        "--events",
        events,
        "--expect",
        exp,
    ];
    let out = test(&agent, &[&args[..], &["--update"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = test(&agent, &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = test(
        &agent,
        &["--agent", "fable", "--events", events, "--expect", exp],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no agent `fable`"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_recording_never_follows_a_planted_link_and_its_failure_changes_no_answer() {
    let agent = agent();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("victim");
    fs::write(&target, "kept\n").unwrap();
    let link = dir.path().join("recording.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = hook(&agent, &link, &pre_tool_use("rm -rf build/"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    let err = text(&out.stderr);
    assert!(
        err.contains("cannot append to the recording") && err.contains("recording.jsonl"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "kept\n");
}

#[test]
fn install_puts_the_recording_in_every_command_hook() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    fs::create_dir_all(agent.join("hooks")).unwrap();
    let settings = dir.path().join("settings.json");
    let (a, s) = (agent.to_str().unwrap(), settings.to_str().unwrap());
    let out = run(&[
        "install",
        "--agent",
        "claude-code",
        a,
        "--settings",
        s,
        "--record",
        "rec.jsonl",
        "--all-events",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written: Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
    let args: Vec<&str> = written["hooks"]["PreToolUse"][0]["hooks"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let absolute = std::path::absolute("rec.jsonl").unwrap();
    assert_eq!(
        args[args.len() - 2..],
        ["--record", absolute.to_str().unwrap()],
        "{args:?}"
    );
    // Over HTTP, the events Claude Code runs only as commands forward to
    // the same `hookrt serve`, which records them with the rest
    // (`hookrt serve --record`): no command records twice.
    let out = run(&[
        "install",
        "--agent",
        "claude-code",
        a,
        "--settings",
        s,
        "--record",
        "rec.jsonl",
        "--http",
        "http://127.0.0.1:1",
        "--all-events",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written: Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
    let start = &written["hooks"]["SessionStart"][0]["hooks"][0];
    assert_eq!(start["type"], "command", "{start}");
    let args = start["args"].to_string();
    assert!(
        args.contains("\"--http\",\"http://127.0.0.1:1\"") && !args.contains("--record"),
        "{start}"
    );
    let pre = &written["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(pre["type"], "http", "{pre}");
}

/// docs/agents.md's inputs, each read by its agent's bridge, and the
/// envelope it shows, the one `hookrt test --agent claude-code` replays.
#[test]
fn the_agents_page_shows_real_inputs_and_the_envelope_they_become() {
    use hookrt::front::bridge::Bridge;
    use hookrt::front::record::Recorded;
    let page = fs::read_to_string(repo().join("docs/agents.md")).unwrap();
    let section = &page[page
        .find("## What each agent sends, and what hooks get")
        .expect("the section")..];
    let mut blocks = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if let Some(tag) = line.strip_prefix("```json ") {
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            blocks.push((tag.to_owned(), body.join("\n")));
        }
    }
    let mut shown = None;
    for (tag, body) in &blocks {
        let mut words = tag.split(' ');
        let agent = words.next().unwrap();
        if agent == "envelope" {
            shown = Some(serde_json::from_str::<Value>(body).unwrap());
            continue;
        }
        let bridge = Bridge::named(agent).unwrap_or_else(|| panic!("no agent {agent}"));
        let read = Recorded::parse(body, 1, Some(bridge), words.next())
            .and_then(|r| r.event(1))
            .unwrap_or_else(|e| panic!("{agent}: {e}"));
        assert_eq!(read.envelope.kind, "actions.requested", "{agent}");
    }
    assert_eq!(
        blocks.len(),
        7,
        "five agents, the inference hook and one envelope"
    );
    let claude = &blocks[0].1;
    let envelope = Recorded::parse(claude, 1, Bridge::named("claude-code"), None)
        .and_then(|r| r.event(1))
        .unwrap()
        .envelope;
    assert_eq!(
        serde_json::to_value(&envelope).unwrap(),
        shown.expect("the envelope block"),
        "docs/agents.md's envelope is what Claude Code's input becomes"
    );
}
