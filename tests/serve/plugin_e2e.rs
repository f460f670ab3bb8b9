//! A folder of packs as a Claude Code plugin (`hookrt init`, `hookrt
//! package`), loaded by the real Claude Code with `--plugin-dir`, offline
//! against the loopback stand-in of the Messages API: the plugin's hooks
//! are stopped before `rm -rf` and tell the model about a secret a tool
//! printed, with no hook error, and nothing was written into the project's
//! settings; the same plugin in a marketplace, added and installed by the
//! real Claude Code (`claude plugin marketplace add`, `claude plugin
//! install`), likewise. The same folder's Codex plugin, in a marketplace, installed
//! by the real Codex (`codex plugin marketplace add`, `codex plugin add`)
//! and gating its session; Codex's copy of it unchanged by hookrt.

use std::path::Path;

use serde_json::{Value, json};

use crate::claude_e2e::{Session, claude_command, claude_plugin_session, reply, run_claude};
use crate::codex_e2e::{Hooked, check, session};
use crate::common::{TempAgent, succeeded};
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

/// A folder of `safe-shell` and `secrets` written by `hookrt package
/// --agent claude-code` into `scratch/plugin` (a marketplace of that name
/// when `marketplace` is given); the plugin's folder.
fn packs_plugin(scratch: &Path, marketplace: Option<&str>) -> std::path::PathBuf {
    let agent = scratch.join("agent");
    let out = scratch.join("plugin");
    let (a, o) = (agent.to_str().unwrap(), out.to_str().unwrap());
    succeeded(&mut hookrt(&["init", a, "--pack", "safe-shell,secrets"]));
    let bin = crate::common::hookrt_bin();
    let mut args = vec!["package", "--agent", "claude-code", a, "--out", o];
    args.extend(["--hookrt", bin.to_str().unwrap()]);
    if let Some(m) = marketplace {
        args.extend(["--marketplace", m]);
    }
    succeeded(&mut hookrt(&args));
    let plugin = match marketplace {
        Some(_) => out.join("plugins/hookrt"),
        None => out,
    };
    let hooks = std::fs::read_to_string(plugin.join("hooks/hooks.json")).unwrap();
    assert!(
        hooks.contains("${CLAUDE_PLUGIN_ROOT}") && hooks.contains("--require-lock"),
        "{hooks}"
    );
    plugin
}

/// A project holding `config.txt`.
fn project_with_config() -> tempfile::TempDir {
    let project = project();
    std::fs::write(project.path().join("config.txt"), config_text()).unwrap();
    project
}

/// What a session gated by the packs' plugin shows: its hooks ran and
/// succeeded, the delete was denied and the secret reported to the model,
/// and the project's settings were not needed.
fn gated_by_the_plugin(s: &Session) {
    all_hooks_succeeded(s);
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

#[test]
fn the_real_claude_code_loads_the_packs_plugin_and_is_gated_by_it() {
    let scratch = tempfile::tempdir().unwrap();
    let plugin = packs_plugin(scratch.path(), None);
    let s = claude_plugin_session(
        "show the config, then clean up",
        read_then_delete,
        project_with_config(),
        &plugin,
        &["Bash"],
    );
    gated_by_the_plugin(&s);
}

#[test]
fn the_real_claude_code_installs_the_plugin_from_its_marketplace_and_is_gated_by_it() {
    let scratch = tempfile::tempdir().unwrap();
    packs_plugin(scratch.path(), Some("team"));
    let market = scratch.path().join("plugin");
    let home = tempfile::tempdir().unwrap();
    let home_env = [("HOME", home.path().to_str().unwrap())];
    for args in [
        &["plugin", "marketplace", "add", market.to_str().unwrap()][..],
        &["plugin", "install", "hookrt@team"][..],
    ] {
        let out = claude_command(&home_env)
            .args(args)
            .output()
            .expect("claude runs");
        assert!(
            out.status.success(),
            "claude {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let s = run_claude(
        "show the config, then clean up",
        read_then_delete,
        project_with_config(),
        &[],
        &["Bash"],
        &home_env,
    );
    gated_by_the_plugin(&s);
}

/// Every file under `root` (relative path, bytes), sorted.
fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, files);
            } else {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                files.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut files = Vec::new();
    walk(root, root, &mut files);
    files.sort();
    files
}

#[test]
fn the_real_codex_installs_the_plugin_from_its_marketplace_and_is_gated_by_it() {
    let agent = TempAgent::new()
        .hook("agent/hooks/policy", "policy")
        .hook("agent/hooks/audit.rs", "audit.rs");
    let a = agent.path().to_str().unwrap();
    succeeded(&mut hookrt(&["build", a]));
    succeeded(&mut hookrt(&["lock", a]));
    let scratch = tempfile::tempdir().unwrap();
    let market = scratch.path().join("market");
    let bin = crate::common::hookrt_bin();
    succeeded(&mut hookrt(&[
        "package",
        "--agent",
        "codex",
        a,
        "--out",
        market.to_str().unwrap(),
        "--marketplace",
        "hookrt-local",
        "--hookrt",
        bin.to_str().unwrap(),
    ]));
    let plugin = market.join("plugins/hookrt");
    let hooks = std::fs::read_to_string(plugin.join("hooks/hooks.json")).unwrap();
    assert!(
        hooks.contains(r#"\"${PLUGIN_ROOT}/agent\""#) && hooks.contains("--require-lock"),
        "{hooks}"
    );
    let s = session(&Hooked::Plugin {
        marketplace: &market,
        id: "hookrt@hookrt-local",
    });
    // No hooks.json was written: every hook that ran was the plugin's.
    check(&s, "the plugin");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(plugin.join(".codex-plugin/plugin.json")).unwrap())
            .unwrap();
    let installed = s
        .codex_home()
        .join("plugins/cache/hookrt-local/hookrt")
        .join(manifest["version"].as_str().unwrap());
    assert_eq!(
        tree(&installed),
        tree(&plugin),
        "Codex ran its copy of the plugin, and hookrt wrote nothing into it (Codex would then ask to trust it again)"
    );
}

#[test]
fn the_cursor_plugin_and_its_marketplace_are_of_cursors_published_types() {
    let scratch = tempfile::tempdir().unwrap();
    let (agent, market) = (scratch.path().join("agent"), scratch.path().join("market"));
    let (a, m) = (agent.to_str().unwrap(), market.to_str().unwrap());
    succeeded(&mut hookrt(&["init", a, "--pack", "safe-shell,secrets"]));
    succeeded(&mut hookrt(&[
        "package",
        "--agent",
        "cursor",
        a,
        "--out",
        m,
        "--marketplace",
        "team",
    ]));
    let plugin = market.join("plugins/hookrt");
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    let hooks = read(&plugin.join("hooks/hooks.json"));
    let line: Value = serde_json::from_str(&hooks).unwrap();
    let command = line["hooks"]["preToolUse"][0]["command"].as_str().unwrap();
    assert_eq!(
        command,
        "hookrt hook --agent cursor \"${CURSOR_PLUGIN_ROOT}/agent\" --deadline-ms 10000 --require-lock",
        "the plugin's root is expanded by the shell where Cursor sets it, and split nowhere"
    );
    assert_eq!(
        line["hooks"]["preToolUse"][0]["failClosed"], true,
        "a gate fails closed"
    );
    assert!(plugin.join("agent/hookrt.lock").is_file());
    let agents = crate::agents::agents_dir();
    let checks = tempfile::Builder::new()
        .prefix("cursor-plugin-")
        .tempdir_in(&agents)
        .unwrap();
    let types = crate::common::repo().join("tests/agents/cursor-plugin.js");
    let file = checks.path().join("plugin.ts");
    let source = |marketplace: &str| {
        format!(
            "import type {{ Plugin, Marketplace, Hooks }} from \"{}\";\n\
             export const plugin: Plugin = {};\n\
             export const marketplace: Marketplace = {marketplace};\n\
             export const hooks: Hooks = {hooks};\n",
            types.display(),
            read(&plugin.join(".cursor-plugin/plugin.json")),
        )
    };
    let marketplace = read(&market.join(".cursor-plugin/marketplace.json"));
    std::fs::write(&file, source(&marketplace)).unwrap();
    let out = crate::claude_code::tsc(&agents, &file);
    assert!(
        out.status.success(),
        "Cursor's types refuse the plugin:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The check can fail: Cursor's schemas are closed.
    std::fs::write(
        &file,
        source(&marketplace.replacen("\"owner\"", "\"owners\"", 1)),
    )
    .unwrap();
    assert!(!crate::claude_code::tsc(&agents, &file).status.success());
}
