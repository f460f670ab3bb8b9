//! `hookrt install` for the agents that have no hook settings to merge
//! into: OpenCode and Kilo CLI (hookrt's plugin, one file, written whole)
//! and Cline (a `#!/bin/sh` script per event). Each file is hookrt's alone;
//! a file of that name that is not is refused and left as it was.

use std::fs;
use std::process::Command;

use serde_json::Value;

use crate::install::{bare_agent, install_in, mode, prompt, votes_on_tool_calls};
use crate::{hookrt, text};

/// OpenCode and Kilo CLI have no hook settings: `install` writes hookrt's
/// plugin whole, its `SETTINGS` line naming the command (or the server),
/// the hooks the folder's hooks take and the gates; a second run changes
/// nothing; a file of that name that is not hookrt's plugin is refused,
/// left as it was; `--user` writes under `$XDG_CONFIG_HOME`.
#[test]
fn opencodes_plugin_is_written_whole_and_a_strangers_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let agent = bare_agent(dir.path());
    votes_on_tool_calls(&agent);
    let a = agent.to_str().unwrap();
    let settings = |text: &str| -> Value {
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("const SETTINGS: Settings = "))
            .expect("a SETTINGS line");
        serde_json::from_str(line).unwrap()
    };
    let plugin = dir.path().join(".opencode/plugins/hookrt.ts");
    let out = install_in(dir.path(), &["install", "--agent", "opencode", a]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("the plugin runs hookrt hook --agent opencode"));
    let written = fs::read_to_string(&plugin).unwrap();
    let s = settings(&written);
    // allow_all votes on `actions.requested`: OpenCode's tool gate.
    assert_eq!(s["events"], serde_json::json!(["tool.execute.before"]));
    assert_eq!(
        s["gates"],
        serde_json::json!(["tool.execute.before", "permission.ask", "chat.message"])
    );
    let command: Vec<&str> = s["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(command[1..5], ["hook", "--agent", "opencode", a]);
    assert_eq!((&s["url"], &s["timeoutMs"]), (&Value::Null, &15_000.into()));
    assert_eq!(mode(&plugin), 0o600);
    let again = install_in(dir.path(), &["install", "--agent", "opencode", a]);
    assert!(text(&again.stdout).contains("already up to date"));
    // Over HTTP: the plugin posts to the agent's route.
    let http = [
        "install",
        "--agent",
        "opencode",
        a,
        "--http",
        "http://127.0.0.1:7700/",
    ];
    assert!(install_in(dir.path(), &http).status.success());
    let s = settings(&fs::read_to_string(&plugin).unwrap());
    assert_eq!(s["url"], "http://127.0.0.1:7700/v1/opencode");
    assert_eq!(s["timeoutMs"], 10_000);
    // A stranger's file is left as it was.
    fs::write(&plugin, "export const Mine = async () => ({})\n").unwrap();
    let out = install_in(dir.path(), &["install", "--agent", "opencode", a]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("is not hookrt's plugin"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        fs::read_to_string(&plugin).unwrap(),
        "export const Mine = async () => ({})\n"
    );
    // Kilo CLI: the same plugin in its own folder; --user under XDG_CONFIG_HOME.
    let config = dir.path().join("xdg");
    let mut user = hookrt(&["install", "--agent", "kilo", a, "--user"]);
    user.current_dir(dir.path()).env("XDG_CONFIG_HOME", &config);
    let out = prompt(user);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let kilo = fs::read_to_string(config.join("kilo/plugins/hookrt.ts")).unwrap();
    assert_eq!(settings(&kilo)["command"][3], "kilo");
    assert_eq!(kilo.lines().next(), written.lines().next());
}

/// Cline runs a file per event: `install` writes hookrt's `#!/bin/sh`
/// script per event the folder's hooks take into `.cline/hooks/`, beside
/// the user's own hook of the event, removes its script of an event no
/// longer taken, and refuses a `<Event>.sh` that is not its own where it
/// needs the name.
#[test]
fn clines_scripts_are_written_per_event_and_removed_when_no_longer_needed() {
    let dir = tempfile::tempdir().unwrap();
    let agent = bare_agent(dir.path());
    let a = agent.to_str().unwrap();
    let hooks = dir.path().join(".cline/hooks");
    fs::create_dir_all(&hooks).unwrap();
    fs::write(hooks.join("PreToolUse"), "#!/bin/sh\necho '{}'\n").unwrap();
    let out = install_in(
        dir.path(),
        &["install", "--agent", "cline", a, "--all-events"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cline = hookrt::front::bridge::Bridge::named("cline").unwrap();
    let names = || -> Vec<String> {
        let mut n: Vec<String> = fs::read_dir(&hooks)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    assert_eq!(names().len(), cline.events().len() + 1, "{:?}", names());
    let script = fs::read_to_string(hooks.join("PreToolUse.sh")).unwrap();
    assert!(script.starts_with("#!/bin/sh\n# hookrt: "), "{script}");
    assert!(
        script.contains(&format!(
            "hook --agent cline --event PreToolUse {a} --deadline-ms 10000"
        )),
        "{script}"
    );
    let sh = Command::new("sh")
        .arg("-n")
        .arg(hooks.join("PreToolUse.sh"))
        .status()
        .unwrap();
    assert!(sh.success(), "the script parses");
    // The folder's hooks take tool calls only: the other scripts go, the user's stays.
    votes_on_tool_calls(&agent);
    let out = install_in(dir.path(), &["install", "--agent", "cline", a]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(names(), ["PreToolUse", "PreToolUse.sh"]);
    let again = install_in(dir.path(), &["install", "--agent", "cline", a]);
    assert!(
        text(&again.stdout).contains("already up to date"),
        "{}",
        text(&again.stdout)
    );
    // A stranger's `<Event>.sh` of an event hookrt does not take is theirs;
    // of one it takes, refused, left as it was.
    fs::write(hooks.join("PostToolUse.sh"), "#!/bin/sh\necho mine\n").unwrap();
    let out = install_in(dir.path(), &["install", "--agent", "cline", a]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = install_in(
        dir.path(),
        &["install", "--agent", "cline", a, "--all-events"],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("is not hookrt's"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        fs::read_to_string(hooks.join("PostToolUse.sh")).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
    assert_eq!(names(), ["PostToolUse.sh", "PreToolUse", "PreToolUse.sh"]);
}
