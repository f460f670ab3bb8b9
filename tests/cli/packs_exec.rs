//! The packs that run the user's programs (`format-on-edit`, `tests-at-stop`,
//! on the `exec` grant) on every agent's own recorded inputs: each agent's
//! file-writing call formats the file it wrote, and each agent's stop gate
//! keeps the turn going in its own form while the tests fail.

use std::fs;
use std::path::Path;

use hookrt::front::bridge::Bridge;
use serde_json::{Value, json};

use crate::common::agent_fixture;
use crate::run;

/// Writes an executable script.
fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// One agent's inputs for the two packs, from its recorded fixtures.
struct Inputs {
    /// The event of the call that wrote a file, and the input that says it wrote `file`.
    wrote: (&'static str, Value),
    /// The stop gate's event and input.
    stop: (&'static str, Value),
}

/// `bridge`'s file-writing call of `file` (in `project`) and its stop, in
/// the agent's own form: its tool, the fields it names the file and the
/// project in.
fn inputs(bridge: Bridge, project: &Path, file: &str) -> Inputs {
    let p = project.display().to_string();
    let abs = project.join(file).display().to_string();
    let fixture = |folder: &str, event: &str| -> Value {
        serde_json::from_str(&agent_fixture(folder, event)).unwrap()
    };
    let with = |folder: &str, event: &'static str, changes: Value| {
        let mut input = fixture(folder, event);
        for (k, v) in changes.as_object().unwrap() {
            input[k] = v.clone();
        }
        (event, input)
    };
    match bridge.name() {
        "claude-code" => Inputs {
            wrote: with(
                "claude",
                "PostToolUse",
                json!({"cwd": p, "tool_name": "Write",
                    "tool_input": {"file_path": abs, "content": "hello\n"},
                    "tool_response": {"filePath": abs, "type": "update"}}),
            ),
            stop: with("claude", "Stop", json!({"cwd": p})),
        },
        // Codex's hooks see a patch as `apply_patch` with `{"command": PATCH}`,
        // its paths relative to the project.
        "codex" => Inputs {
            wrote: with(
                "codex",
                "PostToolUse",
                json!({"cwd": p, "tool_name": "apply_patch",
                    "tool_input": {"command": format!("*** Begin Patch\n*** Update File: {file}\n@@\n-hi\n+hello\n*** End Patch\n")},
                    "tool_response": format!("Success. Updated the following files:\nM {file}\n")}),
            ),
            stop: with("codex", "Stop", json!({"cwd": p})),
        },
        "gemini" => Inputs {
            wrote: with(
                "gemini",
                "AfterTool",
                json!({"cwd": p, "tool_name": "write_file",
                    "tool_input": {"file_path": abs, "content": "hello\n"},
                    "tool_response": {"llmContent": format!("Successfully overwrote file: {abs}."), "returnDisplay": ""}}),
            ),
            stop: with("gemini", "AfterAgent", json!({"cwd": p})),
        },
        "cursor" => Inputs {
            wrote: with(
                "cursor",
                "postToolUse",
                json!({"workspace_roots": [p], "tool_name": "Write",
                    "tool_input": {"file_path": abs, "contents": "hello\n"}, "tool_output": ""}),
            ),
            stop: with("cursor", "stop", json!({"workspace_roots": [p]})),
        },
        "copilot" => Inputs {
            wrote: with(
                "copilot",
                "postToolUse",
                json!({"cwd": p, "toolName": "create",
                    "toolArgs": {"path": abs, "file_text": "hello\n"},
                    "toolResult": {"resultType": "success", "textResultForLlm": format!("Created file {abs}")}}),
            ),
            stop: with("copilot", "agentStop", json!({"cwd": p})),
        },
        // hookrt's plugin hands over OpenCode's `write` with its `filePath`.
        "opencode" | "kilo" => Inputs {
            wrote: with(
                "opencode",
                "tool.execute.after",
                json!({"cwd": p, "tool": "write",
                    "args": {"filePath": abs, "content": "hello\n"},
                    "title": file, "output": "Wrote file successfully."}),
            ),
            stop: with("opencode", "session.idle", json!({"cwd": p})),
        },
        // OpenHands' file_editor names the file it wrote under `path`; a
        // denied Stop keeps it working.
        "openhands" => Inputs {
            wrote: with(
                "openhands",
                "PostToolUse",
                json!({"working_dir": p, "tool_name": "file_editor",
                    "tool_input": {"command": "create", "path": abs, "file_text": "hello\n", "kind": "FileEditorAction"},
                    "tool_response": {"is_error": false, "kind": "FileEditorObservation"}}),
            ),
            stop: with("openhands", "Stop", json!({"working_dir": p})),
        },
        // Cline's editor names the file it wrote under `path`.
        "cline" => Inputs {
            wrote: with(
                "cline",
                "PostToolUse",
                json!({"workspaceRoots": [p], "tool_result": {"id": "call_1", "name": "editor",
                    "input": {"command": "create", "path": abs, "file_text": "hello\n"},
                    "output": format!("File created: {abs}")}}),
            ),
            stop: with("cline", "TaskComplete", json!({"workspaceRoots": [p]})),
        },
        // goose's developer__write names its file under `path`; goose hands
        // over no output.
        "goose" => Inputs {
            wrote: with(
                "goose",
                "PostToolUse",
                json!({"working_dir": p, "tool_name": "developer__write",
                    "tool_input": {"path": abs, "content": "hello\n"}}),
            ),
            stop: with("goose", "Stop", json!({"working_dir": p})),
        },
        // Antigravity CLI's write_to_file names its file `TargetFile`; the
        // project is the first workspace folder.
        "antigravity" => Inputs {
            wrote: with(
                "antigravity",
                "PostToolUse",
                json!({"workspacePaths": [p], "toolCall": {"name": "write_to_file",
                    "args": {"TargetFile": abs, "CodeContent": "hello\n", "Overwrite": true}}}),
            ),
            stop: with("antigravity", "Stop", json!({"workspacePaths": [p]})),
        },
        other => unreachable!("no inputs written for {other}"),
    }
}

/// What keeps a turn going in `answer`, wherever the agent reads it: the
/// block's reason (Claude Code, Codex, Gemini CLI, Copilot CLI; OpenHands'
/// deny, Antigravity CLI's continue) or the follow-up message (Cursor).
fn keeps_going(answer: &Value) -> Option<&str> {
    let blocked = matches!(
        answer.get("decision").and_then(Value::as_str),
        Some("block" | "deny" | "continue")
    );
    if blocked {
        return answer.get("reason").and_then(Value::as_str);
    }
    answer.get("followup_message").and_then(Value::as_str)
}

#[test]
fn format_on_edit_and_tests_at_stop_run_their_programs_on_every_agents_recorded_inputs() {
    let scratch = tempfile::tempdir().unwrap();
    let (tools, dir) = (scratch.path().join("tools"), scratch.path().join("agent"));
    for d in [&tools, &dir] {
        fs::create_dir_all(d).unwrap();
    }
    // A formatter that upper-cases the one file, and tests that fail until a marker is there.
    script(
        &tools.join("fmt.sh"),
        r#"content=$(cat "$1") && printf '%s\n' "$content" | tr a-z A-Z > "$1""#,
    );
    script(
        &tools.join("tests.sh"),
        "if [ -e fixed ]; then echo ok; else echo '2 tests failed: parse, eval'; exit 1; fi",
    );
    let t = tools.display();
    fs::write(
        dir.join("hookrt.toml"),
        format!("[packs.format-on-edit]\nformatters = {{ txt = [\"{t}/fmt.sh\", \"{{file}}\"] }}\nread = [\"{t}\"]\n\n[packs.tests-at-stop]\ncommand = [\"{t}/tests.sh\"]\nread = [\"{t}\"]\n"),
    )
    .unwrap();
    // Programs run only from a locked folder.
    let unlocked = run(&["check", dir.to_str().unwrap(), "--require-lock"]);
    assert!(!unlocked.status.success());
    assert!(run(&["lock", dir.to_str().unwrap()]).status.success());
    // Every agent whose turns stop: an inference hook's frames hold no tool
    // results and no stop, so neither pack has anything to do there.
    let stopping = |b: &Bridge| b.events().iter().any(|(_, k)| *k == "turn.stopping");
    for bridge in Bridge::ALL.into_iter().filter(stopping) {
        let agent = bridge.name();
        let project = scratch.path().join(format!("project-{agent}"));
        fs::create_dir_all(&project).unwrap();
        let hook = |(event, input): &(&str, Value)| {
            crate::packs::answer_in(Some(&project), bridge, &dir, event, input)
        };
        let notes = project.join("notes.txt");
        fs::write(&notes, "hello\n").unwrap();
        let given = inputs(bridge, &project, "notes.txt");
        hook(&given.wrote);
        assert_eq!(
            fs::read_to_string(&notes).unwrap(),
            "HELLO\n",
            "{agent}: the file it wrote is formatted"
        );
        // A file whose extension has no formatter is left as it is.
        let other = project.join("notes.md");
        fs::write(&other, "hello\n").unwrap();
        hook(&inputs(bridge, &project, "notes.md").wrote);
        assert_eq!(fs::read_to_string(&other).unwrap(), "hello\n", "{agent}");
        let failing = hook(&given.stop);
        // OpenCode's `session.idle` and Cline's `TaskComplete` come once
        // the turn is over: nothing can keep it going (docs/agents.md), so
        // hookrt says nothing.
        if matches!(agent, "opencode" | "kilo" | "cline") {
            assert_eq!(failing, Value::Null, "{agent}: no turn to keep going");
            continue;
        }
        assert!(
            keeps_going(&failing).is_some_and(|r| r.contains("2 tests failed: parse, eval")),
            "{agent}: failing tests keep the turn going: {failing}"
        );
        fs::write(project.join("fixed"), "").unwrap();
        let passing = hook(&given.stop);
        assert_eq!(
            keeps_going(&passing),
            None,
            "{agent}: passing tests let the turn end: {passing}"
        );
    }
}
