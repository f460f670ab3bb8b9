//! The fleet treats every publisher as hostile: a worker answers only to a
//! reply inbox (never a KV key or a JetStream API subject a message names),
//! delivers an event only from its own session's subject, re-drives a dead
//! letter only to an event subject, and takes credentials from the
//! environment, never the URL. On a real nats-server, with the same client
//! hookrt-worker uses.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;

use crate::common::{TempAgent, succeeded};
use crate::jetstream::{Nats, Worker, fleet, publish, publish_as, wait_for};
use crate::{hookrt, transcript_text};

fn line(kind: &str, id: &str) -> String {
    let text = transcript_text();
    let l = text
        .lines()
        .find(|l| l.contains(&format!("\"kind\":\"{kind}\"")))
        .unwrap();
    let mut v: Value = serde_json::from_str(l).unwrap();
    v["id"] = id.into();
    v.to_string()
}

fn dead(nats: &Nats) -> Vec<Value> {
    fleet(nats, &["dead"])
}

#[test]
fn a_publisher_cannot_steer_replies_subjects_or_redrives_and_credentials_stay_out_of_the_url() {
    let nats = Nats::start();
    let agent = TempAgent::new().hook("testing/hooks/deny_all.rs", "deny_all.rs");
    let w = Worker::start(agent.path(), &nats, &[]);
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let _in_runtime = tokio.enter();
    let client = tokio.block_on(async_nats::connect(&nats.url)).unwrap();
    let mut inbox = tokio.block_on(client.subscribe("_INBOX.trust.>")).unwrap();
    let planted_key = "$KV.hookrt-done-hooks.planted";
    let mut planted = tokio.block_on(client.subscribe(planted_key)).unwrap();
    let mut api = tokio
        .block_on(client.subscribe("$JS.API.STREAM.DELETE.>"))
        .unwrap();
    tokio.block_on(client.flush()).unwrap();

    // A reply inbox gets the decision; a KV key or an API subject gets nothing.
    publish(
        &nats,
        &format!("{}\n", line("actions.requested", "trust-1")),
        &["--reply-to", "_INBOX.trust.1"],
    );
    let answer = tokio
        .block_on(async { tokio::time::timeout(Duration::from_secs(60), inbox.next()).await })
        .expect("an answer on the inbox")
        .unwrap();
    let v: Value = serde_json::from_slice(&answer.payload).unwrap();
    assert_eq!(v["receipt"]["event_id"], "trust-1");
    assert_eq!(
        v["resolution"]["tool_approval"]["calls"][0]["verdict"]["answer"], "deny",
        "{v}"
    );
    for (id, to) in [
        ("trust-2", planted_key),
        ("trust-3", "$JS.API.STREAM.DELETE.HOOKRT_EVENTS"),
    ] {
        publish(
            &nats,
            &format!("{}\n", line("actions.requested", id)),
            &["--reply-to", to],
        );
        wait_for(&format!("{id} delivered"), || {
            w.deliveries().iter().any(|d| d["event_id"] == id)
        });
    }
    std::thread::sleep(Duration::from_millis(500));
    for (what, sub) in [
        ("the KV key", &mut planted),
        ("the JetStream API", &mut api),
    ] {
        let got = tokio
            .block_on(async { tokio::time::timeout(Duration::from_millis(300), sub.next()).await });
        assert!(got.is_err(), "the worker published to {what}: {got:?}");
    }
    let js = async_nats::jetstream::new(client.clone());
    let kv = tokio
        .block_on(js.get_key_value("hookrt-done-hooks"))
        .unwrap();
    assert_eq!(tokio.block_on(kv.get("planted")).unwrap(), None);

    // An event on another session's subject is not delivered: dead, with why.
    publish(
        &nats,
        &format!("{}\n", line("message.received", "trust-4")),
        &["--raw-subject", "hookrt.events.coder.someone-else.0"],
    );
    wait_for("the misplaced event's dead letter", || {
        dead(&nats).iter().any(|d| d["event_id"] == "trust-4")
    });
    let letter = dead(&nats)
        .into_iter()
        .find(|d| d["event_id"] == "trust-4")
        .unwrap();
    assert!(
        letter["reason"].as_str().unwrap().contains("belong on"),
        "{letter}"
    );
    assert!(!w.deliveries().iter().any(|d| d["event_id"] == "trust-4"));

    // A dead letter naming a subject outside the events is kept at a re-drive.
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Hookrt-Subject", "$JS.API.STREAM.DELETE.HOOKRT_EVENTS");
    headers.insert("Hookrt-Error", "planted");
    headers.insert("Nats-Msg-Id", "planted-dead-letter");
    let payload = line("message.received", "trust-5");
    tokio
        .block_on(async {
            js.publish_with_headers("hookrt.dead.hooks", headers, payload.into_bytes().into())
                .await?
                .await
        })
        .unwrap();
    let out = hookrt(&["worker", "redrive", "--all", "--nats", &nats.url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let planted_line: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["event_id"] == "trust-5")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(planted_line.get("kept").is_some(), "{planted_line}");
    assert!(
        tokio.block_on(js.get_stream("HOOKRT_EVENTS")).is_ok(),
        "the events stream is still there"
    );

    // Credentials never in the URL; a user and password from the environment.
    let host = nats.url.trim_start_matches("nats://");
    let out = hookrt(&[
        "worker",
        "dead",
        "--nats",
        &format!("nats://user:secret@{host}"),
    ])
    .output()
    .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("HOOKRT_NATS_PASSWORD") && !err.contains("secret@"),
        "{err}"
    );
    let out = hookrt(&["worker", "dead", "--nats", &nats.url])
        .env("HOOKRT_NATS_USER", "user")
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "a user without a password is refused"
    );
    drop(w);
}

/// The `authorization` block of docs/worker.md, as written there.
fn documented_permissions() -> String {
    let doc = std::fs::read_to_string(crate::common::repo().join("docs/worker.md")).unwrap();
    let start = doc
        .find("```conf\nauthorization {")
        .expect("worker.md's conf block")
        + 8;
    let end = start + doc[start..].find("```").expect("its end");
    doc[start..end].to_owned()
}

#[test]
fn the_documented_permissions_run_the_fleet_and_keep_each_role_to_its_subjects() {
    // The documented roles, and one user of the test's own that may see
    // everything (a user without `permissions` may do anything).
    let conf = documented_permissions().replacen(
        "users = [",
        "users = [\n    { user: test-admin, password: $ADMIN_PASS }",
        1,
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nats.conf");
    std::fs::write(&file, conf).unwrap();
    let pass = [
        ("AGENT_PASS", "agent-secret"),
        ("WORKER_PASS", "worker-secret"),
        ("OPERATOR_PASS", "operator-secret"),
        ("ADMIN_PASS", "admin-secret"),
    ];
    let nats = Nats::start_with(&["-c", file.to_str().unwrap()], &pass);
    let as_user = |user: &'static str, pass: &'static str| {
        [("HOOKRT_NATS_USER", user), ("HOOKRT_NATS_PASSWORD", pass)]
    };
    let agent = TempAgent::new().hook("testing/hooks/deny_all.rs", "deny_all.rs");
    let w = Worker::start_as(
        agent.path(),
        &nats,
        &[],
        &as_user("worker", "worker-secret"),
    );

    let tokio = tokio::runtime::Runtime::new().unwrap();
    let _in_runtime = tokio.enter();
    let connect = |user: &str, pass: &str| {
        tokio
            .block_on(
                async_nats::ConnectOptions::with_user_and_password(user.into(), pass.into())
                    .connect(&nats.url),
            )
            .unwrap()
    };
    let admin = connect("test-admin", "admin-secret");
    let mut seen = tokio
        .block_on(async {
            let mut all = Vec::new();
            for subject in [
                "hookrt.events.>",
                "$KV.hookrt-done-hooks.>",
                "$KV.hookrt-lease-hooks.>",
                "$JS.API.STREAM.DELETE.>",
                "$JS.API.STREAM.PURGE.>",
            ] {
                all.push(admin.subscribe(subject).await?);
            }
            admin.flush().await?;
            Ok::<_, Box<dyn std::error::Error>>(futures_util::stream::select_all(all))
        })
        .unwrap();

    // agent-server publishes the agent's events; the worker delivers them.
    let agent_server = as_user("agent-server", "agent-secret");
    let out = publish_as(
        &nats,
        &format!("{}\n", line("actions.requested", "perm-1")),
        &[],
        &agent_server,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_for("perm-1 delivered by the worker", || {
        w.deliveries().iter().any(|d| d["event_id"] == "perm-1")
    });
    // What the admin sees in the next `wait`: subjects and payloads.
    let mut watch = |wait: Duration| {
        let until = tokio::time::Instant::now() + wait;
        let mut got = Vec::new();
        while let Ok(Some(m)) =
            tokio.block_on(async { tokio::time::timeout_at(until, seen.next()).await })
        {
            got.push((m.subject.to_string(), m.payload.to_vec()));
        }
        got
    };
    assert!(
        watch(Duration::from_millis(500))
            .iter()
            .any(|(subject, _)| subject.starts_with("hookrt.events.coder.")),
        "the admin sees the published event"
    );

    // agent-server cannot publish another agent's events...
    let mut other: Value = serde_json::from_str(&line("message.received", "perm-2")).unwrap();
    other["coordinates"]["agent"] = "someone-else".into();
    let out = publish_as(&nats, &format!("{other}\n"), &[], &agent_server);
    assert!(!out.status.success(), "another agent's event was published");
    // ...nor write a completion mark or a lease, nor reach the stream API.
    let hostile = connect("agent-server", "agent-secret");
    tokio
        .block_on(async {
            for subject in [
                "$KV.hookrt-done-hooks.planted",
                "$KV.hookrt-lease-hooks.0",
                "$JS.API.STREAM.DELETE.HOOKRT_EVENTS",
                "$JS.API.STREAM.PURGE.HOOKRT_EVENTS",
            ] {
                hostile.publish(subject, "planted".into()).await?;
            }
            hostile.flush().await?;
            Ok::<_, Box<dyn std::error::Error>>(())
        })
        .unwrap();
    // The worker keeps renewing its leases meanwhile: only what
    // agent-server sent must be missing.
    let through: Vec<String> = watch(Duration::from_millis(500))
        .into_iter()
        .filter(|(subject, payload)| payload == b"planted" || subject.contains(".STREAM."))
        .map(|(subject, _)| subject)
        .collect();
    assert!(
        through.is_empty(),
        "agent-server's publish got through: {through:?}"
    );
    let js = async_nats::jetstream::new(admin.clone());
    let kv = tokio
        .block_on(js.get_key_value("hookrt-done-hooks"))
        .unwrap();
    assert_eq!(tokio.block_on(kv.get("planted")).unwrap(), None);

    // The operator lists the dead letters (none).
    succeeded(
        hookrt(&["worker", "dead", "--nats", &nats.url])
            .envs(as_user("operator", "operator-secret")),
    );
    drop(w);
}
