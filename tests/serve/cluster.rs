//! The fleet on a three-node JetStream cluster (`scripts/nats --cluster 3`)
//! with replicated streams and buckets (`--replicas 3`): the node leading
//! the events stream is killed (SIGKILL) while two workers are busy, then
//! one of the workers: every planned delivery is still done, in order per
//! session, nothing is dead, and no decision is answered twice differently.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;

use crate::jetstream::{Nats, Worker, patient_agent, planned, publish, sessions, wait_for};

/// The name of the server leading `stream`, as JetStream says (none while
/// the cluster elects one).
fn leader(
    tokio: &tokio::runtime::Runtime,
    client: &async_nats::Client,
    stream: &str,
) -> Option<String> {
    tokio.block_on(async {
        let reply = client
            .request(format!("$JS.API.STREAM.INFO.{stream}"), "".into())
            .await
            .ok()?;
        let info: Value = serde_json::from_slice(&reply.payload).ok()?;
        info["cluster"]["leader"].as_str().map(str::to_owned)
    })
}

#[test]
fn the_stream_leader_and_a_worker_killed_on_a_cluster_lose_nothing_and_decide_once() {
    let nats = Nats::cluster(3);
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let servers: Vec<&str> = nats.url.split(',').collect();
    let client = tokio.block_on(async_nats::connect(servers)).unwrap();
    // Every decision's resolution as the workers publish it.
    let answers: Arc<Mutex<BTreeMap<String, Vec<Value>>>> = Arc::default();
    let mut replies = tokio
        .block_on(client.subscribe("_INBOX.cluster-test"))
        .unwrap();
    let collected = answers.clone();
    tokio.spawn(async move {
        while let Some(m) = replies.next().await {
            let Ok(v) = serde_json::from_slice::<Value>(&m.payload) else {
                continue;
            };
            let id = v["receipt"]["event_id"].as_str().unwrap_or("").to_owned();
            collected
                .lock()
                .unwrap()
                .entry(id)
                .or_default()
                .push(v["resolution"].clone());
        }
    });

    let dir = tempfile::tempdir().unwrap();
    let patient = patient_agent(dir.path());
    let (lines, order) = sessions(6);
    let plan = planned(&patient, &lines, order);
    let replicated = ["--replicas", "3"];
    let a = Worker::start(&patient, &nats, &replicated);
    let b = Worker::start(&patient, &nats, &replicated);
    std::thread::sleep(Duration::from_millis(1500));
    let (first, second) = lines.split_at(3);
    publish(
        &nats,
        &first.concat(),
        &["--replicas", "3", "--reply-to", "_INBOX.cluster-test"],
    );
    wait_for("the workers' first deliveries", || {
        a.deliveries().len() + b.deliveries().len() >= 60
    });
    // The stream's leader dies mid-run.
    let leading = leader(&tokio, &client, "HOOKRT_EVENTS").expect("the stream has a leader");
    let (_, _, pid) = nats
        .nodes
        .iter()
        .find(|(name, _, _)| *name == leading)
        .expect("the leader is one of the nodes")
        .clone();
    let before_kill = a.deliveries().len() + b.deliveries().len();
    Command::new("kill").args(["-9", &pid]).status().unwrap();
    // A new leader is elected among the two left.
    let deadline = Instant::now() + Duration::from_secs(30);
    let elected = loop {
        if let Some(l) = leader(&tokio, &client, "HOOKRT_EVENTS")
            && l != leading
        {
            break l;
        }
        assert!(Instant::now() < deadline, "no new leader of the stream");
        std::thread::sleep(Duration::from_millis(200));
    };
    // Events published after the leader died, then a worker killed.
    publish(
        &nats,
        &second.concat(),
        &["--replicas", "3", "--reply-to", "_INBOX.cluster-test"],
    );
    wait_for("deliveries after the leader died", || {
        a.deliveries().len() + b.deliveries().len() >= before_kill + 60
    });
    // The worker busier since the leader died is killed (which partitions
    // hold work depends on how sessions hash and who leased what).
    let (a_since, b_since) = (a.deliveries().len(), b.deliveries().len());
    let (mut busier, other) = if a_since >= b_since { (a, b) } else { (b, a) };
    busier.kill();
    let by_busier = busier.deliveries().len();
    assert!(by_busier > 0);
    let all = || [busier.deliveries(), other.deliveries()].concat();
    // The dead letters are read once their stream has a leader again and
    // the cluster places the reading consumer on a live server (for a few
    // seconds after a node dies it may pick the dead one: the read times
    // out, and is asked again).
    wait_for("the dead-letter stream to answer", || {
        leader(&tokio, &client, "HOOKRT_DEAD").is_some_and(|l| l != leading)
            && crate::hookrt(&["worker", "dead", "--nats", &nats.url])
                .output()
                .unwrap()
                .status
                .success()
    });
    plan.done_in_order(&nats, all, 180, "a delivery was lost on the cluster");
    // Each decision answered the same every time it was answered.
    std::thread::sleep(Duration::from_millis(500));
    let answers = answers.lock().unwrap();
    assert!(!answers.is_empty(), "the workers answered the decisions");
    let mut twice = 0;
    for (id, all) in answers.iter() {
        assert!(
            all.windows(2).all(|w| w[0] == w[1]),
            "event {id} was decided twice differently: {all:?}"
        );
        twice += usize::from(all.len() > 1);
    }
    eprintln!(
        "cluster: killed the stream leader {leading} after {before_kill} deliveries (new leader {elected}), then the busier worker after its {by_busier}; {} deliveries in all, {} required; {} decisions answered, {twice} of them more than once (the same each time)",
        all().len(),
        plan.required.len(),
        answers.len()
    );
}
