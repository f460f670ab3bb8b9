//! The real OpenHands CLI (PyPI `openhands` 1.16.0, every package it pulls
//! in pinned, in a Python 3.12 venv `scripts/agents-openhands` installs)
//! running `--headless` tasks offline against a loopback stand-in of the
//! OpenAI chat completions API that answers with one scripted `terminal`
//! call, then `finish`, with hookrt as the hook of its six events through
//! the `.openhands/hooks.json` `hookrt install --agent openhands` writes.
//!
//! Two tasks: `rm -rf build` (the policy denies it: the folder stays and
//! the model reads OpenHands' "Action rejected" with the policy's reason)
//! and `touch made.txt` (the policy abstains: it runs). Every hook reached
//! hookrt (its recording holds each event).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::succeeded;
use crate::copilot_e2e::agent;
use crate::hookrt;
use crate::standin::{StandIn, asked_command, asking, tool_output, within};

/// The venv `scripts/agents-openhands` installs.
fn openhands_dir() -> PathBuf {
    crate::installed_by("agents-openhands", "the pinned OpenHands CLI")
}

/// What the model "says" next (not streamed: OpenHands asks for a whole
/// answer): the prompt's command as one `terminal` call until a tool
/// result is in the conversation, then `finish`.
fn completions(request: &Value) -> (&'static str, String) {
    let command = asked_command(request);
    let offered = |name: &str| {
        request["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["function"]["name"] == name))
    };
    let answered = request["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
    let (name, arguments) = match command.filter(|_| offered("terminal") && !answered) {
        Some(command) => (
            "terminal",
            json!({"command": command, "security_risk": "LOW"}),
        ),
        None => ("finish", json!({"message": "Done."})),
    };
    let id = format!("call_hookrt_{name}");
    let body = json!({"id": "chatcmpl-standin", "object": "chat.completion", "created": 0,
        "model": request["model"], "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": [{"id": id,
                "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
    ("application/json", body.to_string())
}

/// What one task did: the requests the model got, the project, the
/// events hookrt heard.
struct Task {
    out: String,
    requests: Vec<Value>,
    project: tempfile::TempDir,
    heard: BTreeSet<String>,
}

/// Runs one headless task asking for `command` in a fresh project holding
/// `build/`, hookrt installed for `agent` by `hookrt install --agent
/// openhands`.
fn task(agent: &Path, command: &str) -> Task {
    let openhands = openhands_dir().join("venv/bin/openhands");
    assert!(
        openhands.is_file(),
        "no openhands at {}",
        openhands.display()
    );
    let model = StandIn::start("/v1/chat/completions", completions);
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let p = project.path();
    std::fs::create_dir(p.join("build")).unwrap();
    let record = home.path().join("record.jsonl");
    let dir = agent.to_str().unwrap();
    succeeded(
        hookrt(&["install", "--agent", "openhands", dir, "--all-events"])
            .args(["--record", record.to_str().unwrap()])
            .current_dir(p),
    );
    let prompt = asking(command);
    let mut run = Command::new(&openhands);
    run.args([
        "--headless",
        "--json",
        "--override-with-envs",
        "-t",
        &prompt,
    ])
    .current_dir(p)
    .env_clear()
    // What the hooks' `hookrt hook` needs: the tests' build cache.
    .envs(hookrt(&[]).get_envs().filter_map(|(k, v)| Some((k, v?))))
    .env("PATH", std::env::var_os("PATH").unwrap_or_default())
    .env("HOME", home.path())
    .env("LLM_MODEL", "openai/stub")
    .env("LLM_BASE_URL", format!("{}/v1", model.url))
    .env("LLM_API_KEY", "sk-stub")
    .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    .env("OPENHANDS_SUPPRESS_BANNER", "1")
    // Its public skills are a `git clone` from GitHub on every run:
    // refused at once, here, whatever the network.
    .env("GIT_CONFIG_COUNT", "1")
    .env("GIT_CONFIG_KEY_0", "url.file:///nonexistent/.insteadOf")
    .env("GIT_CONFIG_VALUE_0", "https://github.com/")
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let ran = within(
        run.spawn().expect("openhands runs"),
        Duration::from_secs(180),
    );
    // Its exit code is 0 even when it crashed: the requests and hooks say.
    let out = format!(
        "{}\n{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    let heard = std::fs::read_to_string(&record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|r| r["input"]["event_type"].as_str().map(str::to_owned))
        .collect();
    Task {
        out,
        requests: model.requests(),
        project,
        heard,
    }
}

#[test]
fn the_real_openhands_cli_is_gated_by_hookrt() {
    let started = Instant::now();
    let plain = agent(false);
    let t = task(plain.path(), "rm -rf build");
    assert!(
        t.project.path().join("build").is_dir(),
        "rm -rf build was denied\n{}",
        t.out
    );
    let told = tool_output(&t.requests, "call_hookrt_terminal")
        .unwrap_or_else(|| panic!("the model was told nothing:\n{}", t.out));
    assert!(
        told.contains("Action rejected") && told.contains("recursive forced delete"),
        "the deny's reason reached the model: {told}"
    );
    let t = task(plain.path(), "touch made.txt");
    assert!(
        t.project.path().join("made.txt").exists(),
        "an abstain runs\n{}",
        t.out
    );
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
    ] {
        assert!(
            t.heard.contains(event),
            "{event} reached hookrt: {:?}\n{}",
            t.heard,
            t.out
        );
    }
    eprintln!("openhands e2e took {:?}", started.elapsed());
}
