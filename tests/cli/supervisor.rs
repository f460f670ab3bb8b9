//! `hookrt hook` under its supervisor: a decision whose process ends in a
//! way no panic hook sees (an abort, a SIGKILL as the OOM killer sends, a
//! stack overflow) is still the gate's failure, never the signal agents
//! let a tool call run on: exit 2 (or the agent's refusal in JSON) on a
//! gate, 1 on an event that gates nothing. `HOOKRT_HOOK_TEST_CRASH` makes
//! the deciding process end so (commands/hook/supervisor.rs).

use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{agent_fixture, claude_fixture, hookrt_command, repo, with_stdin};
use crate::text;

/// Every way the test support ends the deciding process.
const CRASHES: [&str; 3] = ["abort", "sigkill", "stack-overflow"];

/// `hookrt hook --agent AGENT [--event EVENT]` on the example agent with
/// `input`, its deciding process ended by `crash`.
fn crashed(agent: &str, event: Option<&str>, input: &str, crash: &str) -> Output {
    let dir = repo().join("example-hooks/agent");
    let mut command = hookrt_command();
    command.args(["hook", "--agent", agent, dir.to_str().unwrap()]);
    if let Some(event) = event {
        command.args(["--event", event]);
    }
    command.env("HOOKRT_HOOK_TEST_CRASH", crash);
    with_stdin(command, input)
}

#[test]
fn hook_blocks_a_tool_call_whose_decision_aborts_is_killed_or_overflows_its_stack() {
    let input = claude_fixture("PreToolUse");
    // A stack overflow is Rust's abort after its message (a SIGSEGV
    // where no guard page catches it): a signal either way.
    for (crash, signal) in [("abort", "6"), ("sigkill", "9"), ("stack-overflow", "")] {
        let out = crashed("claude-code", None, &input, crash);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{crash}: exit 2 blocks: {err}");
        assert!(
            err.contains(&format!("the decision's process ended by signal {signal}"))
                && err.contains("blocked because hookrt could not decide on it"),
            "{crash}: {err}"
        );
        assert_eq!(text(&out.stdout), "", "{crash}");
    }
}

#[test]
fn hook_exits_1_when_the_decision_of_an_event_that_gates_nothing_dies() {
    let input = claude_fixture("Stop");
    for crash in CRASHES {
        let out = crashed("claude-code", None, &input, crash);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{crash}: {err}");
        assert!(
            err.contains("the decision's process ended by signal"),
            "{err}"
        );
        assert!(!err.contains("blocked"), "{crash}: {err}");
        assert_eq!(text(&out.stdout), "", "{crash}");
    }
}

#[test]
fn hook_refuses_in_json_a_gate_whose_agent_runs_it_on_a_failing_exit_when_its_decision_dies() {
    // Copilot CLI lets a prompt through on any exit: its refusal is JSON.
    let input = agent_fixture("copilot", "userPromptSubmitted");
    for crash in CRASHES {
        let out = crashed("copilot", Some("userPromptSubmitted"), &input, crash);
        assert_eq!(out.status.code(), Some(0), "{crash}: {}", text(&out.stderr));
        let answer: Value = serde_json::from_str(text(&out.stdout).trim())
            .unwrap_or_else(|e| panic!("{crash}: one JSON answer: {e}: {}", text(&out.stdout)));
        assert_eq!(answer["decision"], "block", "{crash}: {answer}");
        let reason = answer["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("the decision's process ended by signal"),
            "{crash}: {answer}"
        );
    }
}

#[test]
fn hook_fails_closed_at_its_deadline_when_its_input_never_ends() {
    // The input is read before the fork, with no watchdog thread yet: the
    // read itself gives up at --deadline-ms.
    let dir = repo().join("example-hooks/agent");
    let mut child = hookrt_command()
        .args(["claude-hook", dir.to_str().unwrap(), "--deadline-ms", "300"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    // Held open and never written, as an agent that hangs would.
    let stdin = child.stdin.take();
    let started = Instant::now();
    while child
        .try_wait()
        .expect("the command is waited on")
        .is_none()
    {
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("still reading its input 30 s after a 300 ms deadline");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    let out = child.wait_with_output().expect("the command ends");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit 2 blocks: {err}");
    assert!(
        err.contains("no decision within --deadline-ms (300 ms); failing closed"),
        "{err}"
    );
    assert_eq!(text(&out.stdout), "");
}
