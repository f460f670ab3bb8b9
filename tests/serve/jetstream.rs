//! `hookrt worker` on a real nats-server (started by `scripts/nats`, which
//! installs it when missing): a consumer group delivers every event once per
//! hook across its journals, and a killed worker's unacked messages go to
//! another. These tests fail, never skip, when NATS cannot be had.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use std::io::{BufRead, BufReader};

use crate::common::{TempAgent, repo};
use crate::{agent, hookrt, transcript_text};

/// A nats-server with JetStream, stopped when dropped.
struct Nats {
    url: String,
    pid: String,
}

impl Nats {
    fn start() -> Nats {
        let out = Command::new(repo().join("scripts/nats"))
            .output()
            .expect("scripts/nats runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "JetStream tests need nats-server and scripts/nats could not start one:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut lines = text.lines();
        let url = lines.next().expect("URL line").to_owned();
        let pid = lines
            .next()
            .and_then(|l| l.strip_prefix("pid "))
            .expect("pid line")
            .to_owned();
        Nats { url, pid }
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg(&self.pid).status();
    }
}

/// A running `hookrt worker`; killed when dropped.
struct Worker(Child);

impl Worker {
    fn start(agent: &Path, nats: &Nats, durable: &str, journal: &Path) -> Worker {
        let args = [
            "worker",
            agent.to_str().unwrap(),
            "--nats",
            &nats.url,
            "--stream",
            "EVENTS",
            "--subject",
            "agent.events",
            "--durable",
            durable,
            "--journal",
            journal.to_str().unwrap(),
            "--batch",
            "8",
            "--ack-wait-ms",
            "2000",
            "--drain-timeout",
            "1",
        ];
        let mut child = hookrt(&args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("hookrt worker starts");
        let mut reader = BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        reader.read_line(&mut first).expect("read stdout");
        assert!(
            first.starts_with("consuming agent.events as"),
            "worker did not start: {first:?}"
        );
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        Worker(child)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn publish(nats: &Nats, lines: &str, reply_to: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.jsonl");
    std::fs::write(&file, lines).unwrap();
    let mut args = vec!["publish", "--nats", &nats.url, "--subject", "agent.events"];
    if let Some(to) = reply_to {
        args.extend(["--reply-to", to]);
    }
    args.push(file.to_str().unwrap());
    let out = hookrt(&args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// (event id, hook, handler, state) of every delivery in a journal, if it exists.
fn deliveries(journal: &Path) -> Vec<(String, String, String, String)> {
    if !journal.exists() {
        return Vec::new();
    }
    let conn = rusqlite::Connection::open(journal).unwrap();
    let mut stmt = conn
        .prepare("SELECT e.id, d.hook, d.handler, d.state FROM deliveries d JOIN events e ON e.seq = d.event_seq")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Polls `done` for up to a minute.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn two_workers_with_one_durable_name_deliver_every_event_once_per_hook() {
    let nats = Nats::start();
    let dir = tempfile::tempdir().unwrap();
    let (ja, jb) = (dir.path().join("a.db"), dir.path().join("b.db"));
    // The example agent, with a deadline no busy CI machine reaches: this
    // test counts deliveries, and a 200 ms timeout under load would turn one
    // into a dead letter.
    let patient = dir.path().join("agent");
    crate::common::copy(&agent(), &patient).unwrap();
    let config = std::fs::read_to_string(patient.join("hookrt.toml")).unwrap();
    std::fs::write(
        patient.join("hookrt.toml"),
        config.replace("deadline_ms = 200 ", "deadline_ms = 30_000 "),
    )
    .unwrap();
    assert!(
        std::fs::read_to_string(patient.join("hookrt.toml"))
            .unwrap()
            .contains("deadline_ms = 30_000")
    );
    let _a = Worker::start(&patient, &nats, "hooks", &ja);
    let _b = Worker::start(&patient, &nats, "hooks", &jb);
    // The transcript twice, as two sessions, and one malformed message.
    let mut lines = String::new();
    let mut ids = BTreeSet::new();
    for k in 0..2 {
        for l in transcript_text().lines() {
            let l = l
                .replace("\"id\":\"evt_", &format!("\"id\":\"k{k}_evt_"))
                .replace("ses_7f3a", &format!("ses_k{k}"));
            let v: serde_json::Value = serde_json::from_str(&l).unwrap();
            ids.insert(v["id"].as_str().unwrap().to_owned());
            lines.push_str(&l);
            lines.push('\n');
        }
    }
    lines.push_str("{this is not an envelope\n");
    publish(&nats, &lines, None);
    let all = || [deliveries(&ja), deliveries(&jb)].concat();
    wait_for("every event in one journal and every delivery done", || {
        let d = all();
        let events: BTreeSet<&String> = d.iter().map(|r| &r.0).collect();
        events.len() == ids.len() && d.iter().all(|r| r.3 != "pending")
    });
    let (a, b) = (deliveries(&ja), deliveries(&jb));
    let in_a: BTreeSet<&String> = a.iter().map(|r| &r.0).collect();
    let in_b: BTreeSet<&String> = b.iter().map(|r| &r.0).collect();
    assert!(
        in_a.is_disjoint(&in_b),
        "an event was taken by both workers"
    );
    let union: BTreeSet<String> = in_a.union(&in_b).map(|s| (*s).clone()).collect();
    assert_eq!(
        union, ids,
        "every event, and nothing else (the malformed one was refused)"
    );
    let rows = all();
    let unique: BTreeSet<(&String, &String, &String)> =
        rows.iter().map(|r| (&r.0, &r.1, &r.2)).collect();
    assert_eq!(
        unique.len(),
        rows.len(),
        "each (event, hook, handler) delivered once across both journals"
    );
    let audited = rows
        .iter()
        .filter(|r| r.1 == "audit" && r.3 == "done")
        .count();
    assert_eq!(
        audited,
        ids.len(),
        "the audit hook (`*`) got every event exactly once"
    );
}

#[test]
fn a_killed_workers_unacked_message_is_redelivered_to_another() {
    let nats = Nats::start();
    let dir = tempfile::tempdir().unwrap();
    let (ja, jb) = (dir.path().join("a.db"), dir.path().join("b.db"));
    // Worker A's only hook never returns, so A never finishes the decision
    // it was asked for and never acks it.
    let stuck = TempAgent::new()
        .hook("hostile/hooks/infinite_loop.rs", "infinite_loop.rs")
        .config("[hooks.infinite_loop]\nfuel = 10_000_000_000\ndeadline_ms = 60_000\n");
    let mut a = Worker::start(stuck.path(), &nats, "deciders", &ja);
    let text = transcript_text();
    let decision = text
        .lines()
        .find(|l| l.contains("\"kind\":\"actions.requested\""))
        .unwrap();
    let id = serde_json::from_str::<serde_json::Value>(decision).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    publish(&nats, &format!("{decision}\n"), Some("replies.test"));
    wait_for("worker A to take the decision", || {
        deliveries(&ja).iter().any(|r| r.0 == id)
    });
    a.0.kill().expect("SIGKILL worker A");
    let _ = a.0.wait();
    let _b = Worker::start(&agent(), &nats, "deciders", &jb);
    wait_for(
        "worker B to get the redelivered message and finish it",
        || {
            let b = deliveries(&jb);
            b.iter().any(|r| r.0 == id) && b.iter().all(|r| r.3 != "pending")
        },
    );
    assert!(
        deliveries(&jb)
            .iter()
            .any(|r| r.0 == id && r.1 == "policy" && r.3 == "done")
    );
}
