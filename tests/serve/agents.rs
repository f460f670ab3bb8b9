//! Every answer hookrt gives Codex, Gemini CLI, Cursor, Copilot CLI, goose and Antigravity CLI,
//! checked against the agent's own published artifacts: Codex's JSON
//! Schemas (as its pinned binary embeds them; validated with Ajv), Gemini
//! CLI's `types.d.ts` (`@google/gemini-cli-core`) and Copilot CLI's SDK
//! `types.d.ts` (checked with `tsc --strict`), and for Cursor, Antigravity
//! CLI and goose, which publish none, types written after their docs or
//! source (`tests/agents/cursor-hooks.d.ts`, `antigravity-hooks.d.ts`,
//! `goose-hooks.d.ts`).
//!
//! The answers: each event's fixture through `hookrt hook --agent NAME`
//! with the example agent (its policy denies `rm -rf`, asks before network
//! tools) and with hooks that rewrite, add context, block prompts, keep
//! turns going and answer permission requests; answers built from the
//! resolutions no example hook gives (allow, a capped continue, a rewritten
//! permission); and hookrt's refusal of every gate.

use std::path::{Path, PathBuf};

use hookrt::front::bridge::Bridge;
use hookrt::front::bridge::protocol::Shape;
use serde_json::{Value, json};

use crate::claude_code::{answering_agent, tsc};
use crate::common::{bridge_fixture, repo, succeeded, with_stdin};
use crate::{agent, hookrt};

/// `scripts/agents`: the pinned agents, Ajv and TypeScript, installed once;
/// its folder.
pub(crate) fn agents_dir() -> PathBuf {
    crate::installed_by("agents", "the pinned agents' packages")
}

/// The registered agent named `name`.
fn bridge(name: &str) -> Bridge {
    Bridge::named(name).expect("a registered agent")
}

/// The fixture of `bridge`'s `event`, with a prompt the gatekeeper blocks.
fn input(bridge: Bridge, event: &str) -> Value {
    let mut input: Value = serde_json::from_str(&bridge_fixture(bridge, event)).unwrap();
    if input.get("prompt").is_some_and(Value::is_string) {
        input["prompt"] = "write a factorial in Rust".into();
    }
    input
}

/// The tool call of `bridge` the policy denies (`rm -rf`) and the one it
/// asks about (a network tool): event and input.
fn calls(bridge: Bridge) -> Vec<(&'static str, &'static str, Value)> {
    let set = |event: &str, path: &[&str], value: &str| {
        let mut i = input(bridge, event);
        let mut at = &mut i;
        for key in &path[..path.len() - 1] {
            at = &mut at[*key];
        }
        at[path[path.len() - 1]] = value.into();
        i
    };
    match bridge.name() {
        "codex" => vec![
            (
                "deny",
                "PreToolUse",
                set("PreToolUse", &["tool_input", "command"], "rm -rf /"),
            ),
            (
                "ask",
                "PreToolUse",
                set("PreToolUse", &["tool_name"], "WebFetch"),
            ),
        ],
        "gemini" => vec![
            (
                "deny",
                "BeforeTool",
                set("BeforeTool", &["tool_input", "command"], "rm -rf /"),
            ),
            (
                "ask",
                "BeforeTool",
                set("BeforeTool", &["tool_name"], "web_fetch"),
            ),
        ],
        "cursor" => vec![
            (
                "deny",
                "beforeShellExecution",
                set("beforeShellExecution", &["command"], "rm -rf /"),
            ),
            (
                "deny",
                "preToolUse",
                set("preToolUse", &["tool_input", "command"], "rm -rf /"),
            ),
            (
                "ask",
                "preToolUse",
                set("preToolUse", &["tool_name"], "WebFetch"),
            ),
        ],
        "copilot" => vec![
            (
                "deny",
                "preToolUse",
                set("preToolUse", &["toolArgs", "command"], "rm -rf /"),
            ),
            (
                "ask",
                "preToolUse",
                set("preToolUse", &["toolName"], "web_fetch"),
            ),
        ],
        "opencode" | "kilo" => vec![
            (
                "deny",
                "tool.execute.before",
                set("tool.execute.before", &["args", "command"], "rm -rf /"),
            ),
            (
                "ask",
                "tool.execute.before",
                set("tool.execute.before", &["tool"], "webfetch"),
            ),
        ],
        "openhands" => vec![
            (
                "deny",
                "PreToolUse",
                set("PreToolUse", &["tool_input", "command"], "rm -rf /"),
            ),
            (
                "ask",
                "PreToolUse",
                set("PreToolUse", &["tool_name"], "webfetch"),
            ),
        ],
        "cline" => vec![
            ("deny", "PreToolUse", {
                let mut i = input(bridge, "PreToolUse");
                i["tool_call"]["input"] = json!({"commands": ["rm -rf /"]});
                i
            }),
            (
                "ask",
                "PreToolUse",
                set("PreToolUse", &["tool_call", "name"], "web_search"),
            ),
        ],
        "goose" => vec![
            (
                "deny",
                "PreToolUse",
                set("PreToolUse", &["tool_input", "command"], "rm -rf /"),
            ),
            (
                "ask",
                "PreToolUse",
                set("PreToolUse", &["tool_name"], "web_fetch"),
            ),
        ],
        "antigravity" => vec![
            (
                "deny",
                "PreToolUse",
                set(
                    "PreToolUse",
                    &["toolCall", "args", "CommandLine"],
                    "rm -rf /",
                ),
            ),
            (
                "ask",
                "PreToolUse",
                set("PreToolUse", &["toolCall", "name"], "web_search"),
            ),
        ],
        "claude-code" => unreachable!("claude_code.rs checks Claude Code's answers"),
        other => unreachable!("no tool calls written for {other}"),
    }
}

/// One answer: the event it answers, what it is, the JSON.
struct Answer {
    event: String,
    what: String,
    json: Value,
}

/// What `hookrt hook --agent` prints for `input` on `event` (`None` for
/// nothing), after checking it exits 0.
fn command_answer(bridge: Bridge, dir: &Path, event: &str, input: &Value) -> Option<Value> {
    hook_answer(bridge, dir, event, input, &[])
}

/// [`command_answer`] with `extra` arguments (`--http URL`), the test
/// token in `$HOOKRT_TOKEN` for a forward.
pub(crate) fn hook_answer(
    bridge: Bridge,
    dir: &Path,
    event: &str,
    input: &Value,
    extra: &[&str],
) -> Option<Value> {
    let mut args = vec![
        "hook",
        "--agent",
        bridge.name(),
        "--event",
        event,
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let mut command = hookrt(&args);
    command.env("HOOKRT_TOKEN", crate::TOKEN);
    let out = with_stdin(command, &input.to_string());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{} {event}: {}",
        bridge.name(),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stdout = stdout.trim();
    (!stdout.is_empty()).then(|| {
        serde_json::from_str(stdout)
            .unwrap_or_else(|e| panic!("{} {event}: {e}: {stdout}", bridge.name()))
    })
}

/// A resolution no example hook gives, for [`Bridge::answer`].
fn call(verdict: hookrt::Approval, input: Option<Value>) -> hookrt::Resolution {
    hookrt::Resolution::ToolApproval(hookrt::ToolApproval {
        calls: vec![hookrt::CallDecision {
            call_id: "c".into(),
            tool: "bash".into(),
            verdict,
            decided_by: Some("p".into()),
            failure: false,
            answers: Vec::new(),
            rewrites: Vec::new(),
            input,
        }],
        context: Vec::new(),
    })
}

fn permission(verdict: hookrt::event::Permission, input: Option<Value>) -> hookrt::Resolution {
    hookrt::Resolution::Permission(hookrt::PermissionDecision {
        verdict,
        decided_by: Some("p".into()),
        failure: false,
        answers: Vec::new(),
        rewrites: Vec::new(),
        input,
        context: Vec::new(),
    })
}

fn capped() -> hookrt::Resolution {
    hookrt::Resolution::Gate(hookrt::GateDecision {
        verdict: hookrt::event::Gate::Pass,
        decided_by: None,
        failure: false,
        capped: true,
        answers: Vec::new(),
        context: Vec::new(),
    })
}

/// Every answer hookrt gives `bridge`, from both agent folders (built).
fn answers(bridge: Bridge, example: &Path, answering: &Path) -> Vec<Answer> {
    let mut out = Vec::new();
    let mut push = |event: &str, what: String, json: Option<Value>| {
        if let Some(json) = json {
            out.push(Answer {
                event: event.to_owned(),
                what,
                json,
            });
        }
    };
    for (dir, which) in [(example, "example"), (answering, "answering")] {
        for (event, _) in bridge.events() {
            let answer = command_answer(bridge, dir, event, &input(bridge, event));
            push(event, format!("{event} ({which})"), answer);
        }
    }
    for (what, event, input) in calls(bridge) {
        let answer = command_answer(bridge, example, event, &input);
        assert!(
            answer.is_some(),
            "{} {event}: the policy's {what}",
            bridge.name()
        );
        push(event, format!("{event} ({what})"), answer);
    }
    let tool = bridge
        .events()
        .iter()
        .find(|(_, k)| *k == "actions.requested")
        .unwrap()
        .0;
    let rewritten = json!({"command": "ls --dry-run"});
    for (what, resolution) in [
        ("allow", call(hookrt::Approval::Allow, None)),
        ("ask", call(hookrt::Approval::Ask("may I?".into()), None)),
        (
            "rewrite",
            call(hookrt::Approval::Abstain, Some(rewritten.clone())),
        ),
    ] {
        push(
            tool,
            format!("{tool} ({what}, built)"),
            bridge.answer(tool, Some(&resolution)),
        );
    }
    for (event, kind) in bridge.events() {
        let built = match *kind {
            "turn.stopping" => vec![("capped", capped())],
            "permission.requested" => vec![
                (
                    "allow",
                    permission(hookrt::event::Permission::Allow { rewrite: None }, None),
                ),
                (
                    "allow rewritten",
                    permission(
                        hookrt::event::Permission::Allow { rewrite: None },
                        Some(rewritten.clone()),
                    ),
                ),
                (
                    "deny",
                    permission(
                        hookrt::event::Permission::Deny {
                            message: "no".into(),
                            interrupt: true,
                        },
                        None,
                    ),
                ),
            ],
            _ => Vec::new(),
        };
        for (what, resolution) in built {
            push(
                event,
                format!("{event} ({what}, built)"),
                bridge.answer(event, Some(&resolution)),
            );
        }
    }
    for gate in bridge.gates() {
        push(
            gate,
            format!("{gate} (refused)"),
            Some(bridge.refusal(gate, "the test says so")),
        );
    }
    out
}

/// Whether some answer has a value at `path` (equal to `value` if given).
fn has(answers: &[Answer], path: &[&str], value: Option<&str>) -> bool {
    answers.iter().any(|a| {
        let v = path.iter().fold(&a.json, |v, k| &v[*k]);
        !v.is_null() && value.is_none_or(|want| v == want)
    })
}

fn assert_has(bridge: Bridge, answers: &[Answer], wanted: &[(&[&str], Option<&str>)]) {
    for (path, value) in wanted {
        assert!(
            has(answers, path, *value),
            "{}: no answer with {path:?} = {value:?}: {:#?}",
            bridge.name(),
            answers
                .iter()
                .map(|a| (&a.what, &a.json))
                .collect::<Vec<_>>()
        );
    }
}

/// The example agent and the answering agent, built.
fn folders() -> (PathBuf, crate::common::TempAgent) {
    let example = agent();
    succeeded(&mut hookrt(&["build", example.to_str().unwrap()]));
    let answering = answering_agent();
    succeeded(&mut hookrt(&["build", answering.path().to_str().unwrap()]));
    (example, answering)
}

/// `node` running `script` with `args` in `dir`.
fn node(dir: &Path, script: &Path, args: &[&Path]) -> std::process::Output {
    std::process::Command::new("node")
        .arg(script)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("node runs")
}

/// Checks `answers` with `tsc`: each one typed by `type_of(event)`, after
/// `imports`; and that the check can fail (a misspelt field is refused).
fn type_check(
    dir: &Path,
    imports: &str,
    answers: &[Answer],
    type_of: impl Fn(&str) -> &'static str,
    misspell: (&str, &str),
) {
    let checks = tempfile::Builder::new()
        .prefix("answers-")
        .tempdir_in(dir)
        .unwrap();
    let mut ts = format!("{imports}\n");
    for (i, a) in answers.iter().enumerate() {
        ts.push_str(&format!(
            "// {}\nexport const a{i}: {} = {};\n",
            a.what,
            type_of(&a.event),
            a.json
        ));
    }
    let file = checks.path().join("answers.ts");
    std::fs::write(&file, &ts).unwrap();
    let out = tsc(dir, &file);
    assert!(
        out.status.success(),
        "an answer is not of its event's type:\n{}{}\n{ts}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let wrong = ts.replace(misspell.0, misspell.1);
    assert_ne!(wrong, ts, "the misspelling must occur");
    std::fs::write(&file, wrong).unwrap();
    assert!(
        !tsc(dir, &file).status.success(),
        "tsc took a misspelt field"
    );
}

#[test]
fn every_answer_to_codex_validates_against_its_own_schemas() {
    let agents = agents_dir();
    let schemas = repo().join("tests/fixtures/codex/schemas");
    // The schemas are the binary's own: each is in it byte for byte.
    let binary =
        std::fs::read(agents.join(
            "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
        ))
        .expect("the pinned codex binary");
    let mut names: Vec<String> = std::fs::read_dir(&schemas)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 23);
    for name in &names {
        let file = std::fs::read(schemas.join(name)).unwrap();
        let text = file.strip_suffix(b"\n").unwrap_or(&file);
        assert!(
            binary.windows(text.len()).any(|w| w == text),
            "{name} is not in the pinned codex binary"
        );
    }
    let (example, answering) = folders();
    let answers = answers(bridge("codex"), &example, answering.path());
    assert_has(
        bridge("codex"),
        &answers,
        &[
            (&["hookSpecificOutput", "permissionDecision"], Some("deny")),
            (&["hookSpecificOutput", "updatedInput"], None),
            (&["hookSpecificOutput", "additionalContext"], None),
            (
                &["hookSpecificOutput", "decision", "behavior"],
                Some("allow"),
            ),
            (
                &["hookSpecificOutput", "decision", "behavior"],
                Some("deny"),
            ),
            (&["decision"], Some("block")),
            (&["systemMessage"], None),
        ],
    );
    // Codex refuses `ask` and a bare `allow` (it would let the call run):
    // hookrt sends neither.
    for a in &answers {
        let d = &a.json["hookSpecificOutput"]["permissionDecision"];
        assert!(d != "ask", "{}: {}", a.what, a.json);
        assert!(
            d != "allow" || !a.json["hookSpecificOutput"]["updatedInput"].is_null(),
            "{}: {}",
            a.what,
            a.json
        );
    }
    // What to check against what: every answer against its event's output
    // schema, every fixture against its input schema.
    let kebab =
        |event: &str| hookrt::front::bridge::hook_input::snake_case(event).replace('_', "-");
    let mut checks: Vec<Value> = answers
        .iter()
        .map(|a| {
            let schema = format!("{}.command.output.schema.json", kebab(&a.event));
            assert!(
                names.contains(&schema),
                "{}: Codex takes no answer on {}",
                a.what,
                a.event
            );
            json!({"what": a.what, "schema": schema, "value": a.json})
        })
        .collect();
    for (event, _) in bridge("codex").events() {
        checks.push(json!({
            "what": format!("the {event} fixture"),
            "schema": format!("{}.command.input.schema.json", kebab(event)),
            "value": input(bridge("codex"), event),
        }));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("checks.json");
    std::fs::write(&file, serde_json::to_string(&checks).unwrap()).unwrap();
    let script = repo().join("tests/agents/check-codex.mjs");
    let out = node(&agents, &script, &[&schemas, &file]);
    assert!(
        out.status.success(),
        "Codex's schemas refuse what hookrt sends:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The check can fail: a field Codex does not know is refused.
    let wrong = json!([{"what": "misspelt", "schema": "pre-tool-use.command.output.schema.json",
        "value": {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permission_decision": "deny"}}}]);
    std::fs::write(&file, wrong.to_string()).unwrap();
    assert!(!node(&agents, &script, &[&schemas, &file]).status.success());
}

#[test]
fn every_answer_to_gemini_cli_type_checks_as_its_hook_output() {
    let agents = agents_dir();
    let (example, answering) = folders();
    let answers = answers(bridge("gemini"), &example, answering.path());
    assert_has(
        bridge("gemini"),
        &answers,
        &[
            (&["decision"], Some("deny")),
            (&["decision"], Some("ask")),
            (&["decision"], Some("allow")),
            (&["decision"], Some("block")),
            (&["hookSpecificOutput", "tool_input"], None),
            (&["hookSpecificOutput", "additionalContext"], None),
            (&["systemMessage"], None),
        ],
    );
    let type_of = |event: &str| match event {
        "BeforeTool" => "BeforeToolOutput",
        "AfterTool" => "AfterToolOutput",
        "BeforeAgent" => "BeforeAgentOutput",
        "AfterAgent" => "AfterAgentOutput",
        "SessionStart" => "SessionStartOutput",
        "PreCompress" => "PreCompressOutput",
        "Notification" => "NotificationOutput",
        "BeforeModel" => "BeforeModelOutput",
        "AfterModel" => "AfterModelOutput",
        "BeforeToolSelection" => "BeforeToolSelectionOutput",
        _ => "HookOutput",
    };
    type_check(
        &agents,
        "import type { HookOutput, BeforeToolOutput, AfterToolOutput, BeforeAgentOutput, AfterAgentOutput, SessionStartOutput, PreCompressOutput, NotificationOutput, BeforeModelOutput, AfterModelOutput, BeforeToolSelectionOutput } from \"@google/gemini-cli-core/dist/src/hooks/types.js\";",
        &answers,
        type_of,
        ("\"decision\"", "\"decison\""),
    );
}

#[test]
fn every_answer_to_copilot_cli_type_checks_as_its_hook_output() {
    let agents = agents_dir();
    let (example, answering) = folders();
    let answers = answers(bridge("copilot"), &example, answering.path());
    assert_has(
        bridge("copilot"),
        &answers,
        &[
            (&["permissionDecision"], Some("deny")),
            (&["permissionDecision"], Some("ask")),
            (&["permissionDecision"], Some("allow")),
            (&["modifiedArgs"], None),
            (&["additionalContext"], None),
            (&["decision"], Some("block")),
            (&["behavior"], Some("allow")),
            (&["behavior"], Some("deny")),
        ],
    );
    // The SDK types Copilot's hook outputs but three; those three are
    // typed here after GitHub's hooks reference.
    let type_of = |event: &str| match event {
        "preToolUse" => "PreToolUseHookOutput",
        "preMcpToolCall" => "PreMcpToolCallHookOutput",
        "postToolUse" => "PostToolUseHookOutput",
        "postToolUseFailure" => "PostToolUseFailureHookOutput",
        "userPromptSubmitted" => "UserPromptSubmittedHookOutput",
        "userPromptTransformed" => "UserPromptTransformedHookOutput",
        "sessionStart" => "SessionStartHookOutput",
        "sessionEnd" => "SessionEndHookOutput",
        "errorOccurred" => "ErrorOccurredHookOutput",
        "agentStop" => "AgentStopHookOutput",
        "subagentStart" => "SubagentStartHookOutput",
        "subagentStop" => "SubagentStopHookOutput",
        "permissionRequest" => "PermissionRequestOutput",
        "notification" => "NotificationOutput",
        _ => "NoOutput",
    };
    let sdk = "../copilot-home/.cache/copilot/pkg/linux-x64/1.0.102/copilot-sdk/types.js";
    let imports = format!(
        "import type {{ PreToolUseHookOutput, PreMcpToolCallHookOutput, PostToolUseHookOutput, PostToolUseFailureHookOutput, UserPromptSubmittedHookOutput, UserPromptTransformedHookOutput, SessionStartHookOutput, SessionEndHookOutput, ErrorOccurredHookOutput, AgentStopHookOutput, SubagentStartHookOutput, SubagentStopHookOutput }} from \"{sdk}\";\n\
         // After GitHub's hooks reference: the events the SDK does not type.\n\
         type PermissionRequestOutput = {{ behavior?: \"allow\" | \"deny\"; message?: string; interrupt?: boolean }};\n\
         type NotificationOutput = {{ additionalContext?: string }};\n\
         type NoOutput = Record<string, never>;"
    );
    type_check(
        &agents,
        &imports,
        &answers,
        type_of,
        ("\"permissionDecision\"", "\"permission_decision\""),
    );
}

#[test]
fn every_answer_to_cursor_type_checks_as_its_documented_output() {
    let agents = agents_dir();
    let (example, answering) = folders();
    let answers = answers(bridge("cursor"), &example, answering.path());
    assert_has(
        bridge("cursor"),
        &answers,
        &[
            (&["permission"], Some("deny")),
            (&["permission"], Some("ask")),
            (&["permission"], Some("allow")),
            (&["updated_input"], None),
            (&["additional_context"], None),
            (&["continue"], None),
            (&["followup_message"], None),
        ],
    );
    let type_of = |event: &str| match event {
        "preToolUse" => "PreToolUseOutput",
        "beforeShellExecution" | "beforeMCPExecution" => "PermissionOutput",
        "beforeReadFile" | "beforeTabFileRead" => "ReadFileOutput",
        "beforeSubmitPrompt" => "SubmitPromptOutput",
        "stop" | "subagentStop" => "StopOutput",
        "postToolUse" | "sessionStart" => "ContextOutput",
        _ => "NoOutput",
    };
    let types = repo().join("tests/agents/cursor-hooks.js");
    type_check(
        &agents,
        &format!(
            "import type {{ PermissionOutput, PreToolUseOutput, ReadFileOutput, SubmitPromptOutput, StopOutput, ContextOutput, NoOutput }} from \"{}\";",
            types.display()
        ),
        &answers,
        type_of,
        ("\"permission\"", "\"permision\""),
    );
}

#[test]
fn every_answer_to_goose_type_checks_as_its_source_reads_it() {
    let agents = agents_dir();
    let (example, answering) = folders();
    let answers = answers(bridge("goose"), &example, answering.path());
    assert_has(
        bridge("goose"),
        &answers,
        &[
            (&["decision"], Some("block")),
            (&["decision"], Some("allow")),
            (&["reason"], None),
        ],
    );
    // goose reads an answer on PreToolUse and Stop only.
    for a in &answers {
        assert!(
            ["PreToolUse", "Stop"].contains(&a.event.as_str()),
            "{}: {}",
            a.what,
            a.json
        );
    }
    let types = repo().join("tests/agents/goose-hooks.js");
    type_check(
        &agents,
        &format!(
            "import type {{ HookResponse }} from \"{}\";",
            types.display()
        ),
        &answers,
        |_| "HookResponse",
        ("\"decision\"", "\"decisions\""),
    );
}

#[test]
fn every_answer_to_antigravity_type_checks_as_its_documented_output() {
    let agents = agents_dir();
    let (example, answering) = folders();
    let answers = answers(bridge("antigravity"), &example, answering.path());
    assert_has(
        bridge("antigravity"),
        &answers,
        &[
            (&["decision"], Some("deny")),
            (&["decision"], Some("force_ask")),
            (&["decision"], Some("allow")),
            (&["decision"], Some("continue")),
        ],
    );
    // `{}` denies a call: an answer to PreToolUse always decides.
    for a in answers.iter().filter(|a| a.event == "PreToolUse") {
        assert!(a.json["decision"].is_string(), "{}: {}", a.what, a.json);
    }
    let type_of = |event: &str| match event {
        "PreToolUse" => "PreToolUseOutput",
        "Stop" => "StopOutput",
        "PostToolUse" => "PostToolUseOutput",
        _ => "InvocationOutput",
    };
    let types = repo().join("tests/agents/antigravity-hooks.js");
    type_check(
        &agents,
        &format!(
            "import type {{ PreToolUseOutput, StopOutput, PostToolUseOutput, InvocationOutput }} from \"{}\";",
            types.display()
        ),
        &answers,
        type_of,
        ("\"decision\"", "\"decisions\""),
    );
}

#[test]
fn every_answer_to_opencode_type_checks_as_hookrts_plugin_reads_it() {
    let agents = agents_dir();
    let (example, answering) = folders();
    for name in ["opencode", "kilo"] {
        let answers = answers(bridge(name), &example, answering.path());
        assert_has(
            bridge(name),
            &answers,
            &[
                (&["decision"], Some("deny")),
                (&["decision"], Some("allow")),
                (&["decision"], Some("ask")),
                (&["args"], None),
                (&["context"], None),
            ],
        );
        // The plugin's own `Answer`, from the plugin as `install` ships it.
        let plugin = agents.join(format!("answers-{name}.ts"));
        let install = bridge(name).protocol().install.as_ref().unwrap();
        let Shape::Plugin(text) = install.shape else {
            panic!("{name} is installed as a plugin")
        };
        std::fs::write(&plugin, text).unwrap();
        type_check(
            &agents,
            &format!("import type {{ Answer }} from \"../answers-{name}.js\";"),
            &answers,
            |_| "Answer",
            ("\"decision\"", "\"decisoin\""),
        );
        std::fs::remove_file(&plugin).unwrap();
    }
}

/// An event a newer release of each agent adds is delivered (observed) and
/// answered with the agent's "no opinion", exit 0: never a hook error.
#[test]
fn an_event_a_newer_release_adds_is_answered_with_no_opinion_by_every_agent() {
    let (example, _answering) = folders();
    for bridge in Bridge::ALL {
        let input = match bridge.name() {
            "copilot" => json!({"sessionId": "s", "widget": 7}),
            "opencode" | "kilo" => json!({"hook": "widget.added", "sessionID": "s"}),
            "cline" => json!({"taskId": "s", "hookName": "widget"}),
            "openhands" => json!({"event_type": "BeforeWidget", "session_id": "s"}),
            "goose" => json!({"event": "BeforeWidget", "session_id": "s"}),
            "antigravity" => json!({"conversationId": "s", "workspacePaths": []}),
            "mcp" => json!({"hook": "resources/read", "sessionId": "s", "payload": {}}),
            "cursor" => json!({"hook_event_name": "beforeWidget", "conversation_id": "s"}),
            "anthropic-inference" => {
                json!({"type": "widget", "request_id": "req_w", "session_id": "s", "messages": []})
            }
            _ => json!({"hook_event_name": "BeforeWidget", "session_id": "s"}),
        };
        let answer = command_answer(bridge, &example, "beforeWidget", &input);
        assert_eq!(answer, bridge.no_opinion(), "{}", bridge.name());
    }
}
