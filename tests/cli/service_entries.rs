//! How agents reach the resident service (docs/service.md): the entries
//! `hookrt install` writes (the thin client `hookrt-hook` by default, the
//! process per event with `--no-service` or `HOOKRT_NO_SERVICE`), and a
//! service retiring once nobody can reach it (its socket removed, its
//! folder gone).

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{copy_tree, with_stdin};
use crate::service::{Home, agent, decision, pre_tool_use};
use crate::text;

/// The command and arguments of the `PreToolUse` entry `hookrt install
/// ARGS` writes into a settings file of `home`'s.
fn installed_entry(home: &Home, extra: &[&str]) -> (String, Vec<String>) {
    let settings = home.root().join("settings.json");
    let mut args = vec!["install", "--agent", "claude-code", agent()];
    args.extend(extra);
    args.extend(["--settings", settings.to_str().unwrap()]);
    let out = home.hookrt(&args).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&fs::read(&settings).unwrap()).unwrap();
    let entry = &v["hooks"]["PreToolUse"][0]["hooks"][0];
    let args = entry["args"].as_array().unwrap().iter();
    (
        entry["command"].as_str().unwrap().to_owned(),
        args.map(|a| a.as_str().unwrap().to_owned()).collect(),
    )
}

/// Runs an installed entry as Claude Code runs it, as `home`'s user.
fn run_entry(home: &Home, (command, args): &(String, Vec<String>), input: &str) -> Output {
    let like = home.hookrt(&[]);
    let mut entry = Command::new(command);
    entry
        .args(args)
        .envs(like.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(home.root());
    with_stdin(entry, input)
}

#[test]
fn install_writes_entries_that_reach_the_service_through_the_thin_client_by_default() {
    let home = Home::new();
    let entry = installed_entry(&home, &[]);
    assert_eq!(
        Path::new(&entry.0).file_name().unwrap(),
        "hookrt-hook",
        "the thin client beside hookrt: {entry:?}"
    );
    assert_eq!(entry.1[..2], ["--agent", "claude-code"]);
    // Installing again, or with --service (the default said), replaces it.
    assert_eq!(installed_entry(&home, &["--service"]), entry);
    // The first event starts the service.
    assert!(!home.status().0);
    let out = run_entry(&home, &entry, &pre_tool_use("rm -rf build/", home.root()));
    assert_eq!(decision(&out), "deny");
    assert!(home.status().0, "the entry started the service");
    // $HOOKRT_NO_SERVICE: the same entry decides in a process of its own
    // (`hookrt hook --no-service`), with the same answer; no service asked.
    home.hookrt(&["service", "stop", agent()]).output().unwrap();
    let mut alone = Command::new(&entry.0);
    alone
        .args(&entry.1)
        .envs(
            home.hookrt(&[])
                .get_envs()
                .filter_map(|(k, v)| Some((k, v?))),
        )
        .env("HOOKRT_NO_SERVICE", "1")
        .current_dir(home.root());
    let out = with_stdin(alone, &pre_tool_use("rm -rf build/", home.root()));
    assert_eq!(decision(&out), "deny", "{}", text(&out.stderr));
    assert!(!home.status().0, "no service was started");
    // --no-service writes the process per event.
    let (command, args) = installed_entry(&home, &["--no-service"]);
    assert_eq!(Path::new(&command).file_name().unwrap(), "hookrt");
    assert_eq!(args[0], "hook");
    assert!(args.contains(&"--no-service".to_owned()), "{args:?}");
    let out = run_entry(
        &home,
        &(command, args),
        &pre_tool_use("rm -rf build/", home.root()),
    );
    assert_eq!(decision(&out), "deny");
    assert!(!home.status().0, "no service was started");
}

#[test]
fn a_service_whose_socket_or_folder_is_removed_retires() {
    let home = Home::new();
    let agent_copy = home.root().join("agent");
    copy_tree(Path::new(agent()), &agent_copy);
    let dir = agent_copy.to_str().unwrap();
    let gate = |dir: &str| {
        let args = ["hook", "--agent", "claude-code", dir];
        with_stdin(
            home.hookrt(&args),
            &pre_tool_use("rm -rf build/", home.root()),
        )
    };
    let pid = |dir: &str| {
        let out = home.hookrt(&["service", "status", dir]).output().unwrap();
        let said = text(&out.stdout);
        said.split("(pid ")
            .nth(1)
            .and_then(|r| r.split(')').next())
            .and_then(|p| p.parse::<i32>().ok())
            .unwrap_or_else(|| panic!("no service runs: {said}"))
    };
    let gone = |pid: i32| {
        let until = Instant::now() + Duration::from_secs(5);
        // SAFETY: signal 0 asks whether a pid this test's service had is there.
        while unsafe { libc::kill(pid, 0) } == 0 && !is_zombie(pid) {
            if Instant::now() > until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        true
    };
    // A socket removed (its run folder cleaned): nobody reaches it, it leaves.
    assert_eq!(decision(&gate(agent())), "deny");
    let first = pid(agent());
    fs::remove_file(home.path("socket")).unwrap();
    assert!(gone(first), "the service whose socket was removed retired");
    // Its folder removed: it leaves too.
    assert_eq!(decision(&gate(dir)), "deny");
    let second = pid(dir);
    fs::remove_dir_all(&agent_copy).unwrap();
    assert!(gone(second), "the service whose folder was removed retired");
}

/// Whether `pid` is a zombie (an exited child nobody reaped).
fn is_zombie(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}
