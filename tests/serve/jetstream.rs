//! `hookrt worker` fleets on a real nats-server (started by `scripts/nats`,
//! which installs it when missing): subjects per session with server-side
//! dedup, two workers with one SIGKILLed mid-stream at three points losing
//! nothing and keeping per-session per-hook order, a failing hook retried,
//! dead-lettered and re-driven alone, the failure cascade published
//! once, and nats-server restarted under a busy worker. These tests fail, never skip, when NATS cannot be had; everything
//! they start is stopped when they end, pass or fail.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{TempAgent, repo};
use crate::{agent, hookrt, transcript_text};

/// A nats-server with JetStream, stopped when dropped.
pub(crate) struct Nats {
    pub url: String,
    /// Its process (every server's, for a cluster).
    pid: String,
    /// A cluster's servers: name, URL, process.
    pub nodes: Vec<(String, String, String)>,
    /// Its storage and logs, kept across a restart, removed with it.
    dir: tempfile::TempDir,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl Nats {
    pub(crate) fn start() -> Nats {
        Nats::start_with(&[], &[])
    }

    /// A server started with these further `nats-server` arguments (a
    /// `-c FILE` say) and environment variables (what its configuration's
    /// `$VARIABLES` name).
    pub(crate) fn start_with(args: &[&str], env: &[(&str, &str)]) -> Nats {
        let dir = tempfile::Builder::new()
            .prefix("hookrt-nats.")
            .tempdir()
            .unwrap();
        let mut nats = Nats {
            url: String::new(),
            pid: String::new(),
            nodes: Vec::new(),
            dir,
            args: args.iter().map(|a| a.to_string()).collect(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        nats.launch(None);
        nats
    }

    /// `n` servers of one JetStream cluster (`scripts/nats --cluster N`):
    /// `url` lists them all, `nodes` names each.
    pub(crate) fn cluster(n: usize) -> Nats {
        let dir = tempfile::Builder::new()
            .prefix("hookrt-nats.")
            .tempdir()
            .unwrap();
        let out = Command::new(repo().join("scripts/nats"))
            .args(["--cluster", &n.to_string()])
            .env("HOOKRT_NATS_DIR", dir.path())
            .output()
            .expect("scripts/nats runs");
        assert!(
            out.status.success(),
            "scripts/nats could not start a cluster:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = text.lines();
        let url = lines.next().expect("URL line").to_owned();
        let nodes: Vec<(String, String, String)> = lines
            .filter_map(|l| {
                let mut w = l.strip_prefix("node ")?.split(' ');
                Some((w.next()?.into(), w.next()?.into(), w.next()?.into()))
            })
            .collect();
        assert_eq!(nodes.len(), n, "{text}");
        Nats {
            url,
            pid: nodes
                .iter()
                .map(|(_, _, p)| p.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            nodes,
            dir,
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    /// Runs `scripts/nats` on this server's storage, on `port` or a free one.
    fn launch(&mut self, port: Option<&str>) {
        let mut script = Command::new(repo().join("scripts/nats"));
        script
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("HOOKRT_NATS_DIR", self.dir.path());
        if let Some(port) = port {
            script.env("HOOKRT_NATS_PORT", port);
        }
        let out = script.output().expect("scripts/nats runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "JetStream tests need nats-server and scripts/nats could not start one:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut lines = text.lines();
        self.url = lines.next().expect("URL line").to_owned();
        self.pid = lines
            .next()
            .and_then(|l| l.strip_prefix("pid "))
            .expect("pid line")
            .to_owned();
    }

    /// Stops the server (SIGTERM: it shuts down as an operator's restart
    /// does) and starts it again on the same port with the same storage.
    pub(crate) fn restart(&mut self) {
        let _ = Command::new("kill").arg(&self.pid).status();
        // Gone, or a zombie nobody reaped yet (its ports are closed).
        let stat = format!("/proc/{}/stat", self.pid);
        wait_for("nats-server to stop", || {
            match std::fs::read_to_string(&stat) {
                Err(_) => true,
                Ok(s) => s
                    .rsplit_once(')')
                    .is_some_and(|(_, state)| state.trim_start().starts_with('Z')),
            }
        });
        let port = self.url.rsplit(':').next().unwrap().to_owned();
        let url = self.url.clone();
        self.launch(Some(&port));
        assert_eq!(self.url, url, "restarted where it was");
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(self.pid.split_whitespace())
            .status();
    }
}

/// A running `hookrt worker --print-deliveries`; its delivery lines are
/// collected as they come; killed when dropped.
pub(crate) struct Worker {
    child: Child,
    lines: Arc<Mutex<Vec<Value>>>,
    summary: Arc<Mutex<Option<Value>>>,
}

impl Worker {
    pub(crate) fn start(agent: &Path, nats: &Nats, extra: &[&str]) -> Worker {
        Worker::start_as(agent, nats, extra, &[])
    }

    /// A worker with these environment variables (a NATS user's
    /// credentials, say).
    pub(crate) fn start_as(
        agent: &Path,
        nats: &Nats,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Worker {
        let mut args = vec![
            "worker",
            agent.to_str().unwrap(),
            "--nats",
            &nats.url,
            "--partitions",
            "4",
            "--lease-ttl-ms",
            "1500",
            "--drain-timeout",
            "1",
            "--print-deliveries",
        ];
        // A short ack wait, unless the test gives its own.
        if !extra.contains(&"--ack-wait-ms") {
            args.extend(["--ack-wait-ms", "1500"]);
        }
        args.extend(extra);
        let mut child = hookrt(&args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .spawn()
            .expect("hookrt worker starts");
        let stdout = child.stdout.take().expect("stdout");
        // Guarded before anything can fail: a failed start still kills it.
        let worker = Worker {
            child,
            lines: Arc::new(Mutex::new(Vec::new())),
            summary: Arc::new(Mutex::new(None)),
        };
        let mut reader = BufReader::new(stdout);
        let mut first = String::new();
        reader.read_line(&mut first).expect("read stdout");
        assert!(
            first.starts_with("consuming HOOKRT_EVENTS as"),
            "worker did not start: {first:?}"
        );
        let (sink, summary) = (worker.lines.clone(), worker.summary.clone());
        std::thread::spawn(move || {
            for line in reader.lines() {
                let Ok(line) = line else { break };
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                // Delivery lines (the front-end kit's, with the placement),
                // and the summary line at the end.
                if v.get("handler").is_some() {
                    sink.lock().unwrap().push(v);
                } else if let Some(s) = v.get("summary") {
                    *summary.lock().unwrap() = Some(s.clone());
                }
            }
        });
        worker
    }

    pub(crate) fn deliveries(&self) -> Vec<Value> {
        self.lines.lock().unwrap().clone()
    }

    /// Stops the worker with SIGTERM (it drains) and returns its summary.
    pub(crate) fn terminate(mut self) -> Value {
        let status = crate::sigterm(&mut self.child);
        assert!(status.success(), "hookrt worker exits cleanly: {status}");
        wait_for("the worker's summary line", || {
            self.summary.lock().unwrap().is_some()
        });
        self.summary.lock().unwrap().clone().expect("a summary")
    }

    pub(crate) fn kill(&mut self) {
        self.child.kill().expect("SIGKILL the worker");
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `hookrt publish` of `lines`: its receipts.
pub(crate) fn publish(nats: &Nats, lines: &str, extra: &[&str]) -> Vec<Value> {
    let out = publish_as(nats, lines, extra, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// `hookrt publish` of `lines` with these environment variables: how it
/// ended.
pub(crate) fn publish_as(
    nats: &Nats,
    lines: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.jsonl");
    std::fs::write(&file, lines).unwrap();
    let mut args = vec!["publish", "--nats", &nats.url, "--partitions", "4"];
    args.extend(extra);
    args.push(file.to_str().unwrap());
    hookrt(&args).envs(env.iter().copied()).output().unwrap()
}

/// `hookrt worker SUBCOMMAND --nats URL ...`: its JSON lines.
pub(crate) fn fleet(nats: &Nats, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["worker"];
    all.extend(args);
    all.extend(["--nats", &nats.url]);
    let out = hookrt(&all).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Polls `done` for up to two minutes.
pub(crate) fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The example agent with a deadline no busy machine reaches: these tests
/// count deliveries, and a 200 ms timeout under load would fail one.
pub(crate) fn patient_agent(dir: &Path) -> PathBuf {
    let patient = dir.join("agent");
    crate::common::copy(&agent(), &patient).unwrap();
    let config = std::fs::read_to_string(patient.join("hookrt.toml")).unwrap();
    let patched = config.replace("deadline_ms = 200 ", "deadline_ms = 30_000 ");
    assert_ne!(config, patched);
    std::fs::write(patient.join("hookrt.toml"), patched).unwrap();
    patient
}

/// The transcript as `sessions` sessions, each its own ids: each session's
/// lines, and each event id's (session, position in its session).
pub(crate) fn sessions(n: usize) -> (Vec<String>, BTreeMap<String, (String, usize)>) {
    let mut all = Vec::new();
    let mut order = BTreeMap::new();
    for k in 0..n {
        let mut lines = String::new();
        for (i, l) in transcript_text().lines().enumerate() {
            let l = l
                .replace("\"id\":\"evt_", &format!("\"id\":\"k{k}_evt_"))
                .replace("ses_7f3a", &format!("ses_k{k}"));
            let v: Value = serde_json::from_str(&l).unwrap();
            order.insert(
                v["id"].as_str().unwrap().to_owned(),
                (format!("ses_k{k}"), i),
            );
            lines.push_str(&l);
            lines.push('\n');
        }
        all.push(lines);
    }
    (all, order)
}

/// Every (event, hook, handler) `hookrt run` delivers for each session on
/// its own: what a fleet may deliver, and what it must (`required`). A file
/// edit stops at the hook that owns it, and the example's protected-paths
/// hook decides from its `state`, which is per worker and per path, not per
/// session: whether the hooks after it are asked depends on which worker ran
/// which session first, so only the owner's delivery is required. With
/// `order`, each event's place in its session ([`sessions`]).
pub(crate) fn planned(
    agent: &Path,
    sessions: &[String],
    order: BTreeMap<String, (String, usize)>,
) -> Planned {
    let mut all = BTreeSet::new();
    let mut required = BTreeSet::new();
    for lines in sessions {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("events.jsonl");
        std::fs::write(&file, lines).unwrap();
        let out = hookrt(&[
            "run",
            agent.to_str().unwrap(),
            "--events",
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
        for v in String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v.get("hook").is_some())
        {
            if v["kind"] != "file.edit.requested" || v["hook"] == "protected-paths" {
                required.insert(key(&v));
            }
            all.insert(key(&v));
        }
    }
    Planned {
        expected: all,
        required,
        order,
    }
}

type Keys = BTreeSet<(String, String, String)>;

/// What a fleet must deliver, may deliver, and in which order.
pub(crate) struct Planned {
    expected: Keys,
    pub(crate) required: Keys,
    order: BTreeMap<String, (String, usize)>,
}

impl Planned {
    /// How many required deliveries `rows` lack.
    pub(crate) fn left(&self, rows: Vec<Value>) -> usize {
        let seen = ok_keys(&rows);
        self.required.difference(&seen).count()
    }

    /// Waits for every required delivery among `rows()` while they keep
    /// coming: `seconds` with no new one fails it (`stalled`: what that
    /// means), however long a loaded machine takes over the whole. Then
    /// checks that nothing unplanned ran, that order held, and that nothing
    /// is dead.
    pub(crate) fn done_in_order(
        &self,
        nats: &Nats,
        rows: impl Fn() -> Vec<Value>,
        seconds: u64,
        stalled: &str,
    ) {
        let quiet = Duration::from_secs(seconds);
        let (mut done, mut since) = (0, Instant::now());
        loop {
            let seen = ok_keys(&rows());
            if self.required.is_subset(&seen) {
                break;
            }
            let now_done = self.required.intersection(&seen).count();
            if now_done > done {
                (done, since) = (now_done, Instant::now());
            }
            assert!(
                since.elapsed() < quiet,
                "{done} of {} required deliveries, none new for {seconds} s: {stalled}",
                self.required.len(),
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut rows = rows();
        rows.sort_by_key(|d| d["at_us"].as_u64().unwrap());
        let unexpected: Vec<_> = rows
            .iter()
            .filter(|d| !self.expected.contains(&key(d)))
            .collect();
        assert!(
            unexpected.is_empty(),
            "deliveries nobody planned: {unexpected:?}"
        );
        order_holds(&rows, &self.order);
        let dead = fleet(nats, &["dead"]);
        assert!(dead.is_empty(), "nothing dead: {dead:?}");
    }
}

/// The deliveries among `rows` that ended ok.
fn ok_keys(rows: &[Value]) -> Keys {
    rows.iter()
        .filter(|d| d["outcome"] == "ok")
        .map(key)
        .collect()
}

fn key(v: &Value) -> (String, String, String) {
    let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
    (s("event_id"), s("hook"), s("handler"))
}

#[test]
fn events_go_to_their_session_subject_and_a_duplicate_publish_is_stored_once() {
    let nats = Nats::start();
    let (lines, order) = sessions(2);
    let lines = lines.concat();
    let first = publish(&nats, &lines, &[]);
    assert_eq!(first.len(), order.len());
    assert!(!first.is_empty());
    for r in &first {
        assert_eq!(r["durability"], "persisted", "{r}");
        assert_eq!(r["duplicate"], false, "{r}");
        let (session, _) = &order[r["event_id"].as_str().unwrap()];
        let subject = r["subject"].as_str().unwrap();
        let prefix = format!("hookrt.events.coder.{session}.");
        assert!(subject.starts_with(&prefix), "{subject} under {prefix}");
    }
    let again = publish(&nats, &lines, &[]);
    for (a, b) in first.iter().zip(&again) {
        assert_eq!(
            b["duplicate"], true,
            "the stream dropped the re-publish: {b}"
        );
        assert_eq!(a["seq"], b["seq"], "and answered with the stored message");
    }
    let last = first.iter().map(|r| r["seq"].as_u64().unwrap()).max();
    assert_eq!(last, Some(order.len() as u64), "stored once each");
}

#[test]
fn an_id_is_its_agents_on_the_fleet_and_another_event_under_it_is_refused() {
    let nats = Nats::start();
    let (lines, _) = sessions(1);
    let coder = &lines[0];
    let first = publish(&nats, coder, &[]);
    // Another agent's events under the same ids: each stored, its own.
    let reviewer = coder.replace("\"agent\":\"coder\"", "\"agent\":\"reviewer\"");
    assert_ne!(&reviewer, coder);
    let theirs = publish(&nats, &reviewer, &[]);
    assert_eq!(theirs.len(), first.len());
    for (a, b) in first.iter().zip(&theirs) {
        assert_eq!(b["duplicate"], false, "another agent's event: {b}");
        assert_ne!(a["seq"], b["seq"]);
    }
    // Sent again: a duplicate of the agent's own.
    let again = publish(&nats, &reviewer, &[]);
    assert!(again.iter().all(|r| r["duplicate"] == true), "{again:?}");
    // One of coder's events changed under its id: refused, naming it.
    let mut changed: Value = serde_json::from_str(coder.lines().next().unwrap()).unwrap();
    let id = changed["id"].as_str().unwrap().to_owned();
    changed["timestamp"] = "2026-11-30T23:59:59Z".into();
    let out = publish_as(&nats, &format!("{changed}\n"), &[], &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "event `{id}` of agent `coder` was taken before (stream seq {}) by an event that says something else",
            first[0]["seq"]
        )),
        "{err}"
    );
}

/// Per (session, hook, handler) in `rows` (sorted by when they ended):
/// events in publish order, a repeat only of the event just delivered, with
/// a higher attempt.
fn order_holds(rows: &[Value], order: &BTreeMap<String, (String, usize)>) {
    let mut last: BTreeMap<(String, String, String), (usize, u64)> = BTreeMap::new();
    for d in rows {
        let (event, hook, handler) = key(d);
        let (session, position) = order[&event].clone();
        let attempt = d["attempt"].as_u64().unwrap();
        if let Some((p, a)) = last.get(&(session.clone(), hook.clone(), handler.clone())) {
            assert!(
                position > *p || (position == *p && attempt > *a),
                "hook {hook} ({handler}) of {session} got event #{position} attempt {attempt} after #{p} attempt {a}"
            );
        }
        last.insert((session, hook, handler), (position, attempt));
    }
}

/// Starts two workers, publishes four sessions, SIGKILLs worker A once it
/// printed `kill_after` deliveries, and checks the fleet's promises.
fn kill_one_of_two(kill_after: usize) {
    let nats = Nats::start();
    let dir = tempfile::tempdir().unwrap();
    let patient = patient_agent(dir.path());
    let (lines, order) = sessions(4);
    let plan = planned(&patient, &lines, order);
    assert!(
        plan.required.len() > 500,
        "{} required deliveries",
        plan.required.len()
    );
    let lines = lines.concat();
    let mut a = Worker::start(&patient, &nats, &[]);
    let b = Worker::start(&patient, &nats, &[]);
    // Both have their share of the partitions before anything is published.
    std::thread::sleep(Duration::from_millis(1200));
    publish(&nats, &lines, &[]);
    // Polled closely: a worker runs a few hundred deliveries a second.
    let deadline = Instant::now() + Duration::from_secs(120);
    while a.deliveries().len() < kill_after {
        assert!(
            Instant::now() < deadline,
            "worker A never reached {kill_after} deliveries"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    a.kill();
    let by_a = a.deliveries().len();
    let all = || [a.deliveries(), b.deliveries()].concat();
    plan.done_in_order(
        &nats,
        all,
        120,
        "the killed worker's partitions did not move",
    );
    assert!(
        by_a >= kill_after && !b.deliveries().is_empty(),
        "both workers took a share (A: {by_a})"
    );
    eprintln!(
        "killed A after {by_a} deliveries; B ran {} (repeats at attempt 2+: {})",
        b.deliveries().len(),
        b.deliveries()
            .iter()
            .filter(|d| d["attempt"].as_u64() > Some(1))
            .count()
    );
}

#[test]
fn a_worker_killed_early_loses_nothing_and_order_holds() {
    kill_one_of_two(1);
}

#[test]
fn a_worker_killed_midway_loses_nothing_and_order_holds() {
    kill_one_of_two(40);
}

#[test]
fn a_worker_killed_late_loses_nothing_and_order_holds() {
    kill_one_of_two(100);
}

/// Partitions moving between live workers while they are busy: B joins (A
/// gives back half its partitions, each after the message it runs), B stops
/// (A takes them back), C joins. With an ack wait no test waits out (120 s),
/// a message left on a closed pull would hold its partition past the
/// deadline: nats-server 2.9 keeps a redelivery that finds only requests of
/// an inbox that is gone until the next ack wait (runtime/worker/src/pull.rs).
/// Every planned delivery is done, in order, nothing dead.
#[test]
fn partitions_moving_between_busy_workers_lose_nothing_and_stall_nowhere() {
    let nats = Nats::start();
    let dir = tempfile::tempdir().unwrap();
    let patient = patient_agent(dir.path());
    let (lines, order) = sessions(16);
    let plan = planned(&patient, &lines, order);
    let lines = lines.concat();
    let slow = ["--ack-wait-ms", "120000"];
    let a = Worker::start(&patient, &nats, &slow);
    std::thread::sleep(Duration::from_millis(1200));
    publish(&nats, &lines, &[]);
    wait_for("worker A's first deliveries", || a.deliveries().len() >= 40);
    let b = Worker::start(&patient, &nats, &slow);
    wait_for("worker B's first deliveries", || b.deliveries().len() >= 40);
    let by_b = b.lines.clone();
    b.terminate();
    let before_c = a.deliveries().len();
    let a_and_b = || [a.deliveries(), by_b.lock().unwrap().clone()].concat();
    let left = plan.left(a_and_b());
    eprintln!("B stopped with {left} required deliveries left");
    // On a loaded machine A may have finished its own partitions by now,
    // and fewer than 40 may be left in those B gave back.
    wait_for("A busy again", || {
        a.deliveries().len() >= before_c + 40 || plan.left(a_and_b()) == 0
    });
    let c = Worker::start(&patient, &nats, &slow);
    let all = || [a_and_b(), c.deliveries()].concat();
    plan.done_in_order(&nats, all, 60, "a partition stalled");
}

/// nats-server stopped and started again where it was (same port, same
/// storage) while a worker is busy: the worker reconnects, the stream,
/// its consumers, marks and leases are still there (file-backed), and every
/// planned delivery of the events published before and after the restart is
/// done, in order; nothing dead.
#[test]
fn a_nats_restart_while_a_worker_is_busy_loses_nothing_and_order_holds() {
    let mut nats = Nats::start();
    let dir = tempfile::tempdir().unwrap();
    let patient = patient_agent(dir.path());
    let (lines, order) = sessions(8);
    let plan = planned(&patient, &lines, order);
    let (before, after) = lines.split_at(4);
    let a = Worker::start(&patient, &nats, &[]);
    std::thread::sleep(Duration::from_millis(1200));
    publish(&nats, &before.concat(), &[]);
    wait_for("the worker's first deliveries", || {
        a.deliveries().len() >= 40
    });
    nats.restart();
    publish(&nats, &after.concat(), &[]);
    plan.done_in_order(
        &nats,
        || a.deliveries(),
        90,
        "the worker did not carry on after the restart",
    );
}

#[test]
fn a_failing_hook_is_retried_alone_dead_lettered_and_redriven_alone_and_cascades_once() {
    let nats = Nats::start();
    let agent = TempAgent::new()
        .hook("agent/hooks/audit.rs", "audit.rs")
        .hook("hostile/hooks/fails.rs", "fails.rs")
        .config("order = [\"audit\"]\n[hooks.fails]\ncritical = true\nmax_attempts = 2\nbackoff_ms = 100\n");
    let mut w = Worker::start(agent.path(), &nats, &[]);
    // Two events of one turn.
    let text = transcript_text();
    let of_turn: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.contains("\"turn\":\"turn_1\"")
                && (l.contains("\"kind\":\"turn.started\"")
                    || l.contains("\"kind\":\"message.received\""))
        })
        .take(2)
        .collect();
    assert_eq!(of_turn.len(), 2);
    let ids: Vec<String> = of_turn
        .iter()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    publish(&nats, &format!("{}\n", of_turn.join("\n")), &[]);
    publish(
        &nats,
        "{not an envelope\n",
        &["--raw-subject", "hookrt.events.x.y.0"],
    );
    // Each event: audit once; fails twice (attempts 1, 2), then dead.
    // fails' final failure raises turn.failed once, then session.failed.
    let kinds_seen = |w: &Worker| -> Vec<(String, String, u64, String)> {
        w.deliveries()
            .iter()
            .map(|d| {
                (
                    d["event_id"].as_str().unwrap().to_owned(),
                    d["hook"].as_str().unwrap().to_owned(),
                    d["attempt"].as_u64().unwrap(),
                    d["outcome"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    wait_for(
        "five dead letters (two events, turn.failed, session.failed, malformed)",
        || fleet(&nats, &["dead"]).len() == 5,
    );
    let seen = kinds_seen(&w);
    for id in &ids {
        let audit: Vec<_> = seen
            .iter()
            .filter(|s| &s.0 == id && s.1 == "audit")
            .collect();
        assert_eq!(
            audit.len(),
            1,
            "audit ran once for {id}, not again on the retry: {seen:?}"
        );
        let fails: Vec<u64> = seen
            .iter()
            .filter(|s| &s.0 == id && s.1 == "fails")
            .map(|s| s.2)
            .collect();
        assert_eq!(fails, [1, 2], "fails ran at attempts 1 and 2 for {id}");
    }
    let cascades: Vec<_> = seen
        .iter()
        .filter(|s| s.1 == "audit" && !ids.contains(&s.0))
        .collect();
    assert_eq!(
        cascades.len(),
        2,
        "one turn.failed and one session.failed: {seen:?}"
    );
    let dead = fleet(&nats, &["dead"]);
    let malformed: Vec<_> = dead
        .iter()
        .filter(|d| d.get("event_id").is_none())
        .collect();
    assert_eq!(malformed.len(), 1, "{dead:?}");
    let event_dead = dead
        .iter()
        .find(|d| d["event_id"] == ids[0].as_str())
        .expect("the first event is dead");
    assert!(
        event_dead["failed"]
            .as_str()
            .unwrap()
            .contains("fails * error"),
        "{event_dead}"
    );
    // Re-drive the first event only: fails runs again, at attempt 3; audit does not.
    let seq = event_dead["seq"].as_u64().unwrap().to_string();
    let redriven = fleet(&nats, &["redrive", "--seq", &seq]);
    assert_eq!(redriven.len(), 1);
    assert!(redriven[0].get("redriven").is_some(), "{redriven:?}");
    wait_for("the re-driven event's failing hook to run again", || {
        kinds_seen(&w)
            .iter()
            .any(|s| s.0 == ids[0] && s.1 == "fails" && s.2 == 3)
    });
    wait_for("it to be dead again", || fleet(&nats, &["dead"]).len() == 5);
    let seen = kinds_seen(&w);
    assert_eq!(
        seen.iter()
            .filter(|s| s.0 == ids[0] && s.1 == "audit")
            .count(),
        1,
        "audit finished before: not run again"
    );
    // The malformed one has nothing to re-drive.
    let kept = fleet(&nats, &["redrive", "--all"]);
    assert!(kept.iter().any(|r| r.get("kept").is_some()), "{kept:?}");
    w.kill();
}

#[test]
fn serve_with_nats_publishes_http_events_persisted_after_the_ack_and_the_fleet_delivers_them() {
    let nats = Nats::start();
    let dir = tempfile::tempdir().unwrap();
    let patient = patient_agent(dir.path());
    let server = crate::Server::start(&patient, &["--nats", &nats.url, "--partitions", "4"]);
    let text = transcript_text();
    let events = text.lines().filter(|l| !l.trim().is_empty()).count();
    let reply = server.post("/v1/events", "application/x-ndjson", text.as_bytes());
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = reply.json();
    assert_eq!(body["durability"], "persisted");
    assert_eq!(body["taken"], events);
    for r in body["results"].as_array().unwrap() {
        assert_eq!(r["receipt"]["durability"], "persisted", "{r}");
        assert_eq!(r["receipt"]["duplicate"], false, "{r}");
    }
    // The same events again: the stream recognises every id.
    let again = server
        .post("/v1/events", "application/x-ndjson", text.as_bytes())
        .json();
    assert!(
        again["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["receipt"]["duplicate"] == true),
        "{again}"
    );
    // Nothing was delivered in the server; a worker delivers each event once.
    let w = Worker::start(&patient, &nats, &[]);
    // Each delivery once, in whatever order: no order to check.
    let plan = planned(&patient, std::slice::from_ref(&text), BTreeMap::new());
    wait_for("the worker to deliver the posted transcript", || {
        let seen: Keys = w.deliveries().iter().map(key).collect();
        plan.required.is_subset(&seen)
    });
    std::thread::sleep(Duration::from_millis(300));
    let rows = w.deliveries();
    let unique: Keys = rows.iter().map(key).collect();
    assert_eq!(unique.len(), rows.len(), "each delivery once");
    assert!(unique.is_subset(&plan.expected));
}
