//! `hookrt install` for the agents whose hook files are not a `hooks`
//! object: OpenCode and Kilo CLI (hookrt's plugin, one file, written
//! whole) and Cline (a `#!/bin/sh` script per event), each file hookrt's
//! alone (a file of that name that is not is refused and left as it was);
//! and Antigravity CLI, whose file maps hook names to events (hookrt's
//! entries under a name of its own, the user's names left as they are).

use std::fs;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{agent_fixture, repo, with_stdin};
use crate::install::{bare_agent, install_in, mode, prompt, votes_on_tool_calls};
use crate::{hookrt, run, text};

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
    assert!(
        text(&out.stdout).contains("the plugin runs hookrt-hook --agent opencode"),
        "{}",
        text(&out.stdout)
    );
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
    // The thin client beside hookrt, through the resident service.
    assert!(command[0].ends_with("/hookrt-hook"), "{command:?}");
    assert_eq!(command[1..4], ["--agent", "opencode", a]);
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
    assert_eq!(settings(&kilo)["command"][2], "kilo");
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

/// Antigravity CLI's `hooks.json` maps hook names to events: `install`
/// puts hookrt's entries under the name `hookrt`, switched on, a matcher
/// group on each tool event and a bare entry on the others, and leaves the
/// user's names as they are; a second run changes nothing. The gate's
/// entry, run as agy runs it (a shell line, in the file's folder), denies
/// `rm -rf` in agy's words and prints nothing on a call no hook minds:
/// agy denies a call on `{}`.
#[test]
fn antigravitys_hooks_go_under_a_name_of_hookrts_and_the_users_names_stay() {
    let agent = repo().join("example-hooks/agent");
    let built = run(&["build", agent.to_str().unwrap()]);
    assert!(built.status.success(), "{}", text(&built.stderr));
    let a = agent.to_str().unwrap();
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join(".agents/hooks.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let mine = json!({
        "my-linter-hook": {"PostToolUse": [{"matcher": "run_command",
            "hooks": [{"type": "command", "command": "./scripts/lint.sh", "timeout": 10}]}]},
        "reminder": {"enabled": false, "PreInvocation": [{"type": "command", "command": "./r.sh"}]}
    });
    fs::write(&file, serde_json::to_string_pretty(&mine).unwrap()).unwrap();
    let install = |extra: &[&str]| {
        let mut args = vec!["install", "--agent", "antigravity", a, "--all-events"];
        args.extend_from_slice(extra);
        install_in(project.path(), &args)
    };
    let out = install(&[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("2 other hook entries kept"),
        "{}",
        text(&out.stdout)
    );
    let written = fs::read_to_string(&file).unwrap();
    let v: Value = serde_json::from_str(&written).unwrap();
    for name in ["my-linter-hook", "reminder"] {
        assert_eq!(v[name], mine[name], "the user's `{name}` stays");
    }
    let ours = v["hookrt"].as_object().expect("hookrt's name");
    assert_eq!(ours["enabled"], true);
    let bridge = hookrt::front::bridge::Bridge::named("antigravity").unwrap();
    for (event, _) in bridge.events() {
        let entries = ours[*event].as_array().expect("every event");
        assert_eq!(entries.len(), 1, "{event}");
        let entry = match *event {
            "PreToolUse" | "PostToolUse" => {
                assert_eq!(entries[0]["matcher"], "*", "{event}");
                entries[0]["hooks"][0].clone()
            }
            _ => {
                assert!(entries[0].get("hooks").is_none(), "{event}: flat");
                entries[0].clone()
            }
        };
        assert_eq!(entry["type"], "command");
        assert_eq!(entry["timeout"], 15);
        let line = entry["command"].as_str().unwrap();
        assert!(
            line.contains(&format!("hook --agent antigravity --event {event} ")),
            "{line}"
        );
    }
    let again = install(&[]);
    assert!(text(&again.stdout).contains("already up to date"));
    assert_eq!(fs::read_to_string(&file).unwrap(), written);

    // The gate's entry, as agy runs it: a shell line in the file's folder.
    let line = ours["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let gate = |command: &str| {
        let mut input: Value =
            serde_json::from_str(&agent_fixture("antigravity", "PreToolUse")).unwrap();
        input["toolCall"]["args"]["CommandLine"] = command.into();
        let mut sh = Command::new("sh");
        sh.args(["-c", &line])
            .current_dir(file.parent().unwrap())
            .envs(hookrt(&[]).get_envs().filter_map(|(k, v)| Some((k, v?))));
        let out = with_stdin(sh, &input.to_string());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout).trim().to_owned()
    };
    let denied: Value = serde_json::from_str(&gate("rm -rf build/")).unwrap();
    assert_eq!(denied["decision"], "deny", "{denied}");
    assert!(
        denied["reason"]
            .as_str()
            .unwrap()
            .contains("recursive forced delete")
    );
    assert_eq!(gate("ls -la"), "", "no opinion is nothing, never `{{}}`");

    // With the folder's hooks needing tool calls only, hookrt's other
    // events go; the user's names stay.
    let tools_only = tempfile::tempdir().unwrap();
    let only = bare_agent(tools_only.path());
    votes_on_tool_calls(&only);
    let out = install_in(
        project.path(),
        &["install", "--agent", "antigravity", only.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    let names: Vec<&String> = v["hookrt"].as_object().unwrap().keys().collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(v["hookrt"]["PreToolUse"].is_array() && v["hookrt"]["enabled"] == true);
    assert_eq!(v["my-linter-hook"], mine["my-linter-hook"]);
}
