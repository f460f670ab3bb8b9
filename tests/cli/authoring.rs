//! The author's loop on the command line (issue 53): a locked folder edited
//! is checked and tested as it is, and said to have drifted, while every load
//! for an agent still refuses it; `test --update` never records a failed
//! delivery without being told to.

use std::fs;
use std::path::Path;
use std::process::Output;

use crate::common::{claude_fixture, copy, repo, with_stdin};
use crate::{hookrt, run, text};

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

#[test]
fn update_on_a_trapping_hook_writes_nothing_and_names_it_unless_failures_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &repo().join("example-hooks/testing/hooks/tool_counter.rs"),
        &dir.path().join("hooks/tool_counter.rs"),
    )
    .unwrap();
    fs::write(
        dir.path().join("hookrt.toml"),
        "[hooks.tool_counter]\nconfig = { panic = true }\n",
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();
    let expect = dir.path().join("expect.jsonl");
    let e = expect.to_str().unwrap();
    let events = transcript();
    let update = ["test", d, "--events", &events, "--expect", e, "--update"];

    let stopped = run(&update);
    assert_eq!(stopped.status.code(), Some(1));
    let err = text(&stopped.stderr);
    let failed = lines(&stopped, "failed: ");
    let events: Vec<&str> = failed.iter().map(|l| &l[8..16]).collect();
    assert_eq!(
        events,
        ["evt_0005", "evt_0010", "evt_0014", "evt_0021", "evt_0031"],
        "one line per trapped request: {err}"
    );
    assert!(
        failed[0].starts_with(
            "failed: evt_0005 (actions.requested), attempt 1, hook tool_counter, handler observe:actions.requested: trap (panicked at "
        ),
        "{err}"
    );
    assert!(
        err.ends_with(&format!(
            "5 delivery(ies) failed: {e} not written; fix the hook, or run again with --accept-failures to record the failures as expected\n"
        )),
        "{err}"
    );
    assert!(!expect.exists(), "nothing written");

    // Accepted, the failures are the expectation, and a replay matches it.
    let accepted = run(&[&update[..], &["--accept-failures"]].concat());
    assert!(accepted.status.success(), "{}", text(&accepted.stderr));
    let written = fs::read_to_string(&expect).unwrap();
    assert_eq!(written.matches("\"outcome\":\"trap\"").count(), 5);
    let replayed = run(&update[..6]);
    assert!(replayed.status.success(), "{}", text(&replayed.stderr));
}

#[test]
fn new_shows_on_failure_per_subscription_for_a_hook_voting_on_two_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("my-agent/hooks/guard");
    let out = run(&[
        "new",
        path.to_str().unwrap(),
        "--lang",
        "py",
        "--events",
        "actions.requested,prompt.submitted,observe:turn.stopping",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains(
            "  or per subscription, e.g. on_failure = { \"actions.requested\" = \"deny\", \"prompt.submitted\" = \"abstain\" }\n"
        ),
        "{said}"
    );
}
