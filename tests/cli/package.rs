//! `hookrt package`: a locked folder as a plugin of Claude Code, Codex,
//! Cursor or goose (Open Plugins), or a marketplace holding one; what it
//! refuses. The agents load the plugins in tests/serve/plugin_e2e.rs;
//! goose's, whose binary no registry here has, is checked against what its
//! source reads and run as it runs a hook.

use std::fs;

use serde_json::Value;

use crate::common::{agent_fixture, with_stdin};

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
            "a plugin for gemini is not written yet (plugins: claude-code, codex, cursor, goose)"
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

/// goose's plugin in the Open Plugins format as goose's source reads it
/// (aaif-goose/goose 1.50: `plugins/formats/open_plugins.rs`,
/// `hooks/mod.rs`): a manifest whose name goose takes, `hooks/hooks.json`
/// with only what its parser accepts (known events, no matcher or a regex
/// that is not `*`, `command` entries, whole seconds, `on_failure` on
/// `PreToolUse` only), every command naming `${PLUGIN_ROOT}`; run as goose
/// runs a hook (`${PLUGIN_ROOT}` replaced, `sh -c`, `PLUGIN_ROOT` in the
/// environment), its gate blocks `rm -rf` in goose's words. No marketplace.
#[test]
fn gooses_open_plugins_plugin_holds_to_what_goose_reads_and_its_gate_blocks() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("agent");
    assert!(init(&dir, "safe-shell").status.success());
    let (d, out) = (dir.to_str().unwrap(), scratch.path().join("plugin"));
    let o = out.to_str().unwrap();
    let market = run(&[
        "package",
        "--agent",
        "goose",
        d,
        "--out",
        o,
        "--marketplace",
        "team",
    ]);
    assert!(
        text(&market.stderr).contains("has no marketplace"),
        "{}",
        text(&market.stderr)
    );
    let hookrt = env!("CARGO_BIN_EXE_hookrt");
    let made = run(&[
        "package", "--agent", "goose", d, "--out", o, "--name", "guard", "--hookrt", hookrt,
    ]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let manifest: Value =
        serde_json::from_str(&fs::read_to_string(out.join(".plugin/plugin.json")).unwrap())
            .unwrap();
    // goose's rule for a plugin's name: 1 to 64 of [a-z0-9.-], no `--`, no `..`.
    let name = manifest["name"].as_str().unwrap();
    assert!(
        (1..=64).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
            && !name.contains("--")
            && !name.contains(".."),
        "{manifest}"
    );
    assert!(manifest["version"].is_string(), "{manifest}");
    let hooks: Value =
        serde_json::from_str(&fs::read_to_string(out.join("hooks/hooks.json")).unwrap()).unwrap();
    let goose = hookrt::front::bridge::Bridge::named("goose").unwrap();
    let events = hooks["hooks"].as_object().unwrap();
    assert!(events.contains_key("PreToolUse"), "{hooks}");
    let mut gate = None;
    for (event, rules) in events {
        assert!(goose.events().iter().any(|(e, _)| e == event), "{event}");
        for rule in rules.as_array().unwrap() {
            assert!(
                rule.get("matcher").is_none_or(|m| m != "*"),
                "`*` is no regex: goose skips the rule: {rule}"
            );
            for hook in rule["hooks"].as_array().unwrap() {
                assert_eq!(hook["type"], "command", "{hook}");
                assert!(hook["timeout"].is_u64(), "{hook}");
                let command = hook["command"].as_str().unwrap();
                assert!(command.contains("\"${PLUGIN_ROOT}/agent\""), "{command}");
                match event.as_str() {
                    "PreToolUse" => {
                        assert_eq!(hook["on_failure"], "block", "{hook}");
                        gate = Some(command.to_owned());
                    }
                    _ => assert!(hook.get("on_failure").is_none(), "{hook}"),
                }
            }
        }
    }
    // The gate, as goose runs it.
    let line = gate
        .expect("a PreToolUse hook")
        .replace("${PLUGIN_ROOT}", o);
    let mut input: Value = serde_json::from_str(&agent_fixture("goose", "PreToolUse")).unwrap();
    input["tool_input"]["command"] = "rm -rf ~/projects".into();
    let mut sh = std::process::Command::new("sh");
    sh.args(["-c", &line]).env("PLUGIN_ROOT", o).envs(
        crate::hookrt(&[])
            .get_envs()
            .filter_map(|(k, v)| Some((k, v?))),
    );
    let said = with_stdin(sh, &input.to_string());
    assert_eq!(said.status.code(), Some(0), "{}", text(&said.stderr));
    let answer: Value = serde_json::from_str(text(&said.stdout).trim()).unwrap();
    assert_eq!(answer["decision"], "block", "{answer}");
    assert!(
        answer["reason"]
            .as_str()
            .unwrap()
            .contains("recursive-delete"),
        "{answer}"
    );
}
