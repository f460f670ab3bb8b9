//! `hookrt hook` when hookrt cannot decide, on every gate of every agent:
//! a missing folder, a stale hook (never built here) and a panic each refuse
//! the gate in the agent's own form. Exit 2 blocks a gate for every agent,
//! except Copilot CLI's prompt gate, which Copilot lets through on any exit:
//! there the refusal is its block JSON on stdout, exit 0; and an inference
//! hook's frames, which only a verdict answers: a deny on stdout, exit 0
//! (`hookrt hook --agent anthropic-inference` decides a saved frame by
//! hand; Anthropic itself posts to `hookrt serve`); and hookrt's OpenCode
//! and Kilo CLI plugin, which reads every answer on stdout: a deny there,
//! exit 0 (the plugin throws it); and Cline, which reads no exit code: its
//! cancel on stdout, exit 0; goose, which blocks on its block on stdout
//! whatever the exit code; and Antigravity CLI, which shows no stderr:
//! its deny with the reason on stdout, exit 0; and the MCP interceptors,
//! whose every answer is an invocation's result body: an invalid call, a
//! mutator's failure. The forms are
//! written out here, not read back from the protocols (a mutation of one
//! agent's failure arm survived every test until this file).

use std::fs;
use std::path::Path;
use std::process::Output;

use hookrt::front::bridge::Bridge;
use serde_json::{Value, json};

use crate::common::{bridge_fixture, repo, with_stdin};
use crate::{hookrt, run, text};

/// `hookrt hook --agent AGENT DIR --event EVENT` with `input`, `env` set.
fn hook(agent: &str, dir: &Path, event: &str, input: &str, env: &[(&str, &str)]) -> Output {
    let mut command = hookrt(&["hook", "--agent", agent, dir.to_str().unwrap()]);
    command.args(["--event", event]).envs(env.iter().copied());
    with_stdin(command, input)
}

/// One way hookrt cannot decide: its name, the folder and environment
/// that make it so, and what the refusal says.
struct Cause<'a> {
    name: &'a str,
    dir: &'a Path,
    env: &'a [(&'a str, &'a str)],
    says: &'a str,
}

#[test]
fn every_gate_of_every_agent_refuses_when_hookrt_cannot_decide_and_copilots_prompt_in_json() {
    let scratch = tempfile::tempdir().unwrap();
    let missing = scratch.path().join("no-such-agent");
    let stale = scratch.path().join("stale");
    fs::create_dir_all(stale.join("hooks")).unwrap();
    let src = fs::read_to_string(repo().join("example-hooks/testing/hooks/deny_all.rs")).unwrap();
    let nonce = format!("{:?}", std::time::SystemTime::now());
    fs::write(stale.join("hooks/gate.rs"), format!("{src}\n// {nonce}\n")).unwrap();
    let built = repo().join("example-hooks/agent");
    let out = run(&["build", built.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stale_said = format!("hookrt build {}", stale.display());
    let causes = [
        Cause {
            name: "a missing folder",
            dir: &missing,
            env: &[],
            says: "the agent folder does not exist",
        },
        Cause {
            name: "a stale hook",
            dir: &stale,
            env: &[],
            says: &stale_said,
        },
        Cause {
            name: "a panic",
            dir: &built,
            env: &[("HOOKRT_CLAUDE_HOOK_TEST_PANIC", "1")],
            says: "HOOKRT_CLAUDE_HOOK_TEST_PANIC is set",
        },
    ];
    let (mut copilot_prompts, mut frames, mut on_stdout) = (0, 0, 0);
    for bridge in Bridge::ALL {
        let agent = bridge.name();
        for gate in bridge.gates() {
            let input = bridge_fixture(bridge, gate);
            for Cause {
                name: cause,
                dir,
                env,
                says: why,
            } in &causes
            {
                let out = hook(agent, dir, gate, &input, env);
                let (said, err) = (text(&out.stdout), text(&out.stderr));
                // The refusals in JSON, exit 0: where the verdict is, what
                // it says (`None`: any text), where the reason is.
                let (deny, block) = (json!("deny"), json!("block"));
                let (yes, no) = (json!(true), json!(false));
                let in_json: Option<(&str, Option<&Value>, &str)> = match (agent, *gate) {
                    ("copilot", "userPromptSubmitted") => {
                        Some(("/decision", Some(&block), "/reason"))
                    }
                    ("anthropic-inference", _) => Some(("/action", Some(&deny), "/deny_reason")),
                    // hookrt's plugin reads every answer on stdout.
                    ("opencode" | "kilo", _) => Some(("/decision", Some(&deny), "/reason")),
                    // Cline reads no exit code: its cancel, on stdout.
                    ("cline", _) => Some(("/cancel", Some(&yes), "/errorMessage")),
                    // goose blocks on a block on stdout whatever the exit code.
                    ("goose", _) => Some(("/decision", Some(&block), "/reason")),
                    // Antigravity CLI shows no stderr: its deny, with the reason.
                    ("antigravity", _) => Some(("/decision", Some(&deny), "/reason")),
                    // An MCP validation's invalid call; the mutator's failure.
                    ("mcp", "tools/call") => Some(("/valid", Some(&no), "/messages/0/message")),
                    ("mcp", _) => Some(("/failed", None, "/failed")),
                    _ => None,
                };
                if let Some((verdict_at, verdict, reason_at)) = in_json {
                    assert_eq!(out.status.code(), Some(0), "{agent} {gate}, {cause}: {err}");
                    let answer: Value = serde_json::from_str(said.trim())
                        .unwrap_or_else(|e| panic!("{cause}: one JSON answer: {e}: {said}"));
                    let found = answer.pointer(verdict_at);
                    match verdict {
                        Some(v) => assert_eq!(found, Some(v), "{cause}: {answer}"),
                        None => assert!(found.is_some_and(Value::is_string), "{cause}: {answer}"),
                    }
                    let reason = answer
                        .pointer(reason_at)
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    assert!(
                        reason.starts_with("hookrt could not decide this, so it is refused: ")
                            && reason.contains(why),
                        "{agent} {gate}, {cause}: {answer}"
                    );
                    match agent {
                        "copilot" => copilot_prompts += 1,
                        "opencode" | "kilo" | "cline" | "goose" | "antigravity" | "mcp" => {
                            on_stdout += 1
                        }
                        _ => frames += 1,
                    }
                } else {
                    assert_eq!(out.status.code(), Some(2), "{agent} {gate}, {cause}: {err}");
                    assert_eq!(said, "", "{agent} {gate}, {cause}: nothing on stdout");
                    assert!(err.contains(why), "{agent} {gate}, {cause}: {err}");
                }
            }
        }
    }
    assert_eq!(copilot_prompts, causes.len());
    assert_eq!(frames, 2 * causes.len(), "both frames, each cause");
    assert_eq!(
        on_stdout,
        (2 * 3 + 1 + 1 + 1 + 2) * causes.len(),
        "OpenCode's and Kilo's three gates, Cline's, goose's and Antigravity CLI's one and the MCP interceptors' two, each cause"
    );
}
