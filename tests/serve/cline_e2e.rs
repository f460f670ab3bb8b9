//! The real Cline CLI (the `cline` binary of the pinned
//! `@cline/cli-linux-x64` 3.0.65, installed by `scripts/agents`) running
//! whole `cline --json` tasks offline against a loopback stand-in of the
//! OpenAI chat completions API that answers with one scripted
//! `run_commands` call, with hookrt as the hook of its events through the
//! `#!/bin/sh` scripts `hookrt install --agent cline` writes in
//! `.cline/hooks/`.
//!
//! Three tasks: `rm -rf build` (the policy denies it: Cline cancels, the
//! folder stays, the task ends aborted), `touch made.txt` (the policy
//! abstains: it runs), and `touch made.txt` again with a rewriter that
//! appends ` rewritten.txt` to each command (Cline runs the rewritten
//! one). Every hook Cline ran reached hookrt (its recording holds each).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::agents::agents_dir;
use crate::common::succeeded;
use crate::copilot_e2e::agent;
use crate::hookrt;
use crate::standin::{StandIn, asked_command, asking, within};

/// What the model "says" next: the prompt's command as one `run_commands`
/// call until a tool result is in the conversation, then that it is done.
fn completions(request: &Value) -> (&'static str, String) {
    let command = asked_command(request);
    let offered = request["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["function"]["name"] == "run_commands"));
    let answered = request["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
    let model = request["model"].as_str().unwrap_or("stub-model");
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0,
                "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let mut out = match command.filter(|_| offered && !answered) {
        Some(command) => {
            let arguments = json!({"commands": [command]}).to_string();
            chunk(
                json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
                    "id": "call_hookrt_1", "type": "function",
                    "function": {"name": "run_commands", "arguments": arguments}}]}),
                Value::Null,
            ) + &chunk(json!({}), json!("tool_calls"))
        }
        None => {
            chunk(
                json!({"role": "assistant", "content": "Done."}),
                Value::Null,
            ) + &chunk(json!({}), json!("stop"))
        }
    };
    let usage = json!({"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0,
        "model": model, "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
    out.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    ("text/event-stream", out)
}

/// What one task did: its NDJSON, the project folder, the hooks hookrt heard.
struct Task {
    ndjson: String,
    project: tempfile::TempDir,
    heard: BTreeSet<String>,
}

impl Task {
    /// How the task ended (`completed`, `aborted`).
    fn finish(&self) -> String {
        self.ndjson
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["type"] == "run_result")
            .filter_map(|e| e["finishReason"].as_str().map(str::to_owned))
            .next_back()
            .unwrap_or_default()
    }
}

/// Runs one task asking for `command` in a fresh project holding `build/`,
/// hookrt installed for `agent` by `hookrt install --agent cline`.
fn task(agent: &Path, command: &str) -> Task {
    let cline = agents_dir().join("node_modules/@cline/cli-linux-x64/bin/cline");
    assert!(cline.is_file(), "no cline binary at {}", cline.display());
    let model = StandIn::start("/v1/chat/completions", completions);
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let p = project.path();
    std::fs::create_dir(p.join("build")).unwrap();
    let cline_dir = home.path().join(".cline");
    let settings = cline_dir.join("data/settings");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::write(
        settings.join("global-settings.json"),
        r#"{"telemetryOptOut": true}"#,
    )
    .unwrap();
    let providers = json!({"version": 1, "lastUsedProvider": "openai-compatible",
        "providers": {"openai-compatible": {"settings": {"provider": "openai-compatible",
            "apiKey": "sk-stub", "model": "stub-model", "baseUrl": format!("{}/v1", model.url)},
            "updatedAt": "2026-01-01T00:00:00.000Z", "tokenSource": "manual"}}});
    std::fs::write(settings.join("providers.json"), providers.to_string()).unwrap();
    let record = home.path().join("record.jsonl");
    let dir = agent.to_str().unwrap();
    succeeded(
        hookrt(&["install", "--agent", "cline", dir, "--all-events"])
            .args(["--record", record.to_str().unwrap()])
            .current_dir(p),
    );
    let prompt = asking(command);
    let mut run = Command::new(&cline);
    run.args(["--json", "-c", p.to_str().unwrap(), &prompt])
        .current_dir(p)
        .env_clear()
        // What the hook scripts' `hookrt hook` needs: the tests' build cache.
        .envs(hookrt(&[]).get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("CLINE_DIR", &cline_dir)
        .env("CLINE_SESSION_BACKEND_MODE", "local")
        .env("CLINE_NO_AUTO_UPDATE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = within(run.spawn().expect("cline runs"), Duration::from_secs(120));
    let ndjson = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "cline failed: {}\n{ndjson}",
        String::from_utf8_lossy(&out.stderr)
    );
    let heard = std::fs::read_to_string(&record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|r| r["event"].as_str().map(str::to_owned))
        .collect();
    Task {
        ndjson,
        project,
        heard,
    }
}

#[test]
fn the_real_cline_is_gated_by_hookrt() {
    let started = Instant::now();
    let plain = agent(false);
    let rewriting = agent(true);
    // A deny cancels the call, and Cline ends the whole task.
    let t = task(plain.path(), "rm -rf build");
    assert!(
        t.project.path().join("build").is_dir(),
        "rm -rf build was denied\n{}",
        t.ndjson
    );
    assert_eq!(t.finish(), "aborted", "{}", t.ndjson);
    // An abstain runs.
    let t = task(plain.path(), "touch made.txt");
    assert!(t.project.path().join("made.txt").exists(), "{}", t.ndjson);
    assert!(!t.project.path().join("rewritten.txt").exists());
    assert_eq!(t.finish(), "completed", "{}", t.ndjson);
    for event in ["TaskStart", "PreToolUse", "PostToolUse", "TaskComplete"] {
        assert!(
            t.heard.contains(event),
            "{event} reached hookrt: {:?}",
            t.heard
        );
    }
    // A rewrite runs rewritten.
    let t = task(rewriting.path(), "touch made.txt");
    assert!(
        t.project.path().join("made.txt").exists()
            && t.project.path().join("rewritten.txt").exists(),
        "the rewritten command ran\n{}",
        t.ndjson
    );
    eprintln!("cline e2e took {:?}", started.elapsed());
}
