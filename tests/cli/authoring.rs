//! The author's loop on the command line (issue 53): a locked folder edited
//! is checked and tested as it is, and said to have drifted, while every load
//! for an agent still refuses it.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::{claude_fixture, copy, repo, with_stdin};

fn hookrt(args: &[&str]) -> Command {
    let mut c = crate::common::hookrt_command();
    c.args(args).env("NO_COLOR", "1");
    c
}

fn run(args: &[&str]) -> Output {
    hookrt(args).output().expect("hookrt runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The lines of `out`'s stderr that start with `prefix`.
fn lines(out: &Output, prefix: &str) -> Vec<String> {
    text(&out.stderr)
        .lines()
        .filter(|l| l.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

fn transcript() -> String {
    repo()
        .join("example-hooks/agent/transcript.jsonl")
        .display()
        .to_string()
}

/// A folder holding the `witness` hook, locked, then its grants widened.
fn drifted_folder(dir: &Path) {
    copy(
        &repo().join("example-hooks/hostile/hooks/witness.rs"),
        &dir.join("hooks/witness.rs"),
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let locked = run(&["lock", d]);
    assert!(locked.status.success(), "{}", text(&locked.stderr));
    fs::write(
        dir.join("hookrt.toml"),
        "[hooks.witness]\ngrants = [\"log\", \"state\"]\n",
    )
    .unwrap();
}

#[test]
fn a_drifted_folder_is_checked_and_tested_as_it_is_and_still_refused_for_agents() {
    let dir = tempfile::tempdir().unwrap();
    drifted_folder(dir.path());
    let d = dir.path().to_str().unwrap();
    let drift = "hook `witness` drifted from hookrt.lock: its settings in hookrt.toml changed: settings.grants [\"log\"] -> [\"log\",\"state\"]";
    let warning = vec![format!(
        "warning: ran the working copy, which drifted from its lock ({drift}; grants expected [log], found [log, state]); agents, `serve`, `run` and the service refuse it until you review the change and accept it with `hookrt lock {d}`"
    )];

    // The author's commands run the working copy and say, in one line, what drifted.
    let checked = run(&["check", d]);
    assert!(checked.status.success(), "{}", text(&checked.stderr));
    assert_eq!(lines(&checked, "warning:"), warning);
    let expect = dir.path().join("expect.jsonl");
    let e = expect.to_str().unwrap();
    let events = transcript();
    for args in [
        &["test", d, "--events", &events, "--expect", e, "--update"][..],
        &["test", d, "--events", &events, "--expect", e],
    ] {
        let tested = run(args);
        assert!(tested.status.success(), "{}", text(&tested.stderr));
        assert_eq!(lines(&tested, "warning:"), warning, "{args:?}");
    }

    // Every load that runs for an agent refuses it.
    let ran = run(&["run", d, "--events", &events]);
    assert_eq!(ran.status.code(), Some(1));
    assert!(text(&ran.stderr).contains(drift), "{}", text(&ran.stderr));
    let served = run(&["serve", d, "--listen", "127.0.0.1:0", "--insecure-no-auth"]);
    assert_eq!(served.status.code(), Some(1));
    assert!(
        text(&served.stderr).contains(drift),
        "{}",
        text(&served.stderr)
    );
    let hooked = with_stdin(
        hookrt(&["hook", "--agent", "claude-code", d]),
        &claude_fixture("PreToolUse"),
    );
    assert_eq!(hooked.status.code(), Some(2), "a gate fails closed");
    assert!(
        text(&hooked.stderr).contains(drift),
        "{}",
        text(&hooked.stderr)
    );

    // Accepting the change ends the warning.
    assert!(run(&["lock", d]).status.success());
    let checked = run(&["check", d]);
    assert!(checked.status.success());
    assert_eq!(lines(&checked, "warning:"), Vec::<String>::new());
}
