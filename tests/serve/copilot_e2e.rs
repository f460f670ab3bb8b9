//! The real GitHub Copilot CLI (the `copilot` binary of the pinned
//! `@github/copilot` 1.0.102, installed by `scripts/agents`) running whole
//! `copilot -p` sessions offline against a loopback stand-in of the OpenAI
//! chat completions API that answers with scripted tool calls, with hookrt
//! as the hook of every event the repository's `.github/hooks/` names, over
//! both transports: a `command` hook (`hookrt hook --agent copilot --event
//! NAME`) and an `http` one (`hookrt serve`'s `/v1/copilot?event=NAME`).
//!
//! The session: the model asks for `rm -rf build` (the policy denies it:
//! the folder stays, and the model is told why), then for `touch made.txt`
//! (the policy abstains: it runs), then says it is done. A second session
//! adds a rewriter that appends ` rewritten.txt` to every shell command and
//! allows it: Copilot runs the rewritten command. Every hook Copilot ran
//! must have succeeded (its session's `hook.end` events).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::agents::agents_dir;
use crate::codex_e2e::quoted;
use crate::common::{TempAgent, succeeded};
use crate::standin::{StandIn, within};
use crate::{Server, TOKEN, hookrt};

/// The scripted calls, in order: (call id, command).
const CALLS: [(&str, &str); 2] = [
    ("call_hookrt_rm", "rm -rf build"),
    ("call_hookrt_touch", "touch made.txt"),
];

/// The events hookrt is the hook of.
const EVENTS: [&str; 6] = [
    "sessionStart",
    "userPromptSubmitted",
    "preToolUse",
    "postToolUse",
    "agentStop",
    "sessionEnd",
];

/// What the model "says" next, as chat completions (streamed when asked):
/// the first scripted `bash` call the conversation does not hold yet, then
/// a final message (so a repeated request gets the same answer).
pub(crate) fn completions(request: &Value) -> (&'static str, String) {
    let conversation = request["messages"].to_string();
    let offered = request["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["function"]["name"] == "bash"));
    let next = CALLS
        .iter()
        .find(|(id, _)| !conversation.contains(id))
        .filter(|_| offered);
    let (message, finish) = match next {
        Some((id, command)) => (
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": id,
                "type": "function", "function": {"name": "bash",
                "arguments": json!({"command": command, "description": "as scripted"}).to_string()}}]}),
            "tool_calls",
        ),
        None => (json!({"role": "assistant", "content": "Done."}), "stop"),
    };
    let model = request["model"].as_str().unwrap_or("gpt-4o");
    let usage = json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15});
    if request["stream"] != true {
        let mut message = message;
        if let Some(calls) = message["tool_calls"].as_array_mut() {
            for c in calls {
                c.as_object_mut().unwrap().remove("index");
            }
        }
        let body = json!({"id": "chatcmpl-standin", "object": "chat.completion", "created": 0,
            "model": model, "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage});
        return ("application/json", body.to_string());
    }
    let chunk = |choice: Value, usage: Option<&Value>| {
        let mut c = json!({"id": "chatcmpl-standin", "object": "chat.completion.chunk",
            "created": 0, "model": model, "choices": [choice]});
        if let Some(u) = usage {
            c["usage"] = u.clone();
        }
        format!("data: {c}\n\n")
    };
    let mut out = chunk(
        json!({"index": 0, "delta": message, "finish_reason": null}),
        None,
    );
    out.push_str(&chunk(
        json!({"index": 0, "delta": {}, "finish_reason": finish}),
        Some(&usage),
    ));
    out.push_str("data: [DONE]\n\n");
    ("text/event-stream", out)
}

/// How hookrt hears the events.
enum Transport<'a> {
    /// `hookrt hook --agent copilot --event NAME DIR`.
    Command(&'a Path),
    /// `hookrt serve`'s `POST /v1/copilot?event=NAME`.
    Http(&'a Server),
}

impl Transport<'_> {
    fn name(&self) -> &'static str {
        match self {
            Transport::Command(_) => "command",
            Transport::Http(_) => "http",
        }
    }

    /// The hook entry of `event`.
    fn entry(&self, event: &str) -> Value {
        match self {
            Transport::Command(agent) => json!({"type": "command",
                "bash": format!("{} hook --agent copilot --event {event} {}",
                    quoted(&crate::common::hookrt_bin()), quoted(agent)),
                "timeoutSec": 30}),
            Transport::Http(server) => json!({"type": "http",
                "url": format!("http://{}/v1/copilot?event={event}", server.addr),
                "headers": {"Authorization": format!("Bearer {TOKEN}")},
                "timeoutSec": 15}),
        }
    }
}

/// What one `copilot -p` session did: its stdout, the requests the model
/// got, the hook events of its session log, and the project folder.
struct Session {
    stdout: String,
    requests: Vec<Value>,
    hooks: Vec<Value>,
    project: tempfile::TempDir,
}

/// Runs a whole session in a fresh project holding `build/` whose
/// `.github/hooks/hookrt.json` sends every event to hookrt over `transport`.
fn session(transport: &Transport) -> Session {
    let agents = agents_dir();
    let copilot = agents.join("node_modules/@github/copilot-linux-x64/copilot");
    assert!(
        copilot.is_file(),
        "no copilot binary at {}",
        copilot.display()
    );
    let model = StandIn::start("/v1/chat/completions", completions);
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("build")).unwrap();
    std::fs::create_dir_all(project.path().join(".github/hooks")).unwrap();
    let hooks: serde_json::Map<String, Value> = EVENTS
        .iter()
        .map(|e| (e.to_string(), json!([transport.entry(e)])))
        .collect();
    std::fs::write(
        project.path().join(".github/hooks/hookrt.json"),
        json!({"version": 1, "hooks": hooks}).to_string(),
    )
    .unwrap();
    let copilot_home = home.path().join(".copilot");
    let env = hookrt(&[]);
    let child = Command::new(copilot)
        .args([
            "-p",
            "clean up, then make the file",
            "--allow-all-tools",
            "--no-auto-update",
        ])
        .current_dir(project.path())
        .env_clear()
        .envs(env.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        // The runtime scripts/agents unpacked once (~235 MB).
        .env("XDG_CACHE_HOME", agents.join("copilot-home/.cache"))
        .env("COPILOT_HOME", &copilot_home)
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", model.url))
        .env("COPILOT_PROVIDER_TYPE", "openai")
        .env("COPILOT_PROVIDER_API_KEY", "dummy")
        .env("COPILOT_MODEL", "gpt-4o")
        .env("COPILOT_ALLOW_ALL", "true")
        .env("COPILOT_AUTO_UPDATE", "false")
        .env("GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS", "true")
        // An `http` hook on a gate must use https:// but on loopback.
        .env("COPILOT_HOOK_ALLOW_LOCALHOST", "1")
        .env("COPILOT_HOOK_ALLOW_HTTP_AUTH_HOOKS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("copilot runs");
    let out = within(child, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "copilot -p failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Its session log: `hook.start` and `hook.end` per hook run.
    let mut hooks = Vec::new();
    for dir in std::fs::read_dir(copilot_home.join("session-state")).unwrap() {
        let log = dir.unwrap().path().join("events.jsonl");
        let Ok(text) = std::fs::read_to_string(&log) else {
            continue;
        };
        hooks.extend(
            text.lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|e| e["type"].as_str().is_some_and(|t| t.starts_with("hook."))),
        );
    }
    Session {
        stdout,
        requests: model.requests(),
        hooks,
        project,
    }
}

/// The tool message the model got for call `id`.
fn output_of(s: &Session, id: &str) -> String {
    crate::standin::tool_output(&s.requests, id)
        .unwrap_or_else(|| panic!("no output of {id} reached the model: {:?}", s.requests))
}

/// What every session must show: the delete denied and said why, the touch
/// run, every hook fired and succeeded.
fn check(s: &Session, what: &str) {
    let p = s.project.path();
    assert!(
        p.join("build").is_dir(),
        "{what}: rm -rf build was denied\n{}",
        s.stdout
    );
    assert!(
        p.join("made.txt").exists(),
        "{what}: the policy abstained on touch made.txt: it ran\n{}",
        s.stdout
    );
    let denied = output_of(s, "call_hookrt_rm");
    assert!(
        denied.contains("Denied by preToolUse hook") && denied.contains("recursive forced delete"),
        "{what}: the deny's reason reached the model: {denied}"
    );
    let ends: Vec<&Value> = s
        .hooks
        .iter()
        .filter(|e| e["type"] == "hook.end")
        .map(|e| &e["data"])
        .collect();
    let failed: Vec<&&Value> = ends.iter().filter(|e| e["success"] != true).collect();
    assert!(failed.is_empty(), "{what}: hook failures: {failed:?}");
    let fired: BTreeSet<&str> = ends.iter().filter_map(|e| e["hookType"].as_str()).collect();
    for event in EVENTS {
        assert!(fired.contains(event), "{what}: {event} fired: {fired:?}");
    }
    eprintln!("{what}: hooks ran and succeeded: {fired:?}");
}

/// The example policy and audit; with `rewriter`, a rewriter that appends
/// ` rewritten.txt` to every shell command and allows it.
pub(crate) fn agent(rewriter: bool) -> TempAgent {
    let agent = TempAgent::new()
        .hook("agent/hooks/policy", "policy")
        .hook("agent/hooks/audit.rs", "audit.rs");
    let agent =
        if rewriter {
            agent.hook("testing/hooks/rewriter.rs", "rewriter.rs").config(
            "[hooks.\"rewriter\"]\nconfig = { suffix = \" rewritten.txt\", allow = true }\n",
        )
        } else {
            agent
        };
    succeeded(&mut hookrt(&["build", agent.path().to_str().unwrap()]));
    agent
}

#[test]
fn the_real_copilot_cli_is_gated_by_hookrt() {
    let started = Instant::now();
    let plain = agent(false);
    let rewriting = agent(true);
    for (agent, rewrites) in [(&plain, false), (&rewriting, true)] {
        let server = Server::start(agent.path(), &["--decide-timeout-ms", "8000"]);
        for transport in [Transport::Command(agent.path()), Transport::Http(&server)] {
            let what = format!(
                "{}{}",
                transport.name(),
                if rewrites { ", rewriter" } else { "" }
            );
            let s = session(&transport);
            check(&s, &what);
            // The rewrite: Copilot ran `touch made.txt rewritten.txt`.
            assert_eq!(
                s.project.path().join("rewritten.txt").exists(),
                rewrites,
                "{what}: the rewritten command ran only with the rewriter"
            );
        }
    }
    eprintln!("copilot e2e took {:?}", started.elapsed());
}
