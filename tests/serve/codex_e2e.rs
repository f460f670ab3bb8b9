//! The real Codex (the `codex` binary of the pinned `@openai/codex` 0.171.0,
//! installed by `scripts/agents`) running whole `codex exec` sessions
//! offline against a loopback stand-in of the Responses API that answers
//! with scripted tool calls, with `hookrt hook --agent codex` as the command
//! hook of every event it fires.
//!
//! The session: the model asks for `rm -rf build` (the policy denies it:
//! the folder stays, and the model is told why in the call's output), then
//! for `touch made.txt` (the policy abstains: it runs), then says it is
//! done. A second session adds a rewriter that appends ` rewritten.txt` to
//! every shell command and allows it: Codex runs the rewritten command.
//! Every hook Codex ran must have succeeded.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::agents::agents_dir;
use crate::common::{TempAgent, succeeded};
use crate::hookrt;
use crate::standin::{StandIn, within};

/// The scripted calls, in order: (call id, command).
const CALLS: [(&str, &str); 2] = [
    ("call_hookrt_rm", "rm -rf build"),
    ("call_hookrt_touch", "touch made.txt"),
];

/// What the model "says" next, as the Responses API's stream: the first
/// scripted `exec_command` call the conversation does not hold yet, then a
/// final message (so a repeated request gets the same answer).
fn responses(request: &Value) -> (&'static str, String) {
    let conversation = request["input"].to_string();
    let offered = request["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == "exec_command"));
    let next = CALLS
        .iter()
        .find(|(id, _)| !conversation.contains(id))
        .filter(|_| offered);
    let item = match next {
        Some((id, command)) => json!({"type": "function_call", "id": format!("fc_{id}"),
            "call_id": id, "name": "exec_command",
            "arguments": json!({"cmd": command}).to_string()}),
        None => json!({"type": "message", "role": "assistant", "id": "msg_standin",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}),
    };
    let mut out = String::new();
    let mut event = |data: Value| {
        out.push_str(&format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap()
        ));
    };
    event(json!({"type": "response.created", "response": {"id": "resp_standin"}}));
    event(json!({"type": "response.output_item.added", "output_index": 0, "item": item}));
    if next.is_none() {
        event(
            json!({"type": "response.output_text.delta", "output_index": 0,
            "content_index": 0, "item_id": "msg_standin", "delta": "Done."}),
        );
    }
    event(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
    event(
        json!({"type": "response.completed", "response": {"id": "resp_standin",
        "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15}}}),
    );
    ("text/event-stream", out)
}

/// Single quotes for `sh`.
pub(crate) fn quoted(path: &Path) -> String {
    format!("'{}'", path.to_str().unwrap().replace('\'', r"'\''"))
}

/// The events hookrt is the hook of.
const EVENTS: [&str; 6] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
];

/// What one `codex exec` session did: its stderr, the requests the model
/// got, the work folder and the `CODEX_HOME` it ran with.
pub(crate) struct Session {
    stderr: String,
    requests: Vec<Value>,
    work: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Session {
    /// The `CODEX_HOME` the session ran with.
    pub(crate) fn codex_home(&self) -> std::path::PathBuf {
        self.home.path().join("codex")
    }

    /// `hookrt ARGS` as the session's hooks ran: its work folder (the
    /// project) and its user's service folders; what it printed.
    fn hookrt_as_its_hooks(&self, args: &[&str]) -> std::process::Output {
        hookrt(args)
            .current_dir(self.work.path())
            .env("XDG_RUNTIME_DIR", self.home.path().join("run"))
            .env("HOOKRT_STATE_DIR", self.home.path().join("state"))
            .output()
            .unwrap()
    }
}

/// How hookrt is Codex's hook in a session.
pub(crate) enum Hooked<'a> {
    /// `hookrt hook --agent codex FOLDER` in `$CODEX_HOME/hooks.json`.
    Settings(&'a Path),
    /// A plugin installed from a local marketplace: `codex plugin
    /// marketplace add ROOT`, then `codex plugin add ID`.
    Plugin { marketplace: &'a Path, id: &'a str },
    /// `hookrt-hook --agent codex FOLDER`, the thin client: the resident
    /// service (the other sessions set `HOOKRT_NO_SERVICE`).
    Service(&'a Path),
}

/// The `codex` binary of the pinned package.
fn codex_bin() -> std::path::PathBuf {
    let codex = agents_dir()
        .join("node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex");
    assert!(codex.is_file(), "no codex binary at {}", codex.display());
    codex
}

/// Runs a whole session in a fresh work folder holding `build/`, with
/// hookrt as the hook of every event as `hooked` says.
pub(crate) fn session(hooked: &Hooked) -> Session {
    let model = StandIn::start("/v1/responses", responses);
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("build")).unwrap();
    let codex_home = home.path().join("codex");
    std::fs::create_dir(&codex_home).unwrap();
    // The user's folders for a resident service (`Hooked::Service`).
    let run = home.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"gpt-5-standin\"\n\
             model_provider = \"standin\"\n\
             approval_policy = \"never\"\n\
             sandbox_mode = \"danger-full-access\"\n\
             check_for_update_on_startup = false\n\
             [model_providers.standin]\n\
             name = \"standin\"\n\
             base_url = \"{}/v1\"\n\
             wire_api = \"responses\"\n\
             request_max_retries = 0\n\
             stream_max_retries = 0\n\
             supports_websockets = false\n\
             [analytics]\n\
             enabled = false\n\
             [features]\n\
             enable_request_compression = false\n",
            model.url
        ),
    )
    .unwrap();
    let env = hookrt(&[]);
    let no_service = if matches!(hooked, Hooked::Service(_)) {
        "0"
    } else {
        "1"
    };
    let codex = || {
        let mut c = Command::new(codex_bin());
        c.current_dir(work.path())
            .env_clear()
            .envs(env.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("CODEX_HOME", &codex_home)
            .env("OPENAI_API_KEY", "dummy")
            .env("XDG_RUNTIME_DIR", &run)
            .env("HOOKRT_STATE_DIR", home.path().join("state"))
            .env("HOOKRT_NO_SERVICE", no_service)
            .stdin(Stdio::null());
        c
    };
    match hooked {
        Hooked::Settings(agent) => write_hooks(&codex_home, agent, false),
        Hooked::Service(agent) => write_hooks(&codex_home, agent, true),
        Hooked::Plugin { marketplace, id } => {
            let root = marketplace.to_str().unwrap();
            for args in [
                &["plugin", "marketplace", "add", root][..],
                &["plugin", "add", id][..],
            ] {
                let out = codex().args(args).output().expect("codex runs");
                assert!(
                    out.status.success(),
                    "codex {args:?}: {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
    let child = codex()
        .args([
            "exec",
            "--dangerously-bypass-hook-trust",
            "--skip-git-repo-check",
            "--ephemeral",
            "--color",
            "never",
            "clean up, then make the file",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("codex runs");
    let out = within(child, Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "codex exec failed: {stderr}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    Session {
        stderr,
        requests: model.requests(),
        work,
        home,
    }
}

/// `$CODEX_HOME/hooks.json` with `hookrt hook --agent codex agent` (or,
/// `thin`, `hookrt-hook --agent codex agent`) as the hook of every event
/// of [`EVENTS`].
fn write_hooks(codex_home: &Path, agent: &Path, thin: bool) {
    let hookrt = crate::common::hookrt_bin();
    let program = match thin {
        true => quoted(&hookrt.with_file_name("hookrt-hook")),
        false => format!("{} hook", quoted(&hookrt)),
    };
    // Codex runs the command with `$SHELL -lc`.
    let command = format!("{program} --agent codex {}", quoted(agent));
    let entry = |matcher: Option<&str>| {
        let mut group = json!({"hooks": [{"type": "command", "command": command, "timeout": 30}]});
        if let Some(m) = matcher {
            group["matcher"] = m.into();
        }
        json!([group])
    };
    let hooks: serde_json::Map<String, Value> = EVENTS
        .iter()
        .map(|e| {
            let matcher = match *e {
                "SessionStart" => Some("startup|resume"),
                "PreToolUse" | "PermissionRequest" | "PostToolUse" => Some("*"),
                _ => None,
            };
            (e.to_string(), entry(matcher))
        })
        .collect();
    std::fs::write(
        codex_home.join("hooks.json"),
        json!({"hooks": hooks}).to_string(),
    )
    .unwrap();
}

/// The output the model got for call `id`, from the first request that
/// carries it.
fn output_of(s: &Session, id: &str) -> String {
    s.requests
        .iter()
        .flat_map(|r| r["input"].as_array().cloned().unwrap_or_default())
        .find(|i| i["type"] == "function_call_output" && i["call_id"] == id)
        .map(|i| match &i["output"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .unwrap_or_else(|| panic!("no output of {id} reached the model: {:?}", s.requests))
}

/// What every session must show: the delete denied and said why, the touch
/// run, every hook fired and succeeded.
pub(crate) fn check(s: &Session, what: &str) {
    let w = s.work.path();
    assert!(w.join("build").is_dir(), "{what}: rm -rf build was denied");
    assert!(
        w.join("made.txt").exists(),
        "{what}: the policy abstained on touch made.txt: it ran"
    );
    let denied = output_of(s, "call_hookrt_rm");
    assert!(
        denied.contains("Command blocked by PreToolUse hook")
            && denied.contains("recursive forced delete"),
        "{what}: the deny's reason reached the model: {denied}"
    );
    // `hook: Event` as a hook starts, `hook: Event Completed` (or Blocked,
    // Failed, Stopped) as it ends.
    let ends: Vec<(&str, &str)> = s
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("hook: "))
        .filter_map(|l| l.split_once(' '))
        .collect();
    let bad: Vec<_> = ends
        .iter()
        .filter(|(event, outcome)| {
            !(*outcome == "Completed" || (*event == "PreToolUse" && *outcome == "Blocked"))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: hook failures: {bad:?}\n{}",
        s.stderr
    );
    assert_eq!(
        ends.iter()
            .filter(|e| **e == ("PreToolUse", "Blocked"))
            .count(),
        1,
        "{what}: one call blocked\n{}",
        s.stderr
    );
    let fired: std::collections::BTreeSet<&str> = ends.iter().map(|(e, _)| *e).collect();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
    ] {
        assert!(
            fired.contains(event),
            "{what}: {event} fired: {fired:?}\n{}",
            s.stderr
        );
    }
    eprintln!("{what}: hooks ran and succeeded: {ends:?}");
}

#[test]
fn the_real_codex_is_gated_by_hookrt() {
    let started = Instant::now();
    let agent = TempAgent::new()
        .hook("agent/hooks/policy", "policy")
        .hook("agent/hooks/audit.rs", "audit.rs");
    succeeded(&mut hookrt(&["build", agent.path().to_str().unwrap()]));
    let plain = session(&Hooked::Settings(agent.path()));
    check(&plain, "policy");
    assert!(
        !plain.work.path().join("rewritten.txt").exists(),
        "no rewriter, no rewrite"
    );

    // A rewriter that appends ` rewritten.txt` to every shell command and
    // allows it: Codex runs `touch made.txt rewritten.txt` (the policy's
    // deny still wins over its allow of the delete).
    let rewriting = TempAgent::new()
        .hook("agent/hooks/policy", "policy")
        .hook("agent/hooks/audit.rs", "audit.rs")
        .hook("testing/hooks/rewriter.rs", "rewriter.rs")
        .config("[hooks.\"rewriter\"]\nconfig = { suffix = \" rewritten.txt\", allow = true }\n");
    succeeded(&mut hookrt(&["build", rewriting.path().to_str().unwrap()]));
    let rewritten = session(&Hooked::Settings(rewriting.path()));
    check(&rewritten, "rewriter");
    assert!(
        rewritten.work.path().join("rewritten.txt").exists(),
        "the rewritten command ran"
    );
    // The rewriter's context (what it saw) reached the model.
    let context = rewritten
        .requests
        .iter()
        .any(|r| r["input"].to_string().contains("saw `touch made.txt`"));
    assert!(
        context,
        "the rewriter's context reached the model: {:?}",
        rewritten.requests.last()
    );

    // Through the resident service: the first event starts it, and the
    // journal it keeps verifies and holds the denied delete.
    let served = session(&Hooked::Service(agent.path()));
    check(&served, "service");
    crate::claude_e2e::service_kept_the_deny(
        |args| served.hookrt_as_its_hooks(args),
        agent.path().to_str().unwrap(),
        "policy",
    );
    eprintln!("codex e2e took {:?}", started.elapsed());
}
