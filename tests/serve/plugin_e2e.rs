//! A folder of packs as a Claude Code plugin (`hookrt init`, `hookrt
//! package`), loaded by the real Claude Code with `--plugin-dir`, offline
//! against the loopback stand-in of the Messages API: the plugin's hooks
//! are stopped before `rm -rf` and tell the model about a secret a tool
//! printed, with no hook error, and nothing was written into the project's
//! settings.

use serde_json::{Value, json};

use crate::claude_e2e::{claude_plugin_session, reply};
use crate::common::succeeded;
use crate::hookrt;
use crate::ported_e2e::{all_hooks_succeeded, next, project, workdir};

/// What `config.txt` holds: a key the secrets pack knows (AWS's example).
pub(crate) fn config_text() -> String {
    format!("AWS_ACCESS_KEY_ID={}{}\n", "AKIA", "IOSFODNN7EXAMPLE")
}

/// Reads `config.txt`, then tries to delete the home folder, then is done.
pub(crate) fn read_then_delete(request: &Value) -> (&'static str, String) {
    if request["tools"].as_array().is_none_or(|t| t.is_empty()) {
        return reply(request, vec![json!({"type": "text", "text": "ok"})]);
    }
    let config = format!("{}/config.txt", workdir(request));
    let steps = vec![
        (
            "toolu_cat_config",
            "Bash",
            json!({"command": format!("cat {config}"), "description": "Show the config"}),
        ),
        (
            "toolu_rm_home",
            "Bash",
            json!({"command": "rm -rf ~/", "description": "Clean up"}),
        ),
    ];
    reply(request, next(request, steps))
}

#[test]
fn the_real_claude_code_loads_the_packs_plugin_and_is_gated_by_it() {
    let scratch = tempfile::tempdir().unwrap();
    let agent = scratch.path().join("agent");
    let plugin = scratch.path().join("plugin");
    let (a, p) = (agent.to_str().unwrap(), plugin.to_str().unwrap());
    succeeded(&mut hookrt(&["init", a, "--pack", "safe-shell,secrets"]));
    let bin = crate::common::hookrt_bin();
    succeeded(&mut hookrt(&[
        "package",
        "--agent",
        "claude-code",
        a,
        "--out",
        p,
        "--hookrt",
        bin.to_str().unwrap(),
    ]));
    let hooks = std::fs::read_to_string(plugin.join("hooks/hooks.json")).unwrap();
    assert!(
        hooks.contains("${CLAUDE_PLUGIN_ROOT}") && hooks.contains("--require-lock"),
        "{hooks}"
    );
    let project = project();
    std::fs::write(project.path().join("config.txt"), config_text()).unwrap();
    let s = claude_plugin_session(
        "show the config, then clean up",
        read_then_delete,
        project,
        &plugin,
        &["Bash"],
    );
    all_hooks_succeeded(&s);
    let fired: Vec<&str> = s
        .lines
        .iter()
        .filter(|l| l["type"] == "system" && l["subtype"] == "hook_response")
        .filter_map(|l| l["hook_event"].as_str())
        .collect();
    assert!(
        fired.contains(&"PreToolUse") && fired.contains(&"PostToolUse"),
        "the plugin's hooks ran: {fired:?}"
    );
    let told = s.requests.last().expect("the model was asked").to_string();
    assert!(
        told.contains("safe-shell: `rm` deletes `~/` recursively, outside the project"),
        "the deny reached the model: {told}"
    );
    assert!(
        told.contains("secrets: the output of `Bash` holds what looks like an aws-access-key"),
        "the context reached the model: {told}"
    );
    assert!(
        !s.project.path().join(".claude/settings.json").exists(),
        "the plugin needs no settings of the project's"
    );
}
