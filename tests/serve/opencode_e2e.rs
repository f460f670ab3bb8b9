//! The real OpenCode (the `opencode` binary of the pinned `opencode-ai`
//! 1.18.33) and Kilo CLI (`@kilocode/cli` 7.7.7, built on it), installed by
//! `scripts/agents`, running whole `run` sessions offline against a
//! loopback stand-in of the OpenAI chat completions API that answers with
//! scripted `bash` calls, with hookrt's plugin as `hookrt install --agent
//! opencode` (or `kilo`) writes it, over both transports: the plugin runs
//! `hookrt hook --agent opencode` per hook, or posts to `hookrt serve`.
//!
//! The session: the model asks for `rm -rf build` (the policy denies it:
//! the plugin throws, the folder stays, the model reads why), then for
//! `touch made.txt` (the policy abstains: it runs), then says it is done.
//! With a rewriter that appends ` rewritten.txt` to every shell command
//! and allows it, OpenCode runs the rewritten command. Every hook the
//! plugin hands over reaches hookrt (its recording holds each). And the
//! plugin as written type-checks against `@opencode-ai/plugin`'s types,
//! which catch a hook's input misread.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::agents::agents_dir;
use crate::common::{TempAgent, succeeded};
use crate::copilot_e2e::{agent, completions};
use crate::standin::{StandIn, within};
use crate::{Server, TOKEN, hookrt};

/// The hooks every session hands to hookrt.
const HOOKS: [&str; 5] = [
    "session.created",
    "chat.message",
    "tool.execute.before",
    "tool.execute.after",
    "session.idle",
];

/// OpenCode or Kilo CLI: how each is run offline.
#[derive(Clone, Copy)]
enum Which {
    OpenCode,
    Kilo,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::OpenCode => "opencode",
            Which::Kilo => "kilo",
        }
    }

    fn binary(self) -> PathBuf {
        let agents = agents_dir();
        match self {
            Which::OpenCode => agents.join("node_modules/opencode-linux-x64/bin/opencode"),
            Which::Kilo => agents.join("node_modules/@kilocode/cli-linux-x64/bin/kilo"),
        }
    }

    /// Its project folder and its user folder under `XDG_CONFIG_HOME`.
    fn folder(self) -> &'static str {
        match self {
            Which::OpenCode => "opencode",
            Which::Kilo => "kilo",
        }
    }

    /// The plugin package each of its folders would otherwise install from
    /// npm before loading plugins (~70 s of retries offline): an empty
    /// `node_modules/` and a lock naming it tell it it is there.
    fn plugin_package(self) -> &'static str {
        match self {
            Which::OpenCode => r#"{"@opencode-ai/plugin":"1.18.33"}"#,
            Which::Kilo => r#"{"@kilocode/plugin":"7.7.7"}"#,
        }
    }

    /// The environment that keeps it offline and quiet (`PREFIX_*`).
    fn env(self) -> Vec<(String, String)> {
        let prefix = self.name().to_ascii_uppercase();
        let mut vars: Vec<(String, String)> = [
            "DISABLE_MODELS_FETCH",
            "DISABLE_AUTOUPDATE",
            "DISABLE_SHARE",
            "DISABLE_LSP_DOWNLOAD",
            "DISABLE_DEFAULT_PLUGINS",
        ]
        .iter()
        .map(|v| (format!("{prefix}_{v}"), "1".to_owned()))
        .collect();
        if let Which::Kilo = self {
            let dir = self.binary().parent().unwrap().join("tree-sitter");
            vars.extend([
                (
                    "KILO_TREE_SITTER_WASM_DIR".into(),
                    dir.display().to_string(),
                ),
                ("KILO_TELEMETRY_LEVEL".into(), "off".into()),
                ("KILO_NO_DAEMON".into(), "1".into()),
                ("KILO_DISABLE_SESSION_INGEST".into(), "1".into()),
                ("KILO_DISABLE_CODEBASE_INDEXING".into(), "1".into()),
                ("KILO_DISABLE_PRESENCE".into(), "1".into()),
            ]);
        }
        vars
    }
}

/// How the plugin reaches hookrt.
enum Transport<'a> {
    /// `hookrt hook --agent NAME DIR` per hook, recording into this file.
    Command(&'a Path),
    /// `hookrt serve` at this address (which records), or nothing there.
    Http(&'a str),
}

/// What one `run` did: whether it ended well, its JSON events, the
/// requests the model got, the project folder.
struct Session {
    success: bool,
    events: String,
    requests: Vec<Value>,
    project: tempfile::TempDir,
}

/// Runs a whole session of `which` in a fresh project holding `build/`,
/// hookrt's plugin installed there by `hookrt install` for `agent`.
fn session(which: Which, agent: &Path, transport: &Transport) -> Session {
    let binary = which.binary();
    assert!(binary.is_file(), "no binary at {}", binary.display());
    let model = StandIn::start("/v1/chat/completions", completions);
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let p = project.path();
    std::fs::create_dir(p.join("build")).unwrap();
    let config_home = home.path().join("config");
    for dir in [
        config_home.join(which.folder()),
        p.join(format!(".{}", which.folder())),
    ] {
        std::fs::create_dir_all(dir.join("node_modules")).unwrap();
        let lock = format!(
            r#"{{"lockfileVersion":3,"packages":{{"":{{"dependencies":{}}}}}}}"#,
            which.plugin_package()
        );
        std::fs::write(dir.join("package-lock.json"), lock).unwrap();
    }
    let config = json!({
        "provider": {"local": {"npm": "@ai-sdk/openai-compatible", "name": "stand-in",
            "options": {"baseURL": format!("{}/v1", model.url), "apiKey": "x"},
            "models": {"m1": {"name": "m1", "tool_call": true,
                "limit": {"context": 100000, "output": 4096}}}}},
        "model": "local/m1",
        "small_model": "local/m1",
        "autoupdate": false,
        "share": "disabled",
        "permission": {"bash": "allow", "edit": "allow"},
    });
    std::fs::write(
        p.join(format!("{}.json", which.folder())),
        config.to_string(),
    )
    .unwrap();
    let dir = agent.to_str().unwrap();
    let mut install = hookrt(&["install", "--agent", which.name(), dir, "--all-events"]);
    match transport {
        Transport::Command(record) => {
            install.args(["--record", record.to_str().unwrap()]);
        }
        Transport::Http(addr) => {
            install.args(["--http", &format!("http://{addr}")]);
        }
    }
    succeeded(install.current_dir(p));
    let mut run = Command::new(&binary);
    run.args(["run", "--format", "json", "clean up, then make the file"])
        .current_dir(p)
        .env_clear()
        // What the plugin's `hookrt hook` needs: the tests' build cache.
        .envs(hookrt(&[]).get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", &config_home)
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("TMPDIR", home.path())
        .env("HOOKRT_TOKEN", TOKEN)
        .envs(which.env())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = within(
        run.spawn().expect("the agent runs"),
        Duration::from_secs(180),
    );
    let mut events = String::from_utf8_lossy(&out.stdout).into_owned();
    events.push_str(&String::from_utf8_lossy(&out.stderr));
    Session {
        success: out.status.success(),
        events,
        requests: model.requests(),
        project,
    }
}

/// The tool message the model got for call `id`.
fn output_of(s: &Session, id: &str) -> String {
    crate::standin::tool_output(&s.requests, id)
        .unwrap_or_else(|| panic!("no output of {id} reached the model:\n{}", s.events))
}

/// The hooks a recording holds, by name.
fn recorded(file: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|r| {
            let input = match &r["input"] {
                Value::String(s) => serde_json::from_str(s).ok()?,
                other => other.clone(),
            };
            input["hook"].as_str().map(str::to_owned)
        })
        .collect()
}

/// What every session must show: the delete denied and said why, the touch
/// run (rewritten with the rewriter), every hook handed to hookrt.
fn check(s: &Session, what: &str, rewrites: bool, record: &Path) {
    assert!(s.success, "{what}: the run failed:\n{}", s.events);
    let p = s.project.path();
    assert!(
        p.join("build").is_dir(),
        "{what}: rm -rf build was denied\n{}",
        s.events
    );
    assert!(
        p.join("made.txt").exists(),
        "{what}: the policy abstained on touch made.txt: it ran\n{}",
        s.events
    );
    assert_eq!(
        p.join("rewritten.txt").exists(),
        rewrites,
        "{what}: the rewritten command ran only with the rewriter\n{}",
        s.events
    );
    let denied = output_of(s, "call_hookrt_rm");
    assert!(
        denied.contains("recursive forced delete"),
        "{what}: the deny's reason reached the model: {denied}"
    );
    let seen = recorded(record);
    for hook in HOOKS {
        assert!(
            seen.contains(hook),
            "{what}: {hook} reached hookrt: {seen:?}"
        );
    }
    eprintln!("{what}: denied, ran, rewritten: {rewrites}; hooks {seen:?}");
    // OpenCode's own time for each tool call, from its JSON events (printed
    // for `scripts/bench opencode`, never asserted).
    for event in s
        .events
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        let state = &event["part"]["state"];
        if event["type"] == "tool_use" {
            let took = state["time"]["end"]
                .as_i64()
                .zip(state["time"]["start"].as_i64());
            eprintln!(
                "{what}: tool {} {}: {} ms",
                event["part"]["tool"],
                state["status"],
                took.map_or(-1, |(end, start)| end - start)
            );
        }
    }
}

#[test]
fn the_real_opencode_and_kilo_are_gated_by_hookrts_plugin() {
    let started = Instant::now();
    let plain = agent(false);
    let rewriting = agent(true);
    let records = tempfile::tempdir().unwrap();
    for (agent, rewrites) in [(&plain, false), (&rewriting, true)] {
        let tag = if rewrites { ", rewriter" } else { "" };
        let record = records.path().join(format!("command{rewrites}.jsonl"));
        let s = session(Which::OpenCode, agent.path(), &Transport::Command(&record));
        check(&s, &format!("opencode, command{tag}"), rewrites, &record);
        let served = records.path().join(format!("http{rewrites}.jsonl"));
        let server = Server::start(
            agent.path(),
            &[
                "--decide-timeout-ms",
                "8000",
                "--record",
                served.to_str().unwrap(),
            ],
        );
        let s = session(
            Which::OpenCode,
            agent.path(),
            &Transport::Http(&server.addr),
        );
        check(&s, &format!("opencode, http{tag}"), rewrites, &served);
    }
    // hookrt serve down: the prompt, a gate, is refused, and nothing runs.
    let down = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = down.local_addr().unwrap().to_string();
    drop(down);
    let s = session(Which::OpenCode, plain.path(), &Transport::Http(&addr));
    assert!(
        !s.success,
        "a refused prompt ends the run in error:\n{}",
        s.events
    );
    assert!(
        s.events
            .contains("hookrt could not decide chat.message, so it is refused"),
        "the plugin says why:\n{}",
        s.events
    );
    let asked = s.requests.iter().filter(|r| r["tools"].is_array()).count();
    assert_eq!(
        asked, 0,
        "the prompt never reached the model: {:?}",
        s.requests
    );
    assert!(s.project.path().join("build").is_dir() && !s.project.path().join("made.txt").exists());
    // Kilo CLI runs the same plugin: deny, rewrite and abstain in one run.
    let record = records.path().join("kilo.jsonl");
    let s = session(Which::Kilo, rewriting.path(), &Transport::Command(&record));
    check(&s, "kilo, command, rewriter", true, &record);
    eprintln!("opencode and kilo e2e took {:?}", started.elapsed());
}

/// The plugin `hookrt install --agent opencode` writes, type-checked with
/// `tsc --strict` against `@opencode-ai/plugin` 1.18.33 (and Node's types):
/// it passes as written and fails with a hook's input misread.
#[test]
fn hookrts_plugin_type_checks_against_opencodes_plugin_types() {
    let agents = agents_dir();
    let agent = TempAgent::new().hook("agent/hooks/audit.rs", "audit.rs");
    let project = tempfile::Builder::new()
        .prefix("plugin-check")
        .tempdir_in(&agents)
        .unwrap();
    let dir = agent.path().to_str().unwrap();
    succeeded(
        hookrt(&["install", "--agent", "opencode", dir, "--all-events"])
            .current_dir(project.path()),
    );
    let plugin = project.path().join(".opencode/plugins/hookrt.ts");
    let text = std::fs::read_to_string(&plugin).unwrap();
    assert!(
        text.contains(r#""events":["session.created","chat.message""#),
        "{text}"
    );
    let check = |text: &str| {
        let file = project.path().join("hookrt.ts");
        std::fs::write(&file, text).unwrap();
        Command::new("node")
            .arg(agents.join("node_modules/typescript/bin/tsc"))
            .args([
                "--strict",
                "--noEmit",
                "--skipLibCheck",
                "--target",
                "es2022",
            ])
            .args(["--module", "esnext", "--moduleResolution", "bundler"])
            .args(["--types", "node", "--lib", "es2022,dom"])
            .arg(&file)
            .current_dir(&agents)
            .output()
            .expect("node runs tsc")
    };
    let out = check(&text);
    assert!(
        out.status.success(),
        "hookrt's plugin type-checks: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let misread = text.replacen("callID: input.callID", "callID: input.callId", 1);
    assert_ne!(misread, text);
    let out = check(&misread);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success() && said.contains("callId"),
        "a misread input is caught: {said}"
    );
}
