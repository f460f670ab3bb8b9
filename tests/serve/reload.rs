//! Hot reload over HTTP and SIGHUP: the new hooks swap in at one place among
//! the events, with no delivery lost or doubled; a folder that does not load
//! leaves the running hooks in place and the answer names the problem.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{self, TempAgent};
use crate::endpoints::samples;
use crate::{Server, transcript_text};

const NDJSON: &str = "application/x-ndjson";

/// Witness hooks (`*`, always ok) under the given slugs.
fn witnesses(slugs: &[&str]) -> TempAgent {
    slugs.iter().fold(TempAgent::new(), |agent, slug| {
        agent.hook("hostile/hooks/witness.rs", &format!("{slug}.rs"))
    })
}

/// The transcript's events under fresh ids `<tag>-<n>`, as NDJSON, and the ids.
fn batch(tag: &str) -> (String, Vec<String>) {
    let mut ids = Vec::new();
    let mut body = String::new();
    for (i, line) in transcript_text().lines().enumerate() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        let id = format!("{tag}-{i:02}");
        v["id"] = Value::String(id.clone());
        body.push_str(&v.to_string());
        body.push('\n');
        ids.push(id);
    }
    (body, ids)
}

/// Posts a batch; every event must be taken.
fn post_batch(server: &Server, tag: &str) -> Vec<String> {
    let (body, ids) = batch(tag);
    let reply = server.post("/v1/events", NDJSON, body.as_bytes());
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["taken"], ids.len(), "{}", reply.body);
    ids
}

/// Scrapes `/metrics` until `key` reads `want` (or 60 s passed); the samples.
fn metric_until(server: &Server, key: &str, want: f64) -> std::collections::BTreeMap<String, f64> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let page = server.get("/metrics");
        assert_eq!(page.status, 200, "{}", page.body);
        let s = samples(&page.body);
        if s.get(key) == Some(&want) || Instant::now() > deadline {
            return s;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A journaled delivery: `(hook, state, attempts)`.
type Delivery = (String, String, i64);

/// Each journaled event's id with its deliveries, in seq order.
fn journaled(path: &std::path::Path) -> Vec<(String, Vec<Delivery>)> {
    let db = rusqlite::Connection::open(path).unwrap();
    let mut events = db
        .prepare("SELECT seq, id FROM events WHERE origin = 'agent' ORDER BY seq")
        .unwrap();
    let rows: Vec<(i64, String)> = events
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut deliveries = db
        .prepare(
            "SELECT hook, state, attempts FROM deliveries WHERE event_seq = ?1 ORDER BY position",
        )
        .unwrap();
    rows.into_iter()
        .map(|(seq, id)| {
            let ds = deliveries
                .query_map([seq], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            (id, ds)
        })
        .collect()
}

#[test]
fn reload_swaps_the_hooks_with_no_lost_or_doubled_delivery() {
    let agent = witnesses(&["a", "b"]);
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.db");
    let server = Server::start(
        agent.path(),
        &[
            "--journal",
            journal.to_str().unwrap(),
            "--rate-limit",
            "0",
            "--threads",
            "2",
        ],
    );
    let first = post_batch(&server, "first");
    // The new set: `a` goes, `c` comes, `b` stays.
    std::fs::remove_file(agent.path().join("hooks/a.rs")).unwrap();
    common::copy(
        &common::example("hostile/hooks/witness.rs"),
        &agent.path().join("hooks/c.rs"),
    )
    .unwrap();
    // Events keep coming while the reload loads and swaps.
    let during = std::thread::scope(|s| {
        let poster = s.spawn(|| {
            (0..8)
                .flat_map(|n| post_batch(&server, &format!("during{n}")))
                .collect::<Vec<_>>()
        });
        let reply = server.post("/v1/admin/reload", "application/json", b"");
        assert_eq!(reply.status, 200, "{}", reply.body);
        let body = reply.json();
        assert_eq!(body["reloaded"], true);
        assert_eq!(body["previous"], serde_json::json!(["a", "b"]));
        assert_eq!(body["hooks"], serde_json::json!(["b", "c"]));
        poster.join().unwrap()
    });
    let last = post_batch(&server, "last");
    let total = first.len() + during.len() + last.len();
    let s = metric_until(&server, "hookrt_hook_reloads_total{result=\"ok\"}", 1.0);
    assert_eq!(s.get("hookrt_hooks"), Some(&2.0));
    let ready = server.get("/readyz").json();
    assert_eq!(ready["hooks"], 2);

    let (clean, rest) = server.terminate();
    assert!(clean, "{rest}");
    let summary: Value = serde_json::from_str(rest.lines().last().unwrap()).unwrap();
    assert_eq!(
        summary["summary"]["deliveries"],
        2 * total,
        "two deliveries per event, none doubled: {summary}"
    );
    assert_eq!(summary["summary"]["repeats"], 0);

    let events = journaled(&journal);
    assert_eq!(events.len(), total);
    let old: BTreeSet<&str> = ["a", "b"].into();
    let new: BTreeSet<&str> = ["b", "c"].into();
    let mut switched = false;
    for (id, deliveries) in &events {
        let hooks: BTreeSet<&str> = deliveries.iter().map(|(h, _, _)| h.as_str()).collect();
        assert_eq!(hooks.len(), deliveries.len(), "{id}: one delivery per hook");
        for (hook, state, attempts) in deliveries {
            assert_eq!((state.as_str(), *attempts), ("done", 1), "{id} to {hook}");
        }
        if hooks == new {
            switched = true;
        } else {
            assert_eq!(hooks, old, "{id}: one whole set");
            assert!(!switched, "{id} went to the old hooks after the swap");
        }
        if first.contains(id) {
            assert_eq!(hooks, old, "{id} was taken before the reload was asked for");
        }
        if last.contains(id) {
            assert_eq!(hooks, new, "{id} was taken after the reload answered");
        }
    }
}

#[test]
fn a_broken_reload_keeps_the_old_hooks_and_sighup_reloads_the_fixed_folder() {
    let agent = witnesses(&["a", "b"]);
    let server = Server::start(agent.path(), &[]);
    // Not a component: the folder does not load.
    std::fs::write(agent.path().join("hooks/broken.wasm"), b"not a component").unwrap();
    let reply = server.post("/v1/admin/reload", "application/json", b"");
    assert_eq!(reply.status, 422, "{}", reply.body);
    let body = reply.json();
    assert_eq!(body["code"], "reload_failed");
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("hooks/broken.wasm"), "{error}");
    assert!(error.contains("running hooks stay"), "{error}");
    let problems = body["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{body}");
    assert_eq!(problems[0]["file"], "hooks/broken.wasm");
    assert!(problems[0]["fix"].as_str().unwrap().len() > 3);
    // No token, no reload.
    let anonymous = crate::request(&server.addr, "POST", "/v1/admin/reload", &[], b"");
    assert_eq!(anonymous.status, 401);

    // The old hooks still deliver.
    post_batch(&server, "kept");
    let events = transcript_text().lines().count() as f64;
    let s = metric_until(
        &server,
        "hookrt_deliveries_total{hook=\"b\",outcome=\"ok\"}",
        events,
    );
    assert_eq!(
        s.get("hookrt_deliveries_total{hook=\"a\",outcome=\"ok\"}"),
        Some(&events)
    );
    assert_eq!(
        s.get("hookrt_hook_reloads_total{result=\"failed\"}"),
        Some(&1.0)
    );
    assert_eq!(s.get("hookrt_hooks"), Some(&2.0));

    // Fixed, and a hook added: SIGHUP swaps it in.
    std::fs::remove_file(agent.path().join("hooks/broken.wasm")).unwrap();
    common::copy(
        &common::example("hostile/hooks/witness.rs"),
        &agent.path().join("hooks/c.rs"),
    )
    .unwrap();
    let pid = server.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap()
            .success()
    );
    let s = metric_until(&server, "hookrt_hook_reloads_total{result=\"ok\"}", 1.0);
    assert_eq!(
        s.get("hookrt_hooks"),
        Some(&3.0),
        "the process lives on after SIGHUP"
    );
    post_batch(&server, "added");
    let s = metric_until(
        &server,
        "hookrt_deliveries_total{hook=\"c\",outcome=\"ok\"}",
        events,
    );
    assert_eq!(
        s.get("hookrt_deliveries_total{hook=\"a\",outcome=\"ok\"}"),
        Some(&(2.0 * events))
    );
    assert_eq!(
        s.get("hookrt_deliveries_total{hook=\"b\",outcome=\"ok\"}"),
        Some(&(2.0 * events))
    );
    let (clean, rest) = server.terminate();
    assert!(clean, "{rest}");
}
