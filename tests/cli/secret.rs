//! The `secret` grant through the `hookrt` binary, with three hooks ported
//! from the public list (`example-hooks/grants/hooks/`: ntfy, Pushover and a
//! Slack DM) on recorded inputs of Claude Code and Codex, against a loopback
//! receiver standing in for each service (the table's origin is the
//! receiver here; each hook's documented table names the real one). The
//! folder does not load without a lock, a changed table is refused until
//! locked again, the value reaches the receiver where the table puts it,
//! and it is in nothing hookrt writes: the delivery's record, its errors,
//! the journal and its trail, `audit`, the lock.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;

use crate::common::{agent_fixture, with_stdin};
use crate::grants_folder;
use crate::receiver::receiver;
use crate::{hookrt, text};

/// The token every test sends.
const TOKEN: &str = "tk_live_5f3a9c0e7b1d4a28";

/// A JSON answer, with the request's first line echoed in it (a server
/// echoing what it got back, the token with it).
fn json_echo(head: &str) -> String {
    let line = head.lines().next().unwrap_or("");
    let body = if line.contains("conversations.open") {
        json!({"ok": true, "channel": {"id": "D0DMCHANNEL"}, "seen": line})
    } else {
        json!({"ok": true, "status": 1, "request": "r-1", "seen": line})
    }
    .to_string();
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// What reached the stand-in. Each `hookrt` run has ended by then: what it
/// sent is there, or was never sent.
fn arrived(rx: &mpsc::Receiver<String>) -> Option<String> {
    rx.recv_timeout(Duration::from_secs(1)).ok()
}

/// A file holding the token, mode `mode`.
fn token_file(dir: &Path, mode: u32) -> PathBuf {
    let file = dir.join("token");
    fs::write(&file, format!("{TOKEN}\n")).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(mode)).unwrap();
    file
}

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = hookrt(args);
    c.envs(env.iter().copied());
    c.output().expect("hookrt runs")
}

/// `hookrt hook --agent AGENT DIR` on a recorded input.
fn agent_hook(agent: &str, dir: &Path, input: &str, env: &[(&str, &str)]) -> Output {
    let mut c = hookrt(&["hook", "--agent", agent, dir.to_str().unwrap()]);
    c.envs(env.iter().copied());
    with_stdin(c, input)
}

fn ntfy_toml(origin: &str, token: &Path) -> String {
    format!(
        "[hooks.\"ntfy_notifier\"]\ndeadline_ms = 10_000\n[hooks.\"ntfy_notifier\".grants]\nlog = {{}}\nstate = {{}}\n\
         [hooks.\"ntfy_notifier\".grants.secret.secrets.ntfy]\nfile = \"{}\"\norigins = [\"{origin}\"]\n\
         header = \"Authorization\"\nprefix = \"Bearer \"\n\
         [hooks.\"ntfy_notifier\".config]\nurl = \"{origin}/claude-alerts\"\n",
        token.display()
    )
}

#[test]
fn ntfy_notifier_sends_its_token_in_the_header_at_most_every_two_seconds_and_only_locked() {
    let (origin, rx) = receiver(json_echo);
    let secrets = tempfile::tempdir().unwrap();
    let token = token_file(secrets.path(), 0o600);
    let agent = grants_folder("ntfy_notifier", &ntfy_toml(&origin, &token));
    let dir = agent.path().to_str().unwrap();
    let stop = agent_fixture("claude", "Stop");

    // No lock: refused before anything runs (exit 0 on Stop: no gate, reported on stderr).
    let out = agent_hook("claude-code", agent.path(), &stop, &[]);
    assert!(
        text(&out.stderr).contains("hook `ntfy_notifier` holds the `secret` grant, whose table only a lock may vouch for, and there is no lock"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(arrived(&rx), None);

    let out = run(&["lock", dir], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lock = fs::read_to_string(agent.path().join("hookrt.lock")).unwrap();
    assert!(lock.contains("secret") && !lock.contains(TOKEN), "{lock}");

    let out = agent_hook("claude-code", agent.path(), &stop, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = arrived(&rx).expect("the notification reached the stand-in");
    assert!(got.starts_with("POST /claude-alerts HTTP/1.1\r\n"), "{got}");
    assert!(
        got.contains(&format!("authorization: Bearer {TOKEN}\r\n")),
        "{got}"
    );
    assert!(got.contains("title: Claude Code: hookrt\r\n"), "{got}");
    assert!(got.ends_with("\r\n\r\nClaude finished responding"), "{got}");

    // Within 2 s of it: the rate limit in state holds the next one back.
    let edit = agent_fixture("claude", "PostToolUse");
    let out = agent_hook("claude-code", agent.path(), &edit, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(arrived(&rx), None, "rate-limited: {}", text(&out.stderr));
    std::thread::sleep(Duration::from_millis(2_100));
    let out = agent_hook("claude-code", agent.path(), &edit, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = arrived(&rx)
        .unwrap_or_else(|| panic!("after 2 s the next one goes: {}", text(&out.stderr)));
    assert!(
        got.ends_with("\r\n\r\nWrite: /Users/alice/src/hookrt/src/factorial.ts"),
        "{got}"
    );

    // A table sending the token elsewhere is refused until locked again.
    let (thief, thief_rx) = receiver(json_echo);
    fs::write(agent.path().join("hookrt.toml"), ntfy_toml(&thief, &token)).unwrap();
    std::thread::sleep(Duration::from_millis(2_100));
    let out = agent_hook("claude-code", agent.path(), &stop, &[]);
    assert!(
        text(&out.stderr).contains("drifted"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(arrived(&thief_rx), None);
}

#[test]
fn a_secret_file_others_may_read_refuses_the_hook_naming_the_file_and_the_fix() {
    let (origin, rx) = receiver(json_echo);
    let secrets = tempfile::tempdir().unwrap();
    let token = token_file(secrets.path(), 0o644);
    let agent = grants_folder("ntfy_notifier", &ntfy_toml(&origin, &token));
    let out = run(&["check", agent.path().to_str().unwrap()], &[]);
    let said = text(&out.stderr) + &text(&out.stdout);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "secret `ntfy`: {} has mode 0644: its group or others may read or change it; run `chmod 600 {}`",
            token.display(),
            token.display()
        )),
        "{said}"
    );
    assert!(!said.contains(TOKEN), "{said}");
    assert_eq!(arrived(&rx), None);
}

fn pushover_toml(origin: &str) -> String {
    format!(
        "[hooks.\"pushover_at_stop\"]\ndeadline_ms = 10_000\n[hooks.\"pushover_at_stop\".grants]\nlog = {{}}\n\
         [hooks.\"pushover_at_stop\".grants.secret.secrets.pushover]\nenv = \"HOOKRT_TEST_PUSHOVER_TOKEN\"\n\
         origins = [\"{origin}\"]\nquery = \"token\"\n\
         [hooks.\"pushover_at_stop\".config]\nuser = \"uQiRzpo4DXghDmr9QzzfQu27cmVRsG\"\nurl = \"{origin}/1/messages.json\"\n"
    )
}

/// Claude Code's `Stop` as its bridge maps it (`tests/fixtures/claude/Stop.json`).
fn claude_stop_envelope() -> String {
    json!({
        "schema_version": 1, "id": "evt_stop_1", "kind": "turn.stopping",
        "timestamp": "2026-12-06T10:00:00Z",
        "coordinates": {"agent": "claude-code", "session": "00893aaf-19fa-41d2-8238-13269b9b3ca0", "turn": "t1", "step": null, "sequence": 1, "subagent": null},
        "data": {"continued": false, "last_message": "I've completed the refactoring. Here's a summary...",
                 "cwd": "/Users/alice/src/hookrt", "permission_mode": "default",
                 "bridge": {"agent": "claude-code", "event": "Stop", "transport": "command"}}
    })
    .to_string()
}

#[test]
fn pushover_at_stop_puts_the_token_in_the_query_and_it_is_in_nothing_hookrt_writes() {
    let (origin, rx) = receiver(json_echo);
    let agent = grants_folder("pushover_at_stop", &pushover_toml(&origin));
    let dir = agent.path().to_str().unwrap();
    let work = tempfile::tempdir().unwrap();
    let events = work.path().join("events.jsonl");
    fs::write(&events, claude_stop_envelope() + "\n").unwrap();
    let journal = work.path().join("journal.db");
    let env = [("HOOKRT_TEST_PUSHOVER_TOKEN", TOKEN)];
    let out = run(&["lock", dir], &env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let args = [
        "run",
        dir,
        "--events",
        events.to_str().unwrap(),
        "--journal",
        journal.to_str().unwrap(),
        "--logs",
    ];
    let out = run(&args, &env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = arrived(&rx).expect("the notification reached the stand-in");
    assert!(
        got.starts_with(&format!("POST /1/messages.json?token={TOKEN} HTTP/1.1\r\n")),
        "{got}"
    );
    assert!(got.ends_with("\r\n\r\nuser=uQiRzpo4DXghDmr9QzzfQu27cmVRsG&title=Claude+Code%3A+hookrt&message=Claude+Code+Finished+-+All+tasks+completed+in+hookrt&priority=2&retry=30&expire=300"), "{got}");
    // The record names the use (the URL as the hook wrote it) and the answer,
    // whose echo of the token the hook got masked.
    let record = text(&out.stdout);
    assert!(record.contains("[hookrt] secret pushover"), "{record}");
    assert!(record.contains("[redacted:secret:pushover]"), "{record}");
    let audit = run(&["audit", dir], &env);
    let audit = text(&audit.stdout);
    assert!(
        audit.contains(&format!("may send   pushover: from env HOOKRT_TEST_PUSHOVER_TOKEN, to {origin} in query ?token=<secret>; available")),
        "{audit}"
    );
    let trail = run(&["journal", "export", journal.to_str().unwrap()], &env);
    assert!(
        trail.status.success() && !trail.stdout.is_empty(),
        "{}",
        text(&trail.stderr)
    );
    let mut written = vec![record, text(&out.stderr), audit, text(&trail.stdout)];
    written.push(fs::read_to_string(agent.path().join("hookrt.lock")).unwrap());
    for entry in fs::read_dir(work.path()).unwrap() {
        let path = entry.unwrap().path();
        written.push(String::from_utf8_lossy(&fs::read(&path).unwrap()).into_owned());
    }
    for (i, w) in written.iter().enumerate() {
        assert!(!w.contains(TOKEN), "#{i} holds the token: {w}");
    }
}

#[test]
fn pushover_at_stop_without_its_variable_loads_and_skips_saying_where_it_looked() {
    let (origin, rx) = receiver(json_echo);
    let agent = grants_folder("pushover_at_stop", &pushover_toml(&origin));
    let dir = agent.path().to_str().unwrap();
    assert!(run(&["lock", dir], &[]).status.success());
    let work = tempfile::tempdir().unwrap();
    let events = work.path().join("events.jsonl");
    fs::write(&events, claude_stop_envelope() + "\n").unwrap();
    let out = run(
        &["run", dir, "--events", events.to_str().unwrap(), "--logs"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let record = text(&out.stdout);
    assert!(
        record.contains(
            "environment variable HOOKRT_TEST_PUSHOVER_TOKEN is not set in hookrt's process"
        ),
        "{record}"
    );
    assert_eq!(arrived(&rx), None);
}

#[test]
fn slack_dm_opens_the_dm_and_posts_at_a_codex_turn_end_with_the_bot_token() {
    let (origin, rx) = receiver(json_echo);
    let toml = format!(
        "[hooks.\"slack_dm\"]\ndeadline_ms = 10_000\n[hooks.\"slack_dm\".grants]\nlog = {{}}\n\
         [hooks.\"slack_dm\".grants.secret.secrets.slack]\nenv = \"HOOKRT_TEST_SLACK_TOKEN\"\n\
         origins = [\"{origin}\"]\nheader = \"Authorization\"\nprefix = \"Bearer \"\n\
         [hooks.\"slack_dm\".config]\nuser_id = \"U0123456789\"\napi = \"{origin}/api\"\n"
    );
    let agent = grants_folder("slack_dm", &toml);
    let dir = agent.path().to_str().unwrap();
    let env = [("HOOKRT_TEST_SLACK_TOKEN", TOKEN)];
    assert!(run(&["lock", dir], &env).status.success());
    let out = agent_hook("codex", agent.path(), &agent_fixture("codex", "Stop"), &env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains(TOKEN));
    let open = arrived(&rx).expect("conversations.open");
    assert!(
        open.starts_with("POST /api/conversations.open HTTP/1.1\r\n"),
        "{open}"
    );
    assert!(
        open.contains(&format!("authorization: Bearer {TOKEN}\r\n")),
        "{open}"
    );
    assert!(open.ends_with(r#"{"users":"U0123456789"}"#), "{open}");
    let post = arrived(&rx).expect("chat.postMessage");
    assert!(
        post.starts_with("POST /api/chat.postMessage HTTP/1.1\r\n"),
        "{post}"
    );
    assert!(
        post.contains(&format!("authorization: Bearer {TOKEN}\r\n")),
        "{post}"
    );
    assert!(
        post.ends_with(
            r#"{"channel":"D0DMCHANNEL","text":"Codex task completed at repo /home/alice/src/app"}"#
        ),
        "{post}"
    );
}
