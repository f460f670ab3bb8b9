//! At-least-once across crashes: `hookrt run --journal` is SIGKILLed at random
//! points over one event stream and restarted each time; the journal and the
//! deliveries it printed prove every (event, hook, handler) ran, every repeat
//! carried a higher attempt, and each hook saw events in stream order.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::repo;

const COPIES: usize = 300;
const KILLS: usize = 20;


/// The example transcript repeated with fresh ids and sequences.
fn stream(path: &Path) -> Vec<String> {
    let text = fs::read_to_string(repo().join("example-hooks/agent/transcript.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut ids = Vec::new();
    let mut out = String::new();
    for copy in 0..COPIES {
        for (i, line) in lines.iter().enumerate() {
            let mut v = line.clone();
            let id = format!("c{copy:02}-{}", v["id"].as_str().unwrap());
            v["id"] = Value::String(id.clone());
            v["coordinates"]["sequence"] = Value::from((copy * lines.len() + i) as u64);
            out.push_str(&v.to_string());
            out.push('\n');
            ids.push(id);
        }
    }
    fs::write(path, out).unwrap();
    ids
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A small deterministic generator, so a failing run can be reproduced.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

#[test]
fn sigkill_at_random_points_loses_no_delivery_and_every_repeat_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.jsonl");
    let ids = stream(&events);
    let index: HashMap<&str, usize> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let db = dir.path().join("journal.db");
    // The example agent, with a deadline no loaded machine can hit: a timeout
    // would dead-letter a delivery, and this test is about crashes only.
    let agent = dir.path().join("agent");
    copy_tree(
        &repo().join("example-hooks/agent/hooks"),
        &agent.join("hooks"),
    );
    let config = fs::read_to_string(repo().join("example-hooks/agent/hookrt.toml")).unwrap();
    fs::write(
        agent.join("hookrt.toml"),
        config.replace("deadline_ms = 200", "deadline_ms = 60000"),
    )
    .unwrap();
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hookrt-cache");
    let mut rng = Lcg(0x5eed_2026);

    let mut outputs = Vec::new();
    let mut kills = 0;
    for run in 0.. {
        assert!(run < 500, "the stream never completed");
        let out_path = dir.path().join(format!("run-{run:03}.jsonl"));
        let mut child = Command::new(crate::hookrt_bin())
            .args([
                "run",
                agent.to_str().unwrap(),
                "--events",
                events.to_str().unwrap(),
                "--journal",
                db.to_str().unwrap(),
            ])
            .env("HOOKRT_CACHE_DIR", &cache)
            .stdout(Stdio::from(fs::File::create(&out_path).unwrap()))
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        outputs.push(out_path);
        if kills == KILLS {
            assert!(
                child.wait().unwrap().success(),
                "the final, unkilled run succeeds"
            );
            break;
        }
        let delay = Duration::from_millis(5 + rng.next(120));
        let start = Instant::now();
        loop {
            if child.try_wait().unwrap().is_some() {
                break; // finished before its kill time: fine, start again
            }
            if start.elapsed() >= delay {
                child.kill().unwrap(); // SIGKILL
                child.wait().unwrap();
                kills += 1;
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    // What the journal holds.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mut q = conn
        .prepare("SELECT e.id, d.hook, d.handler, d.attempts, d.state FROM deliveries d JOIN events e ON e.seq = d.event_seq")
        .unwrap();
    let journal: BTreeMap<(String, String, String), (u32, String)> = q
        .query_map([], |r| {
            Ok(((r.get(0)?, r.get(1)?, r.get(2)?), (r.get(3)?, r.get(4)?)))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let events_stored: i64 = conn
        .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        events_stored as usize,
        ids.len(),
        "every event was stored exactly once"
    );
    assert_eq!(
        journal.len(),
        COPIES * 139,
        "the plan of every event is in the journal"
    );
    let not_done: Vec<_> = journal
        .iter()
        .filter(|(_, (_, state))| state != "done")
        .take(5)
        .collect();
    assert!(
        not_done.is_empty(),
        "nothing left pending or dead: {not_done:?}"
    );

    // What the deliveries printed (each is written before its ack).
    let mut seen: BTreeMap<(String, String, String), Vec<u32>> = BTreeMap::new();
    let mut printed = 0;
    for path in &outputs {
        let mut last_per_hook: HashMap<String, usize> = HashMap::new();
        for line in fs::read_to_string(path).unwrap().lines() {
            // A SIGKILL can cut the last line short; a cut line was never acked.
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            // Delivery lines only (not summaries or resolutions).
            let (Some(event_id), Some(_)) = (v["event_id"].as_str(), v["hook"].as_str()) else {
                continue;
            };
            printed += 1;
            let hook = v["hook"].as_str().unwrap().to_owned();
            let position = index[event_id];
            let last = last_per_hook.entry(hook.clone()).or_insert(0);
            assert!(
                position >= *last,
                "{hook} saw {event_id} after a later event in {}",
                path.display()
            );
            *last = position;
            let key = (
                event_id.to_owned(),
                hook,
                v["handler"].as_str().unwrap().to_owned(),
            );
            seen.entry(key)
                .or_default()
                .push(v["attempt"].as_u64().unwrap() as u32);
        }
    }
    for (key, (attempts, _)) in &journal {
        let runs = seen
            .get(key)
            .unwrap_or_else(|| panic!("{key:?} is acked in the journal but never ran"));
        assert!(
            runs.windows(2).all(|w| w[1] > w[0]),
            "{key:?}: a repeat did not raise the attempt: {runs:?}"
        );
        assert!(runs.iter().skip(1).all(|a| *a > 1));
        assert!(runs.last().unwrap() <= attempts);
    }
    assert_eq!(seen.len(), journal.len());
    let repeats = printed - seen.len();
    let repeated_in_journal = journal.values().filter(|(a, _)| *a > 1).count();
    println!(
        "kills: {kills}, runs: {}, events: {}, deliveries: {}, printed: {printed}, repeats: {repeats}, deliveries with attempt > 1 in the journal: {repeated_in_journal}",
        outputs.len(),
        ids.len(),
        journal.len()
    );
    assert_eq!(kills, KILLS);
}
