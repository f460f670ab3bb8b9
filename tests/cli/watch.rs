//! `hookrt test --watch`: the folder tested once, then again each time a
//! hook is saved; a hook that does not build is said and the next save
//! tested, the process going on until stopped.

use std::fs;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use crate::common::example;
use crate::{hookrt, run, text};

/// Each line `read` gives, sent to the returned receiver as it comes.
fn lines(read: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(read).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Waits for a line of `rx` holding `what`; the lines before it.
fn until(rx: &mpsc::Receiver<String>, what: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_secs(240)) {
            Ok(line) if line.contains(what) => return seen,
            Ok(line) => seen.push(line),
            Err(e) => panic!("no line with `{what}` ({e}); before it: {seen:#?}"),
        }
    }
}

#[test]
fn test_watch_tests_again_on_each_save_and_goes_on_past_a_hook_that_does_not_build() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let a = agent.to_str().unwrap();
    let made = run(&["new", &format!("{a}/hooks/guard")]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let hook = agent.join("hooks/guard.rs");
    let events = example("agent/transcript.jsonl");
    let expect = dir.path().join("expected.jsonl");
    let (e, x) = (events.to_str().unwrap(), expect.to_str().unwrap());
    let updated = run(&["test", a, "--events", e, "--expect", x, "--update"]);
    assert!(updated.status.success(), "{}", text(&updated.stderr));

    let mut child = hookrt(&["test", a, "--events", e, "--expect", x, "--watch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = lines(child.stdout.take().unwrap());
    let err = lines(child.stderr.take().unwrap());
    until(&out, "ok: ");
    until(&err, "watching");

    // Saved with a change that keeps what it does: built and tested again.
    let source = fs::read_to_string(&hook).unwrap();
    fs::write(&hook, format!("{source}\n// saved once\n")).unwrap();
    until(&err, "changed: testing again");
    until(&out, "ok: ");
    until(&err, "watching");

    // Saved broken: said, and the watch goes on.
    fs::write(
        &hook,
        format!("{source}\nfn broken() -> u32 {{ \"not a number\" }}\n"),
    )
    .unwrap();
    let said = until(&err, "watching");
    assert!(
        said.iter()
            .any(|l| l.contains("guard.rs") && l.contains("does not build")),
        "{said:#?}"
    );
    // Mended: tested again and passing.
    fs::write(&hook, format!("{source}\n// saved twice\n")).unwrap();
    until(&out, "ok: ");
    assert_eq!(
        child.try_wait().unwrap(),
        None,
        "the watch goes on until stopped"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}
