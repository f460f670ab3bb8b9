//! Hooks ported from the public corpus (`example-hooks/ported/claude-code`)
//! under the real Claude Code (`claude -p`, offline against the loopback
//! stand-in of the Messages API of `claude_e2e.rs`), holding the `exec`
//! grant with the pinned tools of `scripts/hook-tools`: prettier reformats
//! a file Claude Code wrote; a Stop gate runs a small fixture project's
//! tests and keeps the turn going until they pass, and the loop governor
//! still caps it when they never do. And the other grants: the `notify`
//! template's notification reaches a stand-in of the desktop notification
//! service on a private D-Bus; the ported ntfy notifier's push reaches a
//! loopback receiver with the host's secret in it and nowhere else; the
//! ported protect-secrets hook, asking the `read` grant, keeps Claude Code
//! from reading `.env`.

use serde_json::{Value, json};

use crate::claude_e2e::{Session, claude_session, reply};
use crate::common::{TempAgent, example, succeeded};
use crate::hookrt;
use crate::notify_bus::Bus;
use crate::receiver::receiver;

/// `example-hooks/ported/claude-code`'s hooks `slugs`, with their tables
/// (and the folder's `[defaults]` and `[governor]`) from its `hookrt.toml`,
/// locked.
fn ported(slugs: &[&str]) -> TempAgent {
    let folder = example("ported/claude-code");
    let toml = std::fs::read_to_string(folder.join("hookrt.toml")).unwrap();
    let mut keep = false;
    let mut config = String::new();
    for line in toml.lines() {
        if let Some(header) = line.strip_prefix('[') {
            keep = header.starts_with("defaults]")
                || header.starts_with("governor]")
                || slugs.iter().any(|s| {
                    header.starts_with(&format!("hooks.{s}]"))
                        || header.starts_with(&format!("hooks.{s}."))
                });
        }
        if keep {
            config.push_str(line);
            config.push('\n');
        }
    }
    let mut agent = TempAgent::new().config(&config);
    for slug in slugs {
        agent = agent.hook(
            &format!("ported/claude-code/hooks/{slug}.rs"),
            &format!("{slug}.rs"),
        );
    }
    let mut lock = hookrt(&["lock", agent.path().to_str().unwrap()]);
    lock.env("PATH", tools_path());
    succeeded(&mut lock);
    agent
}

/// `$PATH` with the pinned tools first (the exec tables name bare programs).
fn tools_path() -> String {
    let tools = crate::installed_by("hook-tools", "the ported hooks' pinned tools");
    let mut dirs = vec![tools.join("node_modules/.bin"), tools.join("py/bin")];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap().into_string().unwrap()
}

/// Marks the project folder's name, so the stand-in finds its path in what
/// Claude Code tells the model.
const PROJECT: &str = "hookrt-project-";

/// A project folder the stand-in can find.
pub(crate) fn project() -> tempfile::TempDir {
    tempfile::Builder::new().prefix(PROJECT).tempdir().unwrap()
}

/// The project folder Claude Code names to the model (its working
/// directory): the path around [`PROJECT`] in the request.
pub(crate) fn workdir(request: &Value) -> String {
    let text = request.to_string();
    let at = text
        .find(PROJECT)
        .expect("the request names the project folder");
    let path_char = |c: char| c.is_ascii_alphanumeric() || "/._-".contains(c);
    let start = text[..at]
        .rfind(|c: char| !path_char(c))
        .map_or(0, |i| i + 1);
    let name_end = text[at + PROJECT.len()..]
        .find(|c: char| !c.is_ascii_alphanumeric())
        .map_or(text.len(), |i| at + PROJECT.len() + i);
    text[start..name_end].to_owned()
}

/// The next scripted call of `steps` (id, tool, input) the conversation
/// does not hold yet, or "Done.".
pub(crate) fn next(request: &Value, steps: Vec<(&str, &str, Value)>) -> Vec<Value> {
    let conversation = request["messages"].to_string();
    match steps
        .into_iter()
        .find(|(id, _, _)| !conversation.contains(id))
    {
        Some((id, name, input)) => {
            vec![json!({"type": "tool_use", "id": id, "name": name, "input": input})]
        }
        None => vec![json!({"type": "text", "text": "Done."})],
    }
}

/// Writes `src/greet.ts` as a model would, unformatted.
fn write_unformatted(request: &Value) -> (&'static str, String) {
    if request["tools"].as_array().is_none_or(|t| t.is_empty()) {
        return reply(request, vec![json!({"type": "text", "text": "ok"})]);
    }
    let file = format!("{}/src/greet.ts", workdir(request));
    let content = "export function greet(name:string){return 'hi '+name}\n";
    let steps = vec![(
        "toolu_write_ts",
        "Write",
        json!({"file_path": file, "content": content}),
    )];
    reply(request, next(request, steps))
}

/// Every hook Claude Code ran succeeded.
pub(crate) fn all_hooks_succeeded(s: &Session) {
    let failed: Vec<String> = s
        .lines
        .iter()
        .filter(|l| {
            l["type"] == "system" && l["subtype"] == "hook_response" && l["outcome"] != "success"
        })
        .map(|r| r.to_string())
        .collect();
    assert!(failed.is_empty(), "hook errors: {failed:?}");
}

#[test]
fn prettier_pinned_from_npm_reformats_the_file_the_real_claude_code_wrote() {
    let agent = ported(&["prettier"]);
    let dir = agent.path().to_str().unwrap();
    let project = project();
    std::fs::create_dir(project.path().join("src")).unwrap();
    let path = tools_path();
    let s = claude_session(
        "write the greeting",
        write_unformatted,
        project,
        &[dir],
        &["Write"],
        &[("PATH", &path)],
    );
    all_hooks_succeeded(&s);
    assert_eq!(
        std::fs::read_to_string(s.project.path().join("src/greet.ts")).unwrap(),
        "export function greet(name: string) {\n  return \"hi \" + name;\n}\n"
    );
}

/// Marks the session whose model never fixes the code.
const NEVER_FIX: &str = "NEVER-FIX";

/// Says it is done; told the tests fail, reads `sum.js` and fixes it
/// (unless the prompt holds [`NEVER_FIX`]).
fn fix_when_told(request: &Value) -> (&'static str, String) {
    if request["tools"].as_array().is_none_or(|t| t.is_empty()) {
        return reply(request, vec![json!({"type": "text", "text": "ok"})]);
    }
    let conversation = request["messages"].to_string();
    if conversation.contains(NEVER_FIX) || !conversation.contains("Stop hook feedback") {
        return reply(request, vec![json!({"type": "text", "text": "Done."})]);
    }
    let file = format!("{}/sum.js", workdir(request));
    let fixed = "exports.sum = (a, b) => a + b;\n";
    let steps = vec![
        ("toolu_read_sum", "Read", json!({"file_path": file})),
        (
            "toolu_fix_sum",
            "Write",
            json!({"file_path": file, "content": fixed}),
        ),
    ];
    reply(request, next(request, steps))
}

/// A project whose test fails until `sum.js` adds.
fn failing_project() -> tempfile::TempDir {
    let project = project();
    let p = project.path();
    std::fs::write(p.join("sum.js"), "exports.sum = (a, b) => a - b;\n").unwrap();
    std::fs::write(
        p.join("sum.test.js"),
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst { sum } = require('./sum');\ntest('sum adds', () => assert.strictEqual(sum(2, 3), 5));\n",
    )
    .unwrap();
    project
}

/// How many times the model was told to keep going by the Stop gate.
fn continues(s: &Session) -> usize {
    let last = s
        .requests
        .iter()
        .rev()
        .find(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()));
    last.map_or(0, |r| {
        r["messages"]
            .to_string()
            .matches("Stop hook feedback:\\nThe project's tests fail")
            .count()
    })
}

#[test]
fn a_stop_gate_keeps_the_real_claude_code_going_until_the_tests_pass_under_the_governors_cap() {
    let agent = ported(&["tests_at_stop"]);
    let dir = agent.path().to_str().unwrap();
    let path = tools_path();
    let env = [("PATH", path.as_str())];
    let s = claude_session(
        "make the tests pass",
        fix_when_told,
        failing_project(),
        &[dir],
        &["Read", "Write"],
        &env,
    );
    all_hooks_succeeded(&s);
    assert_eq!(
        std::fs::read_to_string(s.project.path().join("sum.js")).unwrap(),
        "exports.sum = (a, b) => a + b;\n",
        "the model fixed the code once told the tests failed"
    );
    assert_eq!(continues(&s), 1, "kept going once, then the tests passed");
    // A model that never fixes it: kept going max_continues (3) times.
    let s = claude_session(
        NEVER_FIX,
        fix_when_told,
        failing_project(),
        &[dir],
        &["Read", "Write"],
        &env,
    );
    all_hooks_succeeded(&s);
    assert_eq!(continues(&s), 3, "capped by [governor] max_continues = 3");
    assert_eq!(
        std::fs::read_to_string(s.project.path().join("sum.js")).unwrap(),
        "exports.sum = (a, b) => a - b;\n"
    );
}

/// Answers whatever Claude Code asks with "Done.": a turn that ends at once.
fn done(request: &Value) -> (&'static str, String) {
    reply(request, vec![json!({"type": "text", "text": "Done."})])
}

#[test]
fn the_notify_templates_notification_reaches_the_desktop_notifier_when_the_real_claude_code_stops()
{
    let bus = Bus::with_notifier(false);
    let agent = tempfile::tempdir().unwrap();
    let hook = agent.path().join("hooks/desk-notify");
    succeeded(&mut hookrt(&[
        "new",
        hook.to_str().unwrap(),
        "--template",
        "notify",
    ]));
    let dir = agent.path().to_str().unwrap();
    let env = [("DBUS_SESSION_BUS_ADDRESS", bus.address.as_str())];
    let s = claude_session("say done", done, project(), &[dir], &["Read"], &env);
    all_hooks_succeeded(&s);
    let shown = bus.received();
    assert_eq!(shown.len(), 1, "one turn, one notification: {shown:?}");
    let n = &shown[0];
    assert_eq!(
        (n.app_name.as_str(), n.summary.as_str(), n.body.as_str()),
        ("hookrt", "claude-code: turn complete", "Turn complete")
    );
    assert_eq!(
        (n.urgency, n.hook.as_deref()),
        (Some(0), Some("desk-notify"))
    );
}

/// The ntfy token every run here sends.
const NTFY_TOKEN: &str = "tk_e2e_9c41d07b2a6f";

fn accepted(_head: &str) -> String {
    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}".to_owned()
}

#[test]
fn the_ported_ntfy_notifier_pushes_with_the_hosts_secret_and_the_secret_is_nowhere_else() {
    let (origin, pushes) = receiver(accepted);
    let secrets = tempfile::tempdir().unwrap();
    let token = secrets.path().join("ntfy-token");
    std::fs::write(&token, NTFY_TOKEN).unwrap();
    std::fs::set_permissions(&token, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let config = format!(
        "[hooks.\"ntfy_notifier\"]\ndeadline_ms = 10_000\nconfig = {{ url = \"{origin}/claude-alerts\" }}\n\
         [hooks.\"ntfy_notifier\".grants]\nlog = {{}}\nstate = {{}}\n\
         [hooks.\"ntfy_notifier\".grants.secret.secrets.ntfy]\nfile = \"{}\"\n\
         origins = [\"{origin}\"]\nheader = \"Authorization\"\nprefix = \"Bearer \"\n",
        token.display()
    );
    let agent = TempAgent::new()
        .config(&config)
        .hook("grants/hooks/ntfy_notifier.rs", "ntfy_notifier.rs");
    let dir = agent.path().to_str().unwrap();
    succeeded(&mut hookrt(&["lock", dir]));
    let project = project();
    std::fs::create_dir(project.path().join("src")).unwrap();
    let s = claude_session(
        "write the greeting",
        write_unformatted,
        project,
        &[dir],
        &["Write"],
        &[],
    );
    all_hooks_succeeded(&s);
    let got: Vec<String> = pushes.try_iter().collect();
    let first = got.first().expect("a push reached the receiver");
    assert!(
        first.starts_with("POST /claude-alerts HTTP/1.1\r\n"),
        "{first}"
    );
    assert!(
        first.contains(&format!("authorization: Bearer {NTFY_TOKEN}\r\n")),
        "{first}"
    );
    assert!(
        first.ends_with("/src/greet.ts"),
        "the Write's push comes first: {first}"
    );
    // The 2 s rate limit of the original holds the Stop's push back when the
    // turn ends within it; each push that went carries the token.
    assert!(got.iter().all(|p| p.contains(NTFY_TOKEN)), "{got:?}");
    let seen = format!("{:?}{:?}", s.lines, s.requests);
    assert!(
        !seen.contains(NTFY_TOKEN),
        "the token reached Claude Code or the model"
    );
    let lock = std::fs::read_to_string(agent.path().join("hookrt.lock")).unwrap();
    assert!(!lock.contains(NTFY_TOKEN), "{lock}");
}

/// What `.env` holds in the protect-secrets run.
const DOTENV: &str = "STRIPE_KEY=sk_live_e2e_51HxQ8c\n";

/// Reads `.env`, then says it is done.
fn read_dotenv(request: &Value) -> (&'static str, String) {
    if request["tools"].as_array().is_none_or(|t| t.is_empty()) {
        return reply(request, vec![json!({"type": "text", "text": "ok"})]);
    }
    let file = format!("{}/.env", workdir(request));
    let steps = vec![("toolu_read_env", "Read", json!({"file_path": file}))];
    reply(request, next(request, steps))
}

#[test]
fn protect_secrets_asking_the_read_grant_keeps_the_real_claude_code_from_reading_dotenv() {
    let agent = TempAgent::new()
        .config("[hooks.\"protect_secrets\".grants]\nlog = {}\nread = {}\n")
        .hook("grants/hooks/protect_secrets.rs", "protect_secrets.rs");
    let dir = agent.path().to_str().unwrap();
    let project = project();
    std::fs::write(project.path().join(".env"), DOTENV).unwrap();
    let s = claude_session(
        "show me the env",
        read_dotenv,
        project,
        &[dir],
        &["Read"],
        &[],
    );
    all_hooks_succeeded(&s);
    let told = s.requests.last().expect("the model was asked").to_string();
    assert!(
        told.contains("protect-secrets: `.env` is off limits"),
        "the denial reached the model: {told}"
    );
    let seen = format!("{:?}{:?}", s.lines, s.requests);
    assert!(
        !seen.contains("sk_live_e2e_51HxQ8c"),
        "the secret reached Claude Code or the model"
    );
}
