//! The fleet treats every publisher as hostile: a worker answers only to a
//! reply inbox (never a KV key or a JetStream API subject a message names),
//! delivers an event only from its own session's subject, re-drives a dead
//! letter only to an event subject, and takes credentials from the
//! environment, never the URL. On a real nats-server, with the same client
//! hookrt-worker uses.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;

use crate::common::TempAgent;
use crate::jetstream::{Nats, Worker, fleet, publish, wait_for};
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
