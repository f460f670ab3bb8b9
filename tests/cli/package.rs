//! `hookrt package`: a locked folder as a plugin of Claude Code, Codex or
//! Cursor, or a marketplace holding one; what it refuses. The agents load
//! the plugins in tests/serve/plugin_e2e.rs.

use std::fs;

use serde_json::Value;

use crate::packs::init;
use crate::{run, text};

#[test]
fn package_refuses_an_unlocked_folder_a_used_out_and_agents_without_a_plugin_form() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("agent");
    assert!(init(&dir, "safe-shell").status.success());
    let (d, out) = (dir.to_str().unwrap(), scratch.path().join("plugin"));
    let o = out.to_str().unwrap();
    let package = |agent: &str| run(&["package", "--agent", agent, d, "--out", o]);
    let said = text(&package("gemini").stderr);
    assert!(
        said.contains(
            "a plugin for gemini is not written yet (plugins: claude-code, codex, cursor)"
        ),
        "{said}"
    );
    let said = text(
        &run(&[
            "package", "--agent", "codex", d, "--out", o, "--name", "../x",
        ])
        .stderr,
    );
    assert!(
        said.contains("--name `../x` is not a plugin name"),
        "{said}"
    );
    assert!(!out.exists());
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("keep.txt"), "mine").unwrap();
    let said = text(&package("claude-code").stderr);
    assert!(said.contains("is not empty; nothing was written"), "{said}");
    assert_eq!(fs::read_to_string(out.join("keep.txt")).unwrap(), "mine");
    fs::remove_dir_all(&out).unwrap();
    fs::remove_file(dir.join("hookrt.lock")).unwrap();
    let said = text(&package("claude-code").stderr);
    assert!(
        said.contains("has no hookrt.lock: a plugin runs a reviewed folder only"),
        "{said}"
    );
    assert!(!out.exists());
    assert!(run(&["lock", d]).status.success());
    assert!(package("claude-code").status.success());
    let hooks: Value =
        serde_json::from_str(&fs::read_to_string(out.join("hooks/hooks.json")).unwrap()).unwrap();
    // safe-shell takes tool calls only: hookrt is the hook of PreToolUse and no prompt event.
    assert!(
        hooks["hooks"].get("PreToolUse").is_some()
            && hooks["hooks"].get("UserPromptSubmit").is_none(),
        "{hooks}"
    );
    assert_eq!(
        fs::read(out.join("agent/hookrt.lock")).unwrap(),
        fs::read(dir.join("hookrt.lock")).unwrap()
    );
}

#[test]
fn a_marketplace_lists_the_plugin_where_each_agent_looks_for_it() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("agent");
    assert!(init(&dir, "safe-shell").status.success());
    for (agent, manifest, marketplace, root) in [
        (
            "claude-code",
            ".claude-plugin/plugin.json",
            ".claude-plugin/marketplace.json",
            "${CLAUDE_PLUGIN_ROOT}/agent",
        ),
        (
            "codex",
            ".codex-plugin/plugin.json",
            ".agents/plugins/marketplace.json",
            r#"\"${PLUGIN_ROOT}/agent\""#,
        ),
        (
            "cursor",
            ".cursor-plugin/plugin.json",
            ".cursor-plugin/marketplace.json",
            r#"\"${CURSOR_PLUGIN_ROOT}/agent\""#,
        ),
    ] {
        let out = scratch.path().join(agent);
        let o = out.to_str().unwrap();
        let args = [
            "package",
            "--agent",
            agent,
            dir.to_str().unwrap(),
            "--out",
            o,
        ];
        let made = run(&[&args[..], &["--marketplace", "team", "--name", "guard"]].concat());
        assert!(made.status.success(), "{agent}: {}", text(&made.stderr));
        let listed: Value =
            serde_json::from_str(&fs::read_to_string(out.join(marketplace)).unwrap()).unwrap();
        assert_eq!(listed["name"], "team", "{agent}");
        assert_eq!(listed["plugins"][0]["name"], "guard", "{agent}");
        assert!(
            listed["plugins"][0]["source"]
                .to_string()
                .contains("./plugins/guard"),
            "{agent}: {listed}"
        );
        let plugin = out.join("plugins/guard");
        let named: Value =
            serde_json::from_str(&fs::read_to_string(plugin.join(manifest)).unwrap()).unwrap();
        assert_eq!(named["name"], "guard", "{agent}");
        let hooks = fs::read_to_string(plugin.join("hooks/hooks.json")).unwrap();
        assert!(
            hooks.contains(root) && hooks.contains("--require-lock"),
            "{agent}: {hooks}"
        );
        assert_eq!(
            fs::read(plugin.join("agent/hookrt.lock")).unwrap(),
            fs::read(dir.join("hookrt.lock")).unwrap(),
            "{agent}"
        );
    }
}
