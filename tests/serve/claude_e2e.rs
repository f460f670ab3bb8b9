//! The real Claude Code (the `claude` binary of the pinned
//! `@anthropic-ai/claude-agent-sdk-linux-x64` 0.3.337, installed by
//! `scripts/claude-code`) running whole `claude -p` sessions offline against
//! a loopback stand-in of the Messages API that answers with scripted tool
//! calls, with hookrt as the hook of every event (`hookrt claude install`),
//! over both transports: a process per event, and `hookrt serve`.
//!
//! The session: the main agent asks for `rm -rf build` (the policy denies
//! it: the folder stays, and the model is told why), then for `touch
//! main.txt` (every primary hook abstains: Claude Code's own rules decide,
//! and in `-p` with no rule for it that is no), then starts a
//! `general-purpose` subagent that asks for `touch sub.txt` (its own hooks,
//! `subagents/general-purpose/hooks/`, allow it: the file is made). Every
//! hook Claude Code ran must have succeeded.

use std::process::Command;

use serde_json::{Value, json};

use crate::claude_code::claude_code_dir;
use crate::common::{TempAgent, succeeded};
use crate::standin::{StandIn, within};
use crate::{Server, TOKEN, hookrt};

/// Marks the subagent's prompt, so the stand-in tells its requests apart.
const SUB: &str = "SUBAGENT: make sub.txt";

/// Starts the prompt of the session that tries the answers beyond allow /
/// deny: its model asks for one `touch main.txt`, then says it is done.
const ANSWERS: &str = "ANSWERS: make main.txt";
/// What the gatekeeper adds as context to every prompt.
const CONTEXT_MARK: &str = "HOOKRT-CONTEXT-7f3a: the build folder is generated";
/// What the gatekeeper tells the model each time it keeps a turn going.
const KEEP_GOING: &str = "HOOKRT-KEEP-GOING: check the file once more";
/// A word the gatekeeper blocks prompts for.
const FORBIDDEN: &str = "FORBIDDEN-WORD";

/// The Messages API's answer to `request` (`POST /v1/messages`): [`script`]
/// decides the content, streamed when asked.
fn messages(request: &Value) -> (&'static str, String) {
    reply(request, script(request))
}

/// The Messages API's answer to `request` with content `blocks`, streamed
/// when asked (shared with `ported_e2e.rs`).
pub(crate) fn reply(request: &Value, blocks: Vec<Value>) -> (&'static str, String) {
    let stop = if blocks.iter().any(|b| b["type"] == "tool_use") {
        "tool_use"
    } else {
        "end_turn"
    };
    if request["stream"] == true {
        ("text/event-stream", events(&blocks, stop))
    } else {
        let message = json!({"id": "msg_standin", "type": "message", "role": "assistant",
            "model": "claude-standin", "content": blocks, "stop_reason": stop,
            "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 5}});
        ("application/json", message.to_string())
    }
}

/// What the model "says" next: decided by whose conversation it is (the
/// subagent's carries [`SUB`]) and which scripted calls it already holds,
/// so a repeated or reordered request gets the same answer.
fn script(request: &Value) -> Vec<Value> {
    if request["tools"].as_array().is_none_or(|t| t.is_empty()) {
        return vec![json!({"type": "text", "text": "ok"})];
    }
    let conversation = request["messages"].to_string();
    let bash = |id: &str, command: &str| {
        json!({"type": "tool_use", "id": id, "name": "Bash",
               "input": {"command": command, "description": "as scripted"}})
    };
    let agent = json!({"type": "tool_use", "id": "toolu_main_agent", "name": "Agent",
        "input": {"description": "make a file", "prompt": SUB, "subagent_type": "general-purpose"}});
    let steps = if conversation.contains(ANSWERS) {
        vec![(
            "toolu_answers_touch",
            bash("toolu_answers_touch", "touch main.txt"),
        )]
    } else if conversation.contains(SUB) && !conversation.contains("toolu_main_agent") {
        vec![("toolu_sub_touch", bash("toolu_sub_touch", "touch sub.txt"))]
    } else {
        vec![
            ("toolu_main_rm", bash("toolu_main_rm", "rm -rf build")),
            (
                "toolu_main_touch",
                bash("toolu_main_touch", "touch main.txt"),
            ),
            ("toolu_main_agent", agent),
        ]
    };
    match steps.into_iter().find(|(id, _)| !conversation.contains(id)) {
        Some((_, call)) => vec![call],
        None => vec![json!({"type": "text", "text": "Done."})],
    }
}

/// The Messages API's stream of `blocks`.
fn events(blocks: &[Value], stop: &str) -> String {
    let mut out = String::new();
    let mut event = |kind: &str, data: Value| {
        out.push_str(&format!("event: {kind}\ndata: {data}\n\n"));
    };
    event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_standin", "type": "message",
            "role": "assistant", "model": "claude-standin", "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    );
    for (i, b) in blocks.iter().enumerate() {
        let (start, delta) = if b["type"] == "text" {
            (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": b["text"]}),
            )
        } else {
            (
                json!({"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}),
                json!({"type": "input_json_delta", "partial_json": b["input"].to_string()}),
            )
        };
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": i, "content_block": start}),
        );
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": i, "delta": delta}),
        );
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": i}),
        );
    }
    event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
    );
    event("message_stop", json!({"type": "message_stop"}));
    out
}

/// The agent folder: the example policy and audit as the primary hooks, and
/// a subagent whose hook allows every call.
fn agent() -> TempAgent {
    TempAgent::new()
        .hook("agent/hooks/policy", "policy")
        .hook("agent/hooks/audit.rs", "audit.rs")
        .file(
            "subagents/general-purpose/hooks/allow_all.rs",
            &std::fs::read_to_string(crate::common::example("testing/hooks/allow_all.rs")).unwrap(),
        )
}

/// What one `claude -p` session did: its stream-json lines, the requests
/// the model got, and the project folder.
pub(crate) struct Session {
    pub(crate) lines: Vec<Value>,
    pub(crate) requests: Vec<Value>,
    pub(crate) project: tempfile::TempDir,
}

/// Runs a whole session in a fresh project whose settings `install` wrote.
fn session(install: &[&str], env: &[(&str, &str)]) -> Session {
    session_of("clean up, then make the files", install, env)
}

/// [`session`] with the user's `prompt`.
fn session_of(prompt: &str, install: &[&str], env: &[(&str, &str)]) -> Session {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("build")).unwrap();
    claude_session(prompt, messages, project, install, &["Agent"], env)
}

/// A whole `claude -p` session on `prompt` in `project`, the model
/// answering by `model`, with the settings `install` wrote and `allowed`
/// tools (`--allowedTools`).
pub(crate) fn claude_session(
    prompt: &str,
    model: crate::standin::Answer,
    project: tempfile::TempDir,
    install: &[&str],
    allowed: &[&str],
    env: &[(&str, &str)],
) -> Session {
    let settings = project.path().join(".claude/settings.json");
    let mut args = vec!["claude", "install"];
    args.extend(install);
    args.extend(["--settings", settings.to_str().unwrap()]);
    // Installed as the agent will run the hooks (install loads the folder
    // to learn which events its hooks take: an exec program on `PATH`).
    succeeded(hookrt(&args).envs(env.iter().copied()));
    run_claude(prompt, model, project, &[], allowed, env)
}

/// [`claude_session`] with no settings written: the hooks are the plugin's
/// at `plugin` (`--plugin-dir`).
pub(crate) fn claude_plugin_session(
    prompt: &str,
    model: crate::standin::Answer,
    project: tempfile::TempDir,
    plugin: &std::path::Path,
    allowed: &[&str],
) -> Session {
    let dir = plugin.to_str().unwrap();
    run_claude(prompt, model, project, &["--plugin-dir", dir], allowed, &[])
}

/// The pinned `claude`, with the environment of hookrt's tests, a `PATH`,
/// no telemetry, and `env` (`HOME` among them).
pub(crate) fn claude_command(env: &[(&str, &str)]) -> Command {
    let claude =
        claude_code_dir().join("node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude");
    let mut command = Command::new(claude);
    command
        .env_clear()
        .envs(hookrt(&[]).get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .envs(env.iter().copied());
    command
}

/// `claude -p prompt` with `extra` arguments in `project`, offline against
/// the stand-in answering by `model`.
pub(crate) fn run_claude(
    prompt: &str,
    model: crate::standin::Answer,
    project: tempfile::TempDir,
    extra: &[&str],
    allowed: &[&str],
    env: &[(&str, &str)],
) -> Session {
    let model = StandIn::start("/v1/messages", model);
    let home = tempfile::tempdir().unwrap();
    let home_env = [("HOME", home.path().to_str().unwrap())];
    let child = claude_command(&home_env)
        .args([
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-hook-events",
        ])
        .args(extra)
        .arg("--allowedTools")
        .args(allowed)
        .current_dir(project.path())
        .env("ANTHROPIC_BASE_URL", &model.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-standin-0000")
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("claude runs");
    let out = within(child, std::time::Duration::from_secs(180));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "claude -p failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let requests = model.requests.lock().unwrap().clone();
    Session {
        lines,
        requests,
        project,
    }
}

/// What the session must show, whichever way hookrt answered.
fn check(s: &Session, transport: &str) {
    let p = s.project.path();
    assert!(
        p.join("build").is_dir(),
        "{transport}: rm -rf build was denied"
    );
    assert!(
        !p.join("main.txt").exists(),
        "{transport}: every primary hook abstained and no rule allows it"
    );
    assert!(
        p.join("sub.txt").exists(),
        "{transport}: the subagent's own hook allowed its call"
    );
    // The model was told why the delete was denied.
    let told = s.requests.iter().any(|r| {
        r["messages"]
            .to_string()
            .contains("recursive forced delete (rm -rf) is not allowed by the policy hook")
    });
    assert!(told, "{transport}: the deny's reason reached the model");
    // Every hook Claude Code ran succeeded, on every event it fired.
    let responses: Vec<&Value> = s
        .lines
        .iter()
        .filter(|l| l["type"] == "system" && l["subtype"] == "hook_response")
        .collect();
    let failed: Vec<String> = responses
        .iter()
        .filter(|r| r["outcome"] != "success")
        .map(|r| r.to_string())
        .collect();
    assert!(failed.is_empty(), "{transport}: hook errors: {failed:?}");
    let fired: std::collections::BTreeSet<&str> = responses
        .iter()
        .filter_map(|r| r["hook_event"].as_str())
        .collect();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolBatch",
        "SubagentStart",
        "SubagentStop",
        "Stop",
    ] {
        assert!(
            fired.contains(event),
            "{transport}: {event} fired: {fired:?}"
        );
    }
    eprintln!("{transport}: events fired, all answered: {fired:?}");
}

#[test]
fn the_real_claude_code_is_gated_by_hookrt_over_both_transports() {
    let agent = agent();
    let dir = agent.path().to_str().unwrap();
    succeeded(&mut hookrt(&["build", dir]));

    let recordings = tempfile::tempdir().unwrap();
    let by_command_rec = recordings.path().join("command.jsonl");
    let rec = by_command_rec.to_str().unwrap();
    let by_command = session(&[dir, "--record", rec], &[]);
    check(&by_command, "command");
    replayed(agent.path(), &by_command_rec, "command");

    let by_http_rec = recordings.path().join("http.jsonl");
    let rec = by_http_rec.to_str().unwrap();
    let server = Server::start(
        agent.path(),
        &["--decide-timeout-ms", "8000", "--record", rec],
    );
    let url = format!("http://{}", server.addr);
    let by_http = session(
        &[dir, "--http", &url, "--record", rec],
        &[("HOOKRT_TOKEN", TOKEN)],
    );
    check(&by_http, "http");
    replayed(agent.path(), &by_http_rec, "http");

    // Through the resident service, as `install` writes it by default (the
    // thin client `hookrt-hook`; this file's other sessions set
    // HOOKRT_NO_SERVICE): the first event starts it, and the journal it
    // keeps holds the session's trail.
    let user = tempfile::tempdir().unwrap();
    let run = user.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let state = user.path().join("state");
    let env = [
        ("XDG_RUNTIME_DIR", run.to_str().unwrap()),
        ("HOOKRT_STATE_DIR", state.to_str().unwrap()),
        ("HOOKRT_NO_SERVICE", "0"),
    ];
    let by_service = session(&[dir], &env);
    check(&by_service, "service");
    // The service of the session's project, reached as its hooks reached it.
    service_kept_the_deny(
        |args| {
            hookrt(args)
                .envs(env)
                .current_dir(by_service.project.path())
                .output()
                .unwrap()
        },
        dir,
        "policy",
    );
}

/// The resident service a session's hooks went through (`as_hooks` runs
/// `hookrt ARGS` as they ran: their project, their user's folders): it
/// runs, its journal verifies and shows the deny of the delete by hook
/// `by` in `audit coverage` (exit 1 names calls every hook abstained on);
/// then it is stopped.
pub(crate) fn service_kept_the_deny(
    as_hooks: impl Fn(&[&str]) -> std::process::Output,
    dir: &str,
    by: &str,
) {
    let said = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).into_owned();
    let status = as_hooks(&["service", "status", dir]);
    assert!(status.status.success(), "the session's service runs");
    let journal = said(&status)
        .lines()
        .find_map(|l| l.strip_prefix("journal"))
        .unwrap()
        .trim()
        .to_owned();
    let verified = as_hooks(&["journal", "verify", &journal]);
    assert!(
        verified.status.success() && said(&verified).contains("the trail holds"),
        "{}{}",
        said(&verified),
        String::from_utf8_lossy(&verified.stderr)
    );
    let coverage = as_hooks(&["audit", "coverage", &journal, "--json"]);
    assert!(
        matches!(coverage.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&coverage.stderr)
    );
    let coverage: Value = serde_json::from_slice(&coverage.stdout).unwrap();
    let denied = coverage["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["calls"].as_array().unwrap().iter())
        .any(|c| c["verdict"] == "deny" && c["decided_by"] == by);
    assert!(denied, "the journal holds the denied delete: {coverage}");
    as_hooks(&["service", "stop", dir]);
}

/// The session Claude Code sent, as recorded (`--record`), turned into a
/// `hookrt test` case: every event it fired is there, the replay decides
/// the delete as the session did, and it gives the same expectation twice.
fn replayed(agent: &std::path::Path, recording: &std::path::Path, transport: &str) {
    let text = std::fs::read_to_string(recording).unwrap();
    let events: std::collections::BTreeSet<String> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .inspect(|r| {
            let event = r["input"]["hook_event_name"].as_str().unwrap_or_default();
            if event == "PreToolUse" {
                assert_eq!(r["transport"], transport, "{r}");
            }
        })
        .filter_map(|r| r["input"]["hook_event_name"].as_str().map(str::to_owned))
        .collect();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "SubagentStop",
        "Stop",
    ] {
        assert!(
            events.contains(event),
            "{transport}: {event} recorded: {events:?}"
        );
    }
    let expect = recording.with_extension("expect.jsonl");
    let (dir, rec, exp) = (
        agent.to_str().unwrap(),
        recording.to_str().unwrap(),
        expect.to_str().unwrap(),
    );
    succeeded(&mut hookrt(&[
        "test", dir, "--events", rec, "--expect", exp, "--update",
    ]));
    let first = std::fs::read_to_string(&expect).unwrap();
    let out = succeeded(&mut hookrt(&[
        "test", dir, "--events", rec, "--expect", exp,
    ]));
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(out.starts_with("ok: "), "{transport}: {out}");
    assert_eq!(std::fs::read_to_string(&expect).unwrap(), first);
    let denied = first.lines().any(|l| {
        let r: Value = serde_json::from_str(l).unwrap();
        r["hook"] == "policy" && r["answer"][0]["answer"] == "deny"
    });
    assert!(
        denied,
        "{transport}: the replay denies rm -rf as the session did:\n{first}"
    );
}

/// The agent folder of the answers beyond allow / deny: the example policy;
/// a rewriter that appends ` rewritten.txt` to every shell command and
/// allows it; a gatekeeper that adds context to every prompt, blocks
/// prompts holding [`FORBIDDEN`] and keeps every turn going; the loop
/// governor at 2 continues in a row.
fn answers_agent() -> TempAgent {
    TempAgent::new()
        .hook("agent/hooks/policy", "policy")
        .hook("testing/hooks/rewriter.rs", "rewriter.rs")
        .hook("testing/hooks/gatekeeper.rs", "gatekeeper.rs")
        .config(&format!(
            "[governor]\nmax_continues = 2\n\
             [hooks.\"rewriter\"]\nconfig = {{ suffix = \" rewritten.txt\", allow = true }}\n\
             [hooks.\"gatekeeper\"]\nconfig = {{ context = \"{CONTEXT_MARK}\", block_word = \"{FORBIDDEN}\", keep_going = \"{KEEP_GOING}\" }}\n"
        ))
}

/// The requests that asked the model for something (Claude Code also makes
/// tool-less requests of its own, e.g. for a title).
fn model_turns(s: &Session) -> Vec<&Value> {
    s.requests
        .iter()
        .filter(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .collect()
}

/// What the answers session must show, whichever way hookrt answered.
fn check_answers(s: &Session, blocked: &Session, transport: &str) {
    let p = s.project.path();
    // The rewrite: Claude Code ran `touch main.txt rewritten.txt`.
    assert!(
        p.join("rewritten.txt").exists() && p.join("main.txt").exists(),
        "{transport}: the rewritten command ran"
    );
    let turns = model_turns(s);
    // Added context: in the first request already (UserPromptSubmit).
    assert!(
        turns[0]["messages"].to_string().contains(CONTEXT_MARK),
        "{transport}: the prompt's context reached the model: {}",
        turns[0]["messages"]
    );
    // The Stop continue, capped by the governor: the model was told to keep
    // going exactly max_continues (2) times, then the turn ended (Claude
    // Code's own cap is 8).
    let last = turns.last().unwrap()["messages"].to_string();
    assert_eq!(
        last.matches(&format!("Stop hook feedback:\\n{KEEP_GOING}"))
            .count(),
        2,
        "{transport}: two continues, then capped: {last}"
    );
    let failed: Vec<String> = s
        .lines
        .iter()
        .filter(|l| {
            l["type"] == "system" && l["subtype"] == "hook_response" && l["outcome"] != "success"
        })
        .map(|r| r.to_string())
        .collect();
    assert!(failed.is_empty(), "{transport}: hook errors: {failed:?}");
    // A blocked prompt makes no model request.
    assert!(
        model_turns(blocked).is_empty(),
        "{transport}: the blocked prompt reached the model: {:?}",
        blocked.requests
    );
}

#[test]
fn the_real_claude_code_takes_hookrts_rewrites_context_blocks_and_capped_continues() {
    let agent = answers_agent();
    let dir = agent.path().to_str().unwrap();
    succeeded(&mut hookrt(&["build", dir]));

    let by_command = session_of(ANSWERS, &[dir], &[]);
    let blocked = session_of(&format!("{FORBIDDEN}: do nothing"), &[dir], &[]);
    check_answers(&by_command, &blocked, "command");

    let server = Server::start(agent.path(), &["--decide-timeout-ms", "8000"]);
    let url = format!("http://{}", server.addr);
    let env = [("HOOKRT_TOKEN", TOKEN)];
    let by_http = session_of(ANSWERS, &[dir, "--http", &url], &env);
    let blocked = session_of(
        &format!("{FORBIDDEN}: do nothing"),
        &[dir, "--http", &url],
        &env,
    );
    check_answers(&by_http, &blocked, "http");
}
