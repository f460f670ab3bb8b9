//! Gemini CLI (the pinned `@google/gemini-cli-core` and `@google/gemini-cli`
//! 0.61.0, installed by `scripts/agents`) with `hookrt hook --agent gemini
//! DIR` as its command hook, judged by Gemini's own code:
//!
//! - Gemini's hook machinery (its HookRegistry, HookPlanner, HookRunner,
//!   HookAggregator, driven through `HookEventHandler.executeHooks` by
//!   `tests/agents/gemini-run-hook.mjs`) runs hookrt on an input of every
//!   Gemini event (`tests/fixtures/gemini/<Event>.json`, written after the
//!   input types of its `hooks/types.d.ts`): what Gemini makes of hookrt's
//!   answers (a blocked call, a rewrite, a blocked prompt, a continued
//!   turn, context), and that every other event passes with the hook
//!   succeeded.
//! - The real `gemini` binary, offline (`--fake-responses-non-strict`: the
//!   model's answers are canned), with hookrt as the hook of every event:
//!   the model's `rm -rf build` is blocked and `touch made.txt` runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{TempAgent, copy, example, hookrt_bin, repo, succeeded};
use crate::hookrt;

/// The folder `scripts/agents` installs the agents into (installing them
/// first if needed): the last line it prints.
fn gemini_agents_dir() -> PathBuf {
    let out = Command::new("bash")
        .arg(repo().join("scripts/agents"))
        .current_dir(repo())
        .stderr(Stdio::inherit())
        .output()
        .expect("scripts/agents runs");
    assert!(out.status.success(), "scripts/agents failed");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dir = PathBuf::from(
        stdout
            .lines()
            .last()
            .expect("scripts/agents prints its folder"),
    );
    assert!(dir.is_dir(), "{}", dir.display());
    dir
}

/// The Gemini CLI input of `event` (`tests/fixtures/gemini/<event>.json`).
fn fixture(event: &str) -> Value {
    let path = repo().join(format!("tests/fixtures/gemini/{event}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `'…'` around `path`, for a shell command line.
fn quoted(path: &Path) -> String {
    let text = path.to_str().expect("utf-8 path");
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The hook command Gemini runs: `<hookrt> hook --agent gemini <dir>`.
fn hook_command(dir: &Path) -> String {
    format!(
        "{} hook --agent gemini {}",
        quoted(&hookrt_bin()),
        quoted(dir)
    )
}

/// The environment hookrt runs with in these tests (the shared build
/// cache, the tests' state folder), for the agent that starts it.
fn hookrt_env() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    hookrt(&[])
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
        .collect()
}

/// Gemini's hook runner, run by `tests/agents/gemini-run-hook.mjs`; hooks
/// run in `work`.
struct Runner {
    core: PathBuf,
    work: tempfile::TempDir,
    runs: std::cell::Cell<usize>,
}

impl Runner {
    fn new() -> Runner {
        let core = gemini_agents_dir().join("node_modules/@google/gemini-cli-core");
        assert!(core.is_dir(), "{}", core.display());
        Runner {
            core,
            work: tempfile::tempdir().unwrap(),
            runs: std::cell::Cell::new(0),
        }
    }

    /// What Gemini makes of hook `command` on `event` with `input` (its
    /// `cwd` set to the work folder): the script's JSON.
    fn run(&self, event: &str, input: &Value, command: &str) -> Value {
        let mut input = input.clone();
        input["cwd"] = json!(self.work.path());
        let n = self.runs.get();
        self.runs.set(n + 1);
        let file = self.work.path().join(format!("input-{n}-{event}.json"));
        std::fs::write(&file, input.to_string()).unwrap();
        let out = Command::new("node")
            .arg(repo().join("tests/agents/gemini-run-hook.mjs"))
            .arg(event)
            .arg(command)
            .arg(&file)
            .arg("--core")
            .arg(&self.core)
            .args(["--name", "hookrt", "--timeout", "30000"])
            .current_dir(self.work.path())
            .envs(hookrt_env())
            .env("GEMINI_HOOK_QUIET", "1")
            .output()
            .expect("node runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "gemini-run-hook.mjs {event} failed: {}\n{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("gemini-run-hook.mjs {event}: not JSON ({e}): {stdout}"))
    }
}

/// The one hook's raw result in `r`, checked to be a success: hookrt ran,
/// exited 0 and printed JSON, and Gemini's aggregation saw no error.
fn succeeded_once<'a>(r: &'a Value, what: &str) -> &'a Value {
    let raw = r["raw"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: {r:#}"));
    assert_eq!(raw.len(), 1, "{what}: one hook ran: {r:#}");
    let hook = &raw[0];
    assert_eq!(hook["success"], true, "{what}: the hook succeeded: {r:#}");
    assert_eq!(hook["exitCode"], 0, "{what}: exit 0: {r:#}");
    assert_eq!(
        hook["outputFormat"], "json",
        "{what}: hookrt answered JSON: {r:#}"
    );
    assert_eq!(r["aggregated"]["success"], true, "{what}: {r:#}");
    assert_eq!(r["aggregated"]["errors"], json!([]), "{what}: {r:#}");
    hook
}

/// A built copy of `example-hooks/agent`.
fn example_agent() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy(&example("agent"), dir.path()).unwrap();
    succeeded(&mut hookrt(&["build", dir.path().to_str().unwrap()]));
    dir
}

/// What the gatekeeper adds as context.
const CONTEXT_MARK: &str = "HOOKRT-CONTEXT-51c2: the build folder is generated";
/// What the gatekeeper keeps a turn going with.
const KEEP_GOING: &str = "HOOKRT-KEEP-GOING: check the file once more";
/// The word the gatekeeper blocks prompts for.
const FORBIDDEN: &str = "FORBIDDEN-WORD";
/// What the rewriter appends to every shell command.
const SUFFIX: &str = " --dry-run";

#[test]
fn gemini_clis_own_hook_runner_runs_hookrt_and_reads_its_decisions() {
    let runner = Runner::new();

    // The example agent: its policy denies a recursive forced delete and
    // abstains otherwise; every other event passes.
    let agent = example_agent();
    let hook = hook_command(agent.path());
    let mut rm = fixture("BeforeTool");
    rm["tool_input"]["command"] = json!("rm -rf build");
    let r = runner.run("BeforeTool", &rm, &hook);
    let raw = succeeded_once(&r, "BeforeTool rm -rf");
    assert_eq!(raw["output"]["decision"], "deny", "{r:#}");
    assert_eq!(r["blocking"], true, "rm -rf build is blocked: {r:#}");
    let reason = r["reason"].as_str().unwrap();
    assert!(reason.contains("recursive forced delete"), "{r:#}");
    assert!(
        r["effect"].as_str().unwrap().starts_with(
            "tool error POLICY_VIOLATION: \"Tool execution blocked: recursive forced delete"
        ),
        "{r:#}"
    );

    let mut ls = fixture("BeforeTool");
    ls["tool_input"]["command"] = json!("ls");
    let r = runner.run("BeforeTool", &ls, &hook);
    succeeded_once(&r, "BeforeTool ls");
    assert_eq!(r["blocking"], false, "ls is not blocked: {r:#}");
    assert_eq!(r["stop"], false, "{r:#}");
    assert_eq!(r["ask"], false, "{r:#}");
    assert!(
        r["modifiedToolInput"].is_null(),
        "ls is not rewritten: {r:#}"
    );

    for (event, _) in gemini_events() {
        let r = runner.run(event, &fixture(event), &hook);
        succeeded_once(&r, event);
        assert_eq!(r["blocking"], false, "{event} passes: {r:#}");
        assert_eq!(r["stop"], false, "{event} goes on: {r:#}");
        eprintln!("{event}: {}", r["effect"]);
    }

    // A rewriter that allows: Gemini replaces the call's arguments with
    // the rewritten input, whole.
    let rewriting = TempAgent::new()
        .hook("testing/hooks/rewriter.rs", "rewriter.rs")
        .config(&format!(
            "[hooks.\"rewriter\"]\nconfig = {{ suffix = \"{SUFFIX}\", allow = true }}\n"
        ));
    succeeded(&mut hookrt(&["build", rewriting.path().to_str().unwrap()]));
    let input = fixture("BeforeTool");
    let r = runner.run("BeforeTool", &input, &hook_command(rewriting.path()));
    succeeded_once(&r, "BeforeTool rewritten");
    let mut rewritten = input["tool_input"].clone();
    rewritten["command"] = json!(format!(
        "{}{SUFFIX}",
        input["tool_input"]["command"].as_str().unwrap()
    ));
    assert_eq!(
        r["modifiedToolInput"], rewritten,
        "the rewriter's input: {r:#}"
    );
    assert_eq!(r["blocking"], false, "{r:#}");
    assert_eq!(r["ask"], false, "{r:#}");
    assert!(
        r["effect"].as_str().unwrap().contains("args REPLACED"),
        "{r:#}"
    );

    // A gatekeeper: blocks prompts with its word, keeps turns going, adds
    // context where Gemini takes it.
    let gatekeeping = TempAgent::new()
        .hook("testing/hooks/gatekeeper.rs", "gatekeeper.rs")
        .config(&format!(
            "[hooks.\"gatekeeper\"]\nconfig = {{ context = \"{CONTEXT_MARK}\", block_word = \"{FORBIDDEN}\", keep_going = \"{KEEP_GOING}\" }}\n"
        ));
    succeeded(&mut hookrt(&[
        "build",
        gatekeeping.path().to_str().unwrap(),
    ]));
    let gate = hook_command(gatekeeping.path());

    let mut forbidden = fixture("BeforeAgent");
    forbidden["prompt"] = json!(format!("{FORBIDDEN}: do nothing"));
    let r = runner.run("BeforeAgent", &forbidden, &gate);
    succeeded_once(&r, "BeforeAgent forbidden");
    assert_eq!(r["blocking"], true, "the prompt is blocked: {r:#}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("the prompt holds `{FORBIDDEN}`")),
        "{r:#}"
    );
    assert!(
        r["effect"]
            .as_str()
            .unwrap()
            .starts_with("AgentExecutionBlocked"),
        "{r:#}"
    );

    let r = runner.run("BeforeAgent", &fixture("BeforeAgent"), &gate);
    succeeded_once(&r, "BeforeAgent");
    assert_eq!(r["blocking"], false, "{r:#}");
    assert_eq!(
        r["additionalContext"], CONTEXT_MARK,
        "the prompt's context: {r:#}"
    );

    // stop_hook_active is false: the governor's count starts afresh.
    let r = runner.run("AfterAgent", &fixture("AfterAgent"), &gate);
    succeeded_once(&r, "AfterAgent");
    assert_eq!(r["blocking"], true, "the turn is continued: {r:#}");
    assert_eq!(r["stop"], false, "{r:#}");
    assert!(r["reason"].as_str().unwrap().contains(KEEP_GOING), "{r:#}");
    assert!(
        r["effect"].as_str().unwrap().starts_with(&format!(
            "AgentExecutionBlocked, then re-prompt model with \"{KEEP_GOING}"
        )),
        "Gemini re-prompts with the reason: {r:#}"
    );

    for event in ["AfterTool", "SessionStart"] {
        let r = runner.run(event, &fixture(event), &gate);
        succeeded_once(&r, event);
        assert_eq!(r["blocking"], false, "{event}: {r:#}");
        assert_eq!(
            r["additionalContext"], CONTEXT_MARK,
            "{event}'s context: {r:#}"
        );
    }
}

/// One model turn Gemini reads from the fake responses: a streamed response
/// of `parts`.
fn model_turn(parts: Value) -> Value {
    json!({"method": "generateContentStream", "response": [
        {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}
    ]})
}

/// The model asks for `command` in the shell.
fn shell(command: &str, description: &str) -> Value {
    model_turn(json!([{"functionCall": {"name": "run_shell_command",
        "args": {"command": command, "description": description}}}]))
}

/// `(event, succeeded)` of each hook call Gemini's telemetry logged (its
/// `Hook call <Event>.<name> succeeded|failed in Nms` records).
fn hook_calls(telemetry: &str) -> Vec<(String, bool)> {
    telemetry
        .split("Hook call ")
        .skip(1)
        .filter_map(|rest| {
            let mut words = rest.split(' ');
            let id = words.next()?;
            let status = words.next()?;
            let (event, name) = id.split_once('.')?;
            (name == "hookrt").then(|| (event.to_owned(), status == "succeeded"))
        })
        .collect()
}

#[test]
fn the_real_gemini_cli_is_gated_by_hookrt() {
    let gemini = gemini_agents_dir().join("node_modules/@google/gemini-cli/bundle/gemini.js");
    assert!(gemini.is_file(), "{}", gemini.display());
    let agent = example_agent();
    let hook = hook_command(agent.path());

    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let project = root.path().join("proj");
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::create_dir_all(project.join("build")).unwrap();
    // hookrt on every Gemini event; the timeout is in milliseconds.
    let hooks: serde_json::Map<String, Value> = gemini_events()
        .iter()
        .map(|(event, _)| {
            let entry = json!([{"hooks": [
                {"type": "command", "name": "hookrt", "command": hook, "timeout": 30000}
            ]}]);
            (event.to_string(), entry)
        })
        .collect();
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "general": {"enableAutoUpdate": false},
        "hooks": hooks,
    });
    std::fs::write(home.join(".gemini/settings.json"), settings.to_string()).unwrap();
    let fake = root.path().join("fake.jsonl");
    let turns = [
        shell("rm -rf build", "Remove the build folder"),
        shell("touch made.txt", "Make made.txt"),
        model_turn(json!([{"text": "Done."}])),
    ];
    let lines: String = turns.iter().map(|t| format!("{t}\n")).collect();
    std::fs::write(&fake, lines).unwrap();
    let telemetry = root.path().join("telemetry.log");
    let stdout_file = root.path().join("stdout.txt");
    let stderr_file = root.path().join("stderr.txt");

    let started = Instant::now();
    let mut child = Command::new("node")
        .arg(&gemini)
        .args([
            "-m",
            "gemini-2.5-pro",
            "-p",
            "clean up the build folder, then make made.txt",
        ])
        .args(["--yolo", "-o", "json", "--fake-responses-non-strict"])
        .arg(&fake)
        .current_dir(&project)
        .env_clear()
        .envs(hookrt_env())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("GEMINI_API_KEY", "dummy")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env("GEMINI_TELEMETRY_ENABLED", "true")
        .env("GEMINI_TELEMETRY_TARGET", "local")
        .env("GEMINI_TELEMETRY_OUTFILE", &telemetry)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_file).unwrap())
        .stderr(std::fs::File::create(&stderr_file).unwrap())
        .spawn()
        .expect("node runs gemini");
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "gemini ran past 180 s: {}",
                std::fs::read_to_string(&stderr_file).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = std::fs::read_to_string(&stdout_file).unwrap();
    let stderr = std::fs::read_to_string(&stderr_file).unwrap();
    eprintln!("gemini ran {:?}", started.elapsed());
    assert!(
        status.success(),
        "gemini -p failed ({status}): {stderr}\n{stdout}"
    );
    let output: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("gemini -o json printed no JSON ({e}): {stdout}\n{stderr}"));

    // rm -rf build was blocked, with the policy's reason; touch ran.
    assert!(
        project.join("build").is_dir(),
        "rm -rf build was blocked: {stderr}"
    );
    assert!(
        stderr.contains("Tool execution blocked: recursive forced delete"),
        "Gemini says why: {stderr}"
    );
    assert!(
        project.join("made.txt").is_file(),
        "touch made.txt ran: {stderr}"
    );
    let shell_stats = &output["stats"]["tools"]["byName"]["run_shell_command"];
    assert_eq!(shell_stats["count"], 2, "{output:#}");
    assert_eq!(shell_stats["success"], 1, "{output:#}");
    assert_eq!(shell_stats["fail"], 1, "{output:#}");
    assert_eq!(output["response"], "Done.", "{output:#}");
    // The model was told why: the blocked call's result in the session's
    // transcript (what Gemini sends back to the model).
    let chats = home.join(".gemini/tmp/proj/chats");
    let told = std::fs::read_dir(&chats)
        .unwrap_or_else(|e| panic!("{}: {e}", chats.display()))
        .filter_map(|f| std::fs::read_to_string(f.ok()?.path()).ok())
        .any(|t| t.contains("\"error\":\"Tool execution blocked: recursive forced delete"));
    assert!(told, "the blocked call's reason went back to the model");

    // Every hook call Gemini made succeeded, on every event it fired.
    let log = std::fs::read_to_string(&telemetry).unwrap_or_default();
    let calls = hook_calls(&log);
    let failed: Vec<&(String, bool)> = calls.iter().filter(|(_, ok)| !ok).collect();
    assert!(failed.is_empty(), "hook calls failed: {failed:?}\n{stderr}");
    let fired: std::collections::BTreeSet<&str> = calls.iter().map(|(e, _)| e.as_str()).collect();
    for event in [
        "SessionStart",
        "BeforeAgent",
        "BeforeModel",
        "BeforeToolSelection",
        "AfterModel",
        "BeforeTool",
        "AfterTool",
        "AfterAgent",
        "SessionEnd",
    ] {
        assert!(fired.contains(event), "{event} fired: {fired:?}");
    }
    eprintln!("{} hook calls, all succeeded, on {fired:?}", calls.len());
}

#[test]
fn gemini_reads_a_hookrt_that_cannot_decide_as_a_block_on_gates_and_a_warning_elsewhere() {
    let runner = Runner::new();
    // A hook no one builds: `hook` never builds, so the folder does not load.
    let allow_all = std::fs::read_to_string(example("testing/hooks/allow_all.rs")).unwrap();
    let stale = TempAgent::new().file(
        "hooks/stale.rs",
        &format!("{allow_all}\n// Never built (tests/serve/gemini.rs).\n"),
    );
    let hook = hook_command(stale.path());
    for event in ["BeforeTool", "BeforeAgent"] {
        let r = runner.run(event, &fixture(event), &hook);
        let raw = &r["raw"][0];
        assert_eq!(raw["exitCode"], 2, "{event}: {r:#}");
        assert_eq!(r["blocking"], true, "{event} fails closed: {r:#}");
        assert!(
            r["reason"].as_str().unwrap().contains("is not built"),
            "{event}: the reason names the cause: {r:#}"
        );
    }
    for event in ["AfterTool", "AfterAgent", "SessionStart"] {
        let r = runner.run(event, &fixture(event), &hook);
        assert_eq!(r["raw"][0]["exitCode"], 1, "{event}: {r:#}");
        assert_eq!(r["blocking"], false, "{event} goes on: {r:#}");
        assert!(
            r["systemMessage"]
                .as_str()
                .unwrap()
                .starts_with("Warning: "),
            "{event}: Gemini shows a warning: {r:#}"
        );
    }
}

/// Every event of the pinned Gemini CLI and its kind.
fn gemini_events() -> &'static [(&'static str, &'static str)] {
    ::hookrt::front::bridge::Bridge::named("gemini")
        .unwrap()
        .events()
}
