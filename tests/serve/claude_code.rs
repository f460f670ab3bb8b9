//! `POST /v1/claude-code`: Claude Code's `http` hook answered by `hookrt
//! serve` exactly as `hookrt claude-hook` answers the same input on stdin,
//! for every event of the pinned Claude Code; and a gate that fails closed
//! on every refusal (Claude Code reads only a 2xx body: an error status
//! would let the call run).

use serde_json::{Value, json};

use crate::common::{TempAgent, claude_fixture, succeeded, with_stdin};
use crate::{Server, TOKEN, agent, hookrt, request};

fn input(event: &str) -> Value {
    serde_json::from_str(&claude_fixture(event)).unwrap()
}

/// What `hookrt claude-hook` prints for `input` (`{}` for nothing), after
/// its exit code.
fn command_answer(dir: &str, input: &Value) -> (Option<i32>, Value) {
    let out = with_stdin(hookrt(&["claude-hook", dir]), &input.to_string());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer = if stdout.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(stdout.trim()).unwrap()
    };
    (out.status.code(), answer)
}

#[test]
fn the_route_answers_every_claude_code_event_as_the_command_hook_does() {
    let dir = agent();
    let dir_text = dir.to_str().unwrap();
    succeeded(&mut hookrt(&["build", dir_text]));
    let server = Server::start(&dir, &[]);
    let mut rm = input("PreToolUse");
    rm["tool_input"]["command"] = "rm -rf / --no-preserve-root".into();
    let mut skill = input("PreSkillShellCommand");
    skill["tool_input"]["command"] = "rm -rf build/".into();
    let mut newer = input("Notification");
    newer["hook_event_name"] = "PreWidgetRender".into();
    let inputs: Vec<(String, Value)> = hookrt::front::bridge::Bridge::named("claude-code")
        .unwrap()
        .events()
        .iter()
        .map(|(e, _)| (e.to_string(), input(e)))
        .chain([
            ("PreToolUse rm -rf".to_owned(), rm),
            ("PreSkillShellCommand rm -rf".to_owned(), skill),
            ("an event of a newer Claude Code".to_owned(), newer),
        ])
        .collect();
    let mut denied = 0;
    for (what, body) in &inputs {
        let reply = server.post(
            "/v1/claude-code",
            "application/json",
            body.to_string().as_bytes(),
        );
        assert_eq!(reply.status, 200, "{what}: {}", reply.body);
        let (code, by_command) = command_answer(dir_text, body);
        assert_eq!(code, Some(0), "{what}");
        assert_eq!(
            reply.json(),
            by_command,
            "{what}: the same answer both ways"
        );
        if reply.json()["hookSpecificOutput"]["permissionDecision"] == "deny" {
            denied += 1;
        }
    }
    assert_eq!(denied, 2, "both rm -rf gates denied");
}

#[test]
fn a_gate_fails_closed_on_every_refusal_and_other_events_get_their_error() {
    // A policy that works past any budget: only the route's budget ends it.
    let slow = TempAgent::new()
        .hook("testing/hooks/busy_policy.rs", "busy_policy.rs")
        .file(
            "hookrt.toml",
            "[hooks.busy_policy]\nmetering = \"epoch\"\ndeadline_ms = 20000\nconfig = { rounds = 1000000000000 }\n",
        );
    let server = Server::start(slow.path(), &["--decide-timeout-ms", "30000"]);
    let gate = input("PreToolUse").to_string();
    let deny = |reply: &crate::Reply, why: &str| {
        assert_eq!(reply.status, 200, "{}", reply.body);
        let out = &reply.json()["hookSpecificOutput"];
        assert_eq!(out["hookEventName"], "PreToolUse", "{}", reply.body);
        assert_eq!(out["permissionDecision"], "deny", "{}", reply.body);
        let reason = out["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains(why), "{reason}");
    };

    // Past the budget: a deny at the budget, not silence.
    let started = std::time::Instant::now();
    let reply = server.post(
        "/v1/claude-code?budget_ms=300",
        "application/json",
        gate.as_bytes(),
    );
    deny(&reply, "did not decide within the budget (300 ms)");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));

    // A wrong token: the entry's URL names the gate, so the refusal denies.
    let headers = [
        ("Authorization", "Bearer not-the-token-0123456789"),
        ("Content-Type", "application/json"),
    ];
    let reply = request(
        &server.addr,
        "POST",
        "/v1/claude-code?event=PreToolUse",
        &headers,
        gate.as_bytes(),
    );
    deny(&reply, "token");
    // Without it, an error status: Claude Code shows a non-blocking error.
    let notify = input("Notification").to_string();
    let reply = request(
        &server.addr,
        "POST",
        "/v1/claude-code",
        &headers,
        notify.as_bytes(),
    );
    assert_eq!(reply.status, 401, "{}", reply.body);

    // A broken gate input denies; a broken other one is a 400.
    let reply = server.post(
        "/v1/claude-code",
        "application/json",
        br#"{"hook_event_name":"PreToolUse","session_id":"s""#,
    );
    deny(&reply, "not JSON");
    let reply = server.post(
        "/v1/claude-code",
        "application/json",
        br#"{"hook_event_name":"PostToolUse","session_id":"s"}"#,
    );
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(reply.json()["code"], "malformed_input");

    // A token bound to another agent may not send this one's gate.
    drop(server);
    let tokens = format!("{TOKEN} agent=someone-else\n");
    let server = Server::with_tokens(slow.path(), &tokens, &[]);
    let reply = server.post("/v1/claude-code", "application/json", gate.as_bytes());
    deny(&reply, "claude-code");
    // An observed event is taken and answered with nothing to say.
    let server = Server::start(slow.path(), &[]);
    let reply = server.post("/v1/claude-code", "application/json", notify.as_bytes());
    assert_eq!((reply.status, reply.json()), (200, json!({})));
}

/// `scripts/claude-code`: the pinned Claude Code package and TypeScript,
/// installed once; its folder.
pub(crate) fn claude_code_dir() -> std::path::PathBuf {
    crate::installed_by("claude-code", "Claude Code's package")
}

#[test]
fn every_answer_type_checks_as_claude_codes_own_hook_output() {
    let dir = agent();
    succeeded(&mut hookrt(&["build", dir.to_str().unwrap()]));
    let server = Server::start(&dir, &["--decide-timeout-ms", "30000"]);
    let mut answers: Vec<(String, Value)> = Vec::new();
    let mut post = |what: &str, path: &str, body: &Value| {
        let reply = server.post(path, "application/json", body.to_string().as_bytes());
        assert_eq!(reply.status, 200, "{what}: {}", reply.body);
        answers.push((what.to_owned(), reply.json()));
    };
    for (event, _) in hookrt::front::bridge::Bridge::named("claude-code")
        .unwrap()
        .events()
    {
        post(event, "/v1/claude-code", &input(event));
    }
    // Every decision a gate can get: deny, ask, hookrt's own refusal, and
    // allow (built from a resolution: no example hook allows).
    for (what, event, command, tool) in [
        ("deny", "PreToolUse", "rm -rf /", "Bash"),
        ("ask", "PreToolUse", "", "WebFetch"),
        (
            "deny a skill's command",
            "PreSkillShellCommand",
            "rm -rf /",
            "Bash",
        ),
    ] {
        let mut i = input(event);
        i["tool_name"] = tool.into();
        i["tool_input"]["command"] = command.into();
        post(what, "/v1/claude-code", &i);
    }
    post(
        "refused: a broken gate input",
        "/v1/claude-code?event=PreSkillShellCommand",
        &json!({"hook_event_name": "PreSkillShellCommand", "session_id": "s"}),
    );
    let allow = hookrt::front::bridge::Bridge::named("claude-code")
        .unwrap()
        .answer(
            "PreToolUse",
            Some(&hookrt::Resolution::ToolApproval(hookrt::ToolApproval {
                calls: vec![hookrt::CallDecision {
                    call_id: "c".into(),
                    tool: "Bash".into(),
                    verdict: hookrt::Approval::Allow,
                    decided_by: Some("allow_all".into()),
                    failure: false,
                    answers: Vec::new(),
                    rewrites: Vec::new(),
                    input: None,
                }],
                context: Vec::new(),
            })),
        )
        .unwrap();
    answers.push(("allow".into(), allow));
    let decisions: Vec<&Value> = answers
        .iter()
        .map(|(_, a)| &a["hookSpecificOutput"]["permissionDecision"])
        .filter(|d| !d.is_null())
        .collect();
    assert_eq!(
        decisions.len(),
        5,
        "deny, ask, a skill's deny, a refusal, allow: {answers:?}"
    );
    drop(server);

    // The answers beyond allow / deny / ask, from hooks that give them: a
    // rewrite (allowed), context on every event that takes it, a blocked
    // prompt, compaction, task and config change, a continued stop, a
    // denied permission request.
    let answering = answering_agent();
    succeeded(&mut hookrt(&["build", answering.path().to_str().unwrap()]));
    let server = Server::start(answering.path(), &["--decide-timeout-ms", "30000"]);
    for (event, _) in hookrt::front::bridge::Bridge::named("claude-code")
        .unwrap()
        .events()
    {
        let reply = server.post(
            "/v1/claude-code",
            "application/json",
            input(event).to_string().as_bytes(),
        );
        assert_eq!(reply.status, 200, "{event}: {}", reply.body);
        answers.push((format!("{event}, answered"), reply.json()));
    }
    // hookrt's own refusal of every gate, and what no example hook gives: a
    // permission allowed with a rewritten input, a continue the governor capped.
    for gate in hookrt::front::bridge::Bridge::named("claude-code")
        .unwrap()
        .gates()
    {
        answers.push((
            format!("{gate}, refused"),
            hookrt::front::bridge::Bridge::named("claude-code")
                .unwrap()
                .refusal(gate, "the test says so"),
        ));
    }
    let built = |name: &str, r: hookrt::Resolution| {
        (
            format!("{name}, built"),
            hookrt::front::bridge::Bridge::named("claude-code")
                .unwrap()
                .answer(name, Some(&r))
                .unwrap(),
        )
    };
    answers.push(built(
        "PermissionRequest",
        hookrt::Resolution::Permission(hookrt::PermissionDecision {
            verdict: hookrt::event::Permission::Allow { rewrite: None },
            decided_by: Some("p".into()),
            failure: false,
            answers: Vec::new(),
            rewrites: Vec::new(),
            input: Some(json!({"command": "git push --dry-run"})),
            context: Vec::new(),
        }),
    ));
    answers.push(built(
        "Stop",
        hookrt::Resolution::Gate(hookrt::GateDecision {
            verdict: hookrt::event::Gate::Pass,
            decided_by: None,
            failure: false,
            capped: true,
            answers: Vec::new(),
            context: Vec::new(),
        }),
    ));
    let has = |path: &[&str], value: Option<&str>| {
        answers.iter().any(|(_, a)| {
            let v = path.iter().fold(a, |v, k| &v[*k]);
            !v.is_null() && value.is_none_or(|want| v == want)
        })
    };
    for (path, value) in [
        (&["hookSpecificOutput", "updatedInput"][..], None),
        (&["hookSpecificOutput", "additionalContext"][..], None),
        (&["decision"][..], Some("block")),
        (
            &["hookSpecificOutput", "decision", "behavior"][..],
            Some("deny"),
        ),
        (
            &["hookSpecificOutput", "decision", "behavior"][..],
            Some("allow"),
        ),
        (
            &["hookSpecificOutput", "decision", "updatedInput"][..],
            None,
        ),
        (&["systemMessage"][..], None),
    ] {
        assert!(
            has(path, value),
            "an answer with {path:?} = {value:?}: {answers:?}"
        );
    }

    let mut ts = String::from(
        "import type { SyncHookJSONOutput } from \"@anthropic-ai/claude-agent-sdk\";\n\nexport const answers: SyncHookJSONOutput[] = [\n",
    );
    for (what, answer) in &answers {
        ts.push_str(&format!("  // {what}\n  {answer},\n"));
    }
    ts.push_str("];\n");
    if let Err(said) = type_check(&ts) {
        panic!("an answer is not a SyncHookJSONOutput:\n{said}\n{ts}");
    }
    // The check can fail: a field Claude Code does not know is refused.
    let wrong = ts.replace("\"permissionDecision\"", "\"permission_decision\"");
    assert!(type_check(&wrong).is_err(), "tsc took a misspelt field");
}

/// The example policy, a rewriter that allows, and a gatekeeper that adds
/// context everywhere, blocks the fixtures' prompt, keeps every turn going
/// and denies `Bash`'s permission requests.
pub(crate) fn answering_agent() -> TempAgent {
    TempAgent::new()
        .hook("agent/hooks/policy", "policy")
        .hook("testing/hooks/rewriter.rs", "rewriter.rs")
        .hook("testing/hooks/gatekeeper.rs", "gatekeeper.rs")
        .config(
            "[hooks.\"rewriter\"]\nconfig = { suffix = \" --dry-run\", allow = true }\n\
             [hooks.\"gatekeeper\"]\nconfig = { context = \"from hookrt\", block_word = \"factorial\", keep_going = \"go on\", deny_tool = \"Bash\" }\n",
        )
}

/// `tsc --strict` on the TypeScript `ts`, in a folder under the pinned
/// package's (so its imports resolve); what it said, when it fails.
pub(crate) fn type_check(ts: &str) -> Result<(), String> {
    let claude = claude_code_dir();
    let checks = tempfile::Builder::new()
        .prefix("checks-")
        .tempdir_in(&claude)
        .unwrap();
    let file = checks.path().join("checks.ts");
    std::fs::write(&file, ts).unwrap();
    let out = tsc(&claude, &file);
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// `tsc --strict` on `file`, against the packages installed in `claude`.
pub(crate) fn tsc(claude: &std::path::Path, file: &std::path::Path) -> std::process::Output {
    std::process::Command::new("node")
        .arg(claude.join("node_modules/typescript/bin/tsc"))
        .args([
            "--strict",
            "--noEmit",
            "--skipLibCheck",
            "--target",
            "es2022",
        ])
        .args(["--module", "nodenext", "--moduleResolution", "nodenext"])
        .arg(file)
        .current_dir(claude)
        .output()
        .expect("node runs tsc")
}
