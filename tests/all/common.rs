//! Shared helpers: the example folders, the shared cache, temporary agents.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use anyhow::{Context, Result};
use hookrt::BuildOptions;
use hookrt::{Delivery, Envelope, Runtime};

/// The repository root: the folder above the test's package (`tests/`,
/// or `runtime/cli/` for the tests that run the command) holding `example-hooks/`.
pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| dir.join("example-hooks").is_dir())
        .expect("the test's package is inside the repository")
        .to_path_buf()
}

/// `example-hooks/<rel>`.
pub(crate) fn example(rel: &str) -> PathBuf {
    repo().join("example-hooks").join(rel)
}

/// The build cache shared by every test (`target/tmp/hookrt-cache`): hooks
/// compile once, whether a test loads them or runs `hookrt`.
pub(crate) fn shared_cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hookrt-cache")
}

/// Build options with the cache shared by every test.
pub(crate) fn opts() -> BuildOptions {
    let mut o = BuildOptions::for_agent(&repo());
    o.cache_dir = shared_cache();
    o
}

/// Loads an agent folder with the shared cache, failing the test with every problem.
pub(crate) fn load(agent: &Path) -> Runtime {
    match Runtime::load_blocking(agent, &opts(), &mut |_| {}) {
        Ok(rt) => rt,
        Err(p) => panic!("loading {} failed:\n{p}", agent.display()),
    }
}

/// The example transcript, parsed.
pub(crate) fn transcript() -> Vec<Envelope> {
    let text = fs::read_to_string(example("agent/transcript.jsonl")).expect("transcript");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Envelope::from_json(l).expect("valid envelope"))
        .collect()
}

/// Runs every event of the transcript; returns all deliveries in order.
pub(crate) fn run_transcript(rt: &Runtime) -> Vec<Delivery> {
    transcript()
        .iter()
        .flat_map(|e| rt.dispatch(e).expect("dispatch").deliveries)
        .collect()
}

/// A temporary agent folder assembled from example hooks.
pub(crate) struct TempAgent {
    pub dir: tempfile::TempDir,
}

impl TempAgent {
    pub(crate) fn new() -> TempAgent {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir(dir.path().join("hooks")).expect("hooks dir");
        TempAgent { dir }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copies `example-hooks/<from>` (file or folder) to `hooks/<to>`.
    pub(crate) fn hook(self, from: &str, to: &str) -> TempAgent {
        copy(&example(from), &self.path().join("hooks").join(to)).expect("copy hook");
        self
    }

    /// Writes `hooks/<to>` with `text`.
    pub(crate) fn file(self, to: &str, text: &str) -> TempAgent {
        let p = self.path().join(to);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, text).expect("write");
        self
    }

    /// Writes `hookrt.toml`.
    pub(crate) fn config(self, text: &str) -> TempAgent {
        self.file("hookrt.toml", text)
    }
}

pub(crate) fn copy(from: &Path, to: &Path) -> Result<()> {
    if from.is_dir() {
        fs::create_dir_all(to)?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            if entry.file_name() == "target" {
                continue;
            }
            copy(&entry.path(), &to.join(entry.file_name()))?;
        }
    } else {
        fs::create_dir_all(to.parent().context("parent")?)?;
        fs::copy(from, to).with_context(|| format!("copy {}", from.display()))?;
    }
    Ok(())
}

/// `(hook, handler, outcome)` of each delivery, for exact comparisons.
pub(crate) fn triples(ds: &[Delivery]) -> Vec<(String, String, String)> {
    ds.iter()
        .map(|d| (d.hook.clone(), d.handler.clone(), d.outcome.to_string()))
        .collect()
}

/// The value of field `key` in the last log line of a delivery that has it.
pub(crate) fn last_field(d: &Delivery, key: &str) -> Option<String> {
    d.logs.iter().rev().find_map(|l| {
        l.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    })
}

/// The `hookrt` binary cargo built for this test (`CARGO_BIN_EXE_hookrt`:
/// `tests/cli` and `tests/serve` are test targets of hookrt-cli, so
/// `cargo test` builds it first, with the test's profile).
#[allow(dead_code, reason = "tests/all runs the library, not the command")]
pub(crate) fn hookrt_bin() -> PathBuf {
    match option_env!("CARGO_BIN_EXE_hookrt") {
        Some(bin) => PathBuf::from(bin),
        None => panic!(
            "no `hookrt` binary for this test: only hookrt-cli's test targets (tests/cli, tests/serve) run the command"
        ),
    }
}

/// [`hookrt_bin`] with the [shared cache](shared_cache).
#[allow(dead_code, reason = "tests/all runs the library, not the command")]
pub(crate) fn hookrt_command() -> Command {
    let mut c = Command::new(hookrt_bin());
    c.env("HOOKRT_CACHE_DIR", shared_cache());
    // `hookrt claude-hook` keeps state per user: the tests' own, not the machine's.
    c.env(
        "HOOKRT_STATE_DIR",
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hookrt-state"),
    );
    // A command hook decides in its own process, as these tests of it
    // expect: the resident service, the default, is what tests/cli/service.rs
    // and the agents' sessions through it ask for (they remove this).
    c.env("HOOKRT_NO_SERVICE", "1");
    c
}

/// The Claude Code hook input of `event` (`tests/fixtures/claude/<event>.json`,
/// written after the event's input type in the pinned package's `sdk.d.ts`).
pub(crate) fn claude_fixture(event: &str) -> String {
    agent_fixture("claude", event)
}

/// The hook input of registered agent `bridge`'s `event`, from its fixtures
/// folder (`claude` for Claude Code, else the agent's name).
pub(crate) fn bridge_fixture(bridge: hookrt::front::bridge::Bridge, event: &str) -> String {
    let folder = match bridge.name() {
        "claude-code" => "claude",
        // Kilo CLI runs hookrt's OpenCode plugin: the same inputs.
        "kilo" => "opencode",
        other => other,
    };
    agent_fixture(folder, event)
}

/// The hook input of `agent`'s `event` in `tests/fixtures/<agent>/` (the
/// fixtures' README says where each comes from; an event's `/` and `:`, as
/// in the MCP interceptors' `tools/call:rewrite`, are `_` in its name).
pub(crate) fn agent_fixture(agent: &str, event: &str) -> String {
    let file = event.replace(['/', ':'], "_");
    let path = repo().join(format!("tests/fixtures/{agent}/{file}.json"));
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[allow(dead_code, reason = "tests/all runs the library, not the command")]
/// An agent's shell-tool gate: its event, its fixture, where the command
/// is in its input and where the decision is in its answer.
pub(crate) struct ToolGate {
    /// The fixture folder under `tests/fixtures/`.
    pub folder: &'static str,
    /// The hook event.
    pub event: &'static str,
    /// The JSON pointer of the shell command in the input.
    pub command_at: &'static str,
    /// The JSON pointer of the decision (`deny`, …) in the answer.
    pub decision_at: &'static str,
}

#[allow(dead_code, reason = "tests/all runs the library, not the command")]
/// The shell-tool gate of `bridge`.
pub(crate) fn tool_gate(bridge: hookrt::front::bridge::Bridge) -> ToolGate {
    let (folder, event, command_at, decision_at) = match bridge.name() {
        "claude-code" => (
            "claude",
            "PreToolUse",
            "/tool_input/command",
            "/hookSpecificOutput/permissionDecision",
        ),
        "codex" => (
            "codex",
            "PreToolUse",
            "/tool_input/command",
            "/hookSpecificOutput/permissionDecision",
        ),
        "gemini" => ("gemini", "BeforeTool", "/tool_input/command", "/decision"),
        "cursor" => ("cursor", "beforeShellExecution", "/command", "/permission"),
        "copilot" => (
            "copilot",
            "preToolUse",
            "/toolArgs/command",
            "/permissionDecision",
        ),
        "opencode" | "kilo" => (
            "opencode",
            "tool.execute.before",
            "/args/command",
            "/decision",
        ),
        "openhands" => (
            "openhands",
            "PreToolUse",
            "/tool_input/command",
            "/decision",
        ),
        "cline" => (
            "cline",
            "PreToolUse",
            "/tool_call/input/commands/0",
            "/cancel",
        ),
        "goose" => ("goose", "PreToolUse", "/tool_input/command", "/decision"),
        "antigravity" => (
            "antigravity",
            "PreToolUse",
            "/toolCall/args/CommandLine",
            "/decision",
        ),
        "anthropic-inference" => (
            "anthropic-inference",
            "tool_call",
            "/messages/0/content/1/input/command",
            "/action",
        ),
        "mcp" => ("mcp", "tools/call", "/payload/arguments/command", "/valid"),
        other => unreachable!("no tool gate written for {other}"),
    };
    ToolGate {
        folder,
        event,
        command_at,
        decision_at,
    }
}

#[allow(dead_code, reason = "tests/all runs the library, not the command")]
impl ToolGate {
    /// Whether `answer` denies the call: the agent's `deny` there (goose's
    /// `block`), Cline's `cancel: true`, or an MCP validation's `valid: false`.
    pub(crate) fn denies(&self, answer: &serde_json::Value) -> bool {
        match answer.pointer(self.decision_at) {
            Some(serde_json::Value::String(word)) => word == "deny" || word == "block",
            Some(serde_json::Value::Bool(valid)) if self.decision_at == "/valid" => !*valid,
            Some(serde_json::Value::Bool(cancel)) => *cancel,
            _ => false,
        }
    }

    /// The gate's fixture with `command` as its shell command.
    pub(crate) fn input(&self, command: &str) -> serde_json::Value {
        let mut input: serde_json::Value =
            serde_json::from_str(&agent_fixture(self.folder, self.event))
                .expect("the fixture is JSON");
        *input
            .pointer_mut(self.command_at)
            .expect("the fixture has a command") = command.into();
        input
    }
}

#[allow(dead_code, reason = "tests/all runs the library, not the command")]
/// The reason in `answer`, wherever the agent keeps it.
pub(crate) fn answer_reason(answer: &serde_json::Value) -> String {
    [
        "/hookSpecificOutput/permissionDecisionReason",
        "/reason",
        "/agent_message",
        "/permissionDecisionReason",
        "/deny_reason",
        "/errorMessage",
        "/messages/0/message",
    ]
    .iter()
    .find_map(|p| answer.pointer(p).and_then(serde_json::Value::as_str))
    .unwrap_or_default()
    .to_owned()
}

/// What `command` does with `input` on its stdin (stdout and stderr kept).
#[allow(dead_code, reason = "tests/all runs the library, not the command")]
pub(crate) fn with_stdin(mut command: Command, input: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    child
        .stdin
        .take()
        .expect("stdin piped")
        .write_all(input.as_bytes())
        .expect("stdin written");
    child.wait_with_output().expect("the command ends")
}

/// `command`'s output, after asserting it succeeded (its stderr otherwise).
#[allow(dead_code, reason = "tests/all runs the library, not the command")]
pub(crate) fn succeeded(command: &mut Command) -> Output {
    let out = command.output().expect("the command starts");
    assert!(
        out.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[allow(dead_code, reason = "tests/cli copies folders; tests/all does not")]
/// Copies the folder `from` to `to`, files and folders (links followed).
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[allow(dead_code, reason = "the crash tests draw from it; tests/all does not")]
/// A small deterministic generator, so a failing run can be reproduced.
pub(crate) struct Lcg(pub u64);

#[allow(dead_code, reason = "the crash tests draw from it; tests/all does not")]
impl Lcg {
    /// The next number below `below`.
    pub(crate) fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}
