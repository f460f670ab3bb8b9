//! When hookrt cannot run at all (its binary moved, deleted, not on this
//! machine), a gate still fails closed: `hookrt claude install` writes
//! `"onFailure": "block"` on Claude Code's gates, and the real Claude Code
//! then blocks the call it could not ask about, even one its own rules
//! allow. The same session with hookrt in place runs the call, so the check
//! can fail.

use serde_json::{Value, json};

use crate::claude_e2e::{Session, reply, run_claude};
use crate::common::{TempAgent, succeeded};
use crate::hookrt;

/// The model: one `touch made.txt`, then done.
fn touch(request: &Value) -> (&'static str, String) {
    if request["tools"].as_array().is_none_or(|t| t.is_empty()) {
        return reply(request, vec![json!({"type": "text", "text": "ok"})]);
    }
    let blocks = if request["messages"].to_string().contains("toolu_touch") {
        vec![json!({"type": "text", "text": "Done."})]
    } else {
        vec![
            json!({"type": "tool_use", "id": "toolu_touch", "name": "Bash",
                    "input": {"command": "touch made.txt", "description": "as scripted"}}),
        ]
    };
    reply(request, blocks)
}

/// A session whose settings `hookrt claude install` wrote for `agent`, its
/// hookrt path then replaced by `hookrt_at` when given; `Bash` allowed by
/// Claude Code's own rules.
fn session(agent: &std::path::Path, hookrt_at: Option<&str>) -> Session {
    let project = tempfile::tempdir().unwrap();
    let settings = project.path().join(".claude/settings.json");
    succeeded(&mut hookrt(&[
        "claude",
        "install",
        agent.to_str().unwrap(),
        "--settings",
        settings.to_str().unwrap(),
    ]));
    if let Some(missing) = hookrt_at {
        let ours = hookrt(&[]).get_program().to_str().unwrap().to_owned();
        let text = std::fs::read_to_string(&settings).unwrap();
        assert!(text.contains(&ours), "the settings run {ours}: {text}");
        std::fs::write(&settings, text.replace(&ours, missing)).unwrap();
    }
    run_claude("make the file", touch, project, &[], &["Bash"], &[])
}

/// The outcomes of the hooks Claude Code ran on `event`.
fn outcomes<'a>(s: &'a Session, event: &str) -> Vec<&'a str> {
    s.lines
        .iter()
        .filter(|l| l["subtype"] == "hook_response" && l["hook_event"] == event)
        .filter_map(|l| l["outcome"].as_str())
        .collect()
}

#[test]
fn the_real_claude_code_blocks_a_gated_call_when_hookrt_cannot_start() {
    // A hook on tool calls that allows each one: the gate is installed.
    let agent = TempAgent::new().file(
        "hooks/allow_all.rs",
        &std::fs::read_to_string(crate::common::example("testing/hooks/allow_all.rs")).unwrap(),
    );
    succeeded(&mut hookrt(&["build", agent.path().to_str().unwrap()]));

    let working = session(agent.path(), None);
    assert!(
        working.project.path().join("made.txt").exists(),
        "with hookrt in place the call runs"
    );
    assert_eq!(outcomes(&working, "PreToolUse"), ["success"]);

    let gone = session(agent.path(), Some("/nonexistent/hookrt"));
    assert!(
        !gone.project.path().join("made.txt").exists(),
        "a gate whose hookrt cannot start blocks the call"
    );
    let pre = outcomes(&gone, "PreToolUse");
    assert!(
        !pre.is_empty() && pre.iter().all(|o| *o != "success"),
        "the hook failed: {pre:?}"
    );
}
