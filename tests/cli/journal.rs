//! `hookrt journal` and one journal, one owner, as a user meets them: a
//! second `hookrt run` (or `journal redrive`) on a journal in use is refused
//! naming the running one's pid; `pending`, `dead` and `retry` say exactly
//! what the journal holds, and a re-driven dead letter runs again.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::repo;

fn hookrt(args: &[&str]) -> Command {
    let mut c = crate::common::hookrt_command();
    c.args(args);
    c
}

fn run(args: &[&str]) -> Output {
    hookrt(args).output().expect("hookrt runs")
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

fn transcript() -> String {
    repo()
        .join("example-hooks/agent/transcript.jsonl")
        .to_string_lossy()
        .into_owned()
}

fn status(db: &Path) -> Value {
    serde_json::from_slice(&run(&["journal", "status", db.to_str().unwrap()]).stdout).unwrap()
}

#[test]
fn a_second_run_on_a_journal_in_use_is_refused_naming_the_pid() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let agent = repo().join("example-hooks/agent");
    let agent = agent.to_str().unwrap();
    // The first run reads events from a stdin that stays open: it keeps the journal.
    let mut first = hookrt(&[
        "run",
        agent,
        "--events",
        "-",
        "--journal",
        db.to_str().unwrap(),
    ])
    .stdin(Stdio::piped())
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let pid = first.id().to_string();
    let lock = PathBuf::from(format!("{}.lock", db.display()));
    let start = Instant::now();
    while fs::read_to_string(&lock).ok().as_deref() != Some(pid.as_str()) {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the first run never took the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let refused = format!(
        "hookrt: journal {} is in use by another hookrt (pid {pid}, holding {}); stop it, or give this one another journal\n",
        db.display(),
        lock.display()
    );
    let second = run(&[
        "run",
        agent,
        "--events",
        &transcript(),
        "--journal",
        db.to_str().unwrap(),
    ]);
    assert_eq!(second.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(stderr.ends_with(&refused), "{stderr}");
    assert!(
        second.stdout.is_empty(),
        "nothing was delivered by the second run"
    );
    // `retry`, the command's old name, still works (an alias of `redrive`).
    let retry = run(&["journal", "retry", db.to_str().unwrap()]);
    assert_eq!(String::from_utf8_lossy(&retry.stderr), refused);
    // Once the first run ends, the journal is free again.
    drop(first.stdin.take());
    assert!(first.wait().unwrap().success());
    let again = run(&[
        "run",
        agent,
        "--events",
        &transcript(),
        "--journal",
        db.to_str().unwrap(),
    ]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(status(&db)["done"], 159);
}

#[test]
fn pending_dead_and_retry_say_what_the_journal_holds_and_a_retried_letter_runs_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let db_s = db.to_str().unwrap();
    let agent = repo().join("example-hooks/hostile");
    let agent = agent.to_str().unwrap();
    assert!(
        run(&["run", agent, "--events", &transcript(), "--journal", db_s])
            .status
            .success()
    );
    assert_eq!(
        status(&db),
        serde_json::json!({"events": 38, "pending": 0, "done": 102, "dead": 202, "repeated": 0})
    );
    let dead = lines(&run(&["journal", "dead", db_s]));
    assert_eq!(dead.len(), 202);
    let fails: Vec<&Value> = dead.iter().filter(|d| d["hook"] == "fails").collect();
    assert_eq!(fails.len(), 38, "`fails` fails every event");
    assert!(
        fails
            .iter()
            .all(|d| d["outcome"] == "error" && d["attempts"] == 1)
    );
    assert_eq!(fails[0]["event_id"], "evt_0001");
    assert!(lines(&run(&["journal", "pending", db_s])).is_empty());

    let retry = run(&[
        "journal", "redrive", db_s, "--hook", "fails", "--event", "evt_0002",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&retry.stdout),
        format!(
            "1 dead letter(s) moved back to pending; `hookrt run DIR --journal {db_s}` delivers them\n"
        )
    );
    let retry = run(&["journal", "redrive", db_s, "--hook", "fails"]);
    assert!(String::from_utf8_lossy(&retry.stdout).starts_with("37 dead letter(s) moved back"));
    let pending = lines(&run(&["journal", "pending", db_s]));
    assert_eq!(pending.len(), 38);
    assert!(
        pending
            .iter()
            .all(|p| p["hook"] == "fails" && p["handler"] == "*")
    );
    assert_eq!(pending[1]["event_id"], "evt_0002");
    assert_eq!(status(&db)["dead"], 164);

    // A run without events delivers what is pending: attempt 2, dead again.
    let rerun = run(&["run", agent, "--journal", db_s]);
    let delivered: Vec<Value> = lines(&rerun)
        .into_iter()
        .filter(|l| l.get("hook").is_some())
        .collect();
    assert_eq!(delivered.len(), 38);
    assert!(
        delivered
            .iter()
            .all(|d| d["hook"] == "fails" && d["attempt"] == 2 && d["outcome"] == "error")
    );
    assert_eq!(
        status(&db),
        serde_json::json!({"events": 38, "pending": 0, "done": 102, "dead": 202, "repeated": 38}),
        "the 38 retried deliveries now carry two attempts"
    );
}

#[test]
fn prune_removes_finished_events_past_an_age_and_keeps_those_with_dead_letters() {
    let dir = tempfile::tempdir().unwrap();
    let out = |o: Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    for (agent, db, left) in [("agent", "a.db", 1), ("hostile", "h.db", 38)] {
        let db = dir.path().join(db);
        let db = db.to_str().unwrap();
        let agent = repo().join("example-hooks").join(agent);
        out(run(&[
            "run",
            agent.to_str().unwrap(),
            "--events",
            &transcript(),
            "--journal",
            db,
        ]));
        let prune = |age: &str| out(run(&["journal", "prune", db, "--older-than", age]));
        assert_eq!(prune("1d"), "0 event(s) pruned; 38 left\n");
        // Every finished event but the newest; the hostile agent's `fails`
        // dead-letters every event, so all of them stay there.
        assert_eq!(
            prune("0s"),
            format!("{} event(s) pruned; {left} left\n", 38 - left)
        );
    }
    let bad = run(&["journal", "prune", "x.db", "--older-than", "5 days"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("`5 days` is not an age: write a whole number and a unit (`90s`, `30m`, `12h`, `7d`) or `forever`"),
        "{err}"
    );
}
