//! hookrt on NATS JetStream: a fleet of `hookrt worker` processes sharing a
//! stream's events (docs/worker.md), and `hookrt publish`.
//!
//! Events are published to a subject per agent and session, with the event
//! id as `Nats-Msg-Id` ([`subject`], [`publish`]). Sessions are hashed into
//! partitions; each partition has its own durable pull consumer with one
//! message in flight and is owned by one worker at a time through a
//! key-value lease ([`fleet`], [`lease`]), and pulled through standing
//! requests ([`pull`]). A worker runs a message's deliveries and acks the
//! message only once all are finished; before a retry or a dead letter it
//! marks the finished ones in a key-value bucket ([`completion`]), so the
//! redelivery or re-drive runs only what is left ([`partition`]). What fails for good,
//! is malformed, or outlives `max_deliver` goes to the dead letters
//! ([`dead`]), which can be listed and re-driven.
//!
//! Modules, in layer order (`tests/architecture.rs`): `connect`, `subject`, `fleet`, `publish`,
//! `completion`, `lease`, `dead`, `pull`, `received`, `sink`, `partition`, then this file.
//! This package is apart from the `hookrt` library so that an embedder of
//! the library brings no NATS client.

#![warn(missing_docs)]

mod completion;
mod connect;
mod dead;
mod fleet;
mod lease;
mod partition;
mod publish;
mod pull;
mod received;
mod sink;
mod subject;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream;
use futures_util::StreamExt;
use hookrt::sandbox::StateStore;
use hookrt::{Runtime, Transport};

pub use async_nats::HeaderMap;
use completion::Completion;
pub use connect::TOKEN_ENV;
use connect::connect;
pub use dead::{DeadMessage, RedriveResult, Redriven};
pub use fleet::Names;
pub use partition::{Counts, Refused, accept, replyable};
pub use publish::{Pending, Published, Publisher, REPLY_HEADER};
pub use subject::{DEFAULT_PARTITIONS, DEFAULT_PREFIX};

use subject::MAX_PARTITIONS;

use partition::{Control, Shared};

/// The default events stream.
pub const DEFAULT_STREAM: &str = "HOOKRT_EVENTS";
/// How long completion marks are kept by default: a message redelivered
/// later than this runs its finished deliveries again.
pub const DEFAULT_DONE_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

/// How long a stopping worker tries to give its leases back before it
/// leaves them to expire.
const GIVE_BACK_TIMEOUT: Duration = Duration::from_secs(2);

/// The error a [`WorkerError`] came from, boxed: async-nats has an error
/// type per operation, the state store SQLite's.
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why the worker could not run or publish. Each variant keeps the error it
/// came from as its `source()`.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// A NATS or JetStream operation failed: what was being done, and why.
    #[error("NATS: {doing}: {source}")]
    Nats {
        /// What the worker was doing (`"cannot connect to nats://..."`).
        doing: Cow<'static, str>,
        /// The error async-nats returned.
        source: Source,
    },
    /// The options do not work together.
    #[error("{0}")]
    Config(String),
    /// The hooks' state store did not open.
    #[error("cannot open the state store {path}: {source}")]
    State {
        /// The file.
        path: PathBuf,
        /// Why.
        source: Source,
    },
    /// An envelope could not be written as JSON for publishing.
    #[error("event {event_id} cannot be written as JSON: {source}")]
    Encode {
        /// The event.
        event_id: String,
        /// Why.
        source: serde_json::Error,
    },
    /// An event published under an id its agent used before for another
    /// event (within the stream's dedup window): not stored.
    #[error(
        "event `{event_id}` of agent `{agent}` was taken before (stream seq {seq}) by an event that says something else: an id names one event; give this one its own id"
    )]
    Conflict {
        /// The event id.
        event_id: String,
        /// The agent.
        agent: String,
        /// Where the stream holds the first one.
        seq: u64,
    },
    /// A message's deliveries did not run to their end.
    #[error("the deliveries of event {event_id} did not run: {source}")]
    Dispatch {
        /// The event.
        event_id: String,
        /// Why: the envelope was refused, or the dispatch panicked.
        source: Source,
    },
}

impl WorkerError {
    /// A failed NATS operation, `doing` saying what it was.
    pub(crate) fn nats(doing: impl Into<Cow<'static, str>>, e: impl Into<Source>) -> WorkerError {
        WorkerError::Nats {
            doing: doing.into(),
            source: e.into(),
        }
    }
}

/// For `map_err`: a failed NATS operation that was `doing` this.
pub(crate) fn nats<E: Into<Source>>(doing: &'static str) -> impl FnOnce(E) -> WorkerError {
    move |e| WorkerError::nats(doing, e)
}

/// How a worker runs.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// The NATS server, e.g. `nats://127.0.0.1:4222`.
    pub nats: String,
    /// The stream, its subject prefix, the group's durable name, the partitions.
    pub names: Names,
    /// Hooks' `state` in this SQLite file (in memory without).
    pub state: Option<PathBuf>,
    /// How long JetStream waits for an ack before redelivering.
    pub ack_wait: Duration,
    /// Deliveries of a message in all (0: unlimited).
    pub max_deliver: i64,
    /// Waits before each redelivery after an ack timeout (the consumer's `backoff`).
    pub backoff: Vec<Duration>,
    /// How long a partition lease lasts without renewal.
    pub lease_ttl: Duration,
    /// How long completion marks are kept.
    pub done_ttl: Duration,
    /// Hooks running at once in this worker (one per partition at most).
    pub threads: usize,
    /// Print one JSON line per delivery on stdout.
    pub print_deliveries: bool,
    /// How long in-flight messages may run at shutdown.
    pub drain_timeout: Duration,
}

/// What a worker did, returned at shutdown.
#[derive(Debug, serde::Serialize)]
pub struct Summary {
    /// This worker's id.
    pub worker: String,
    /// Its counts.
    #[serde(flatten)]
    pub counts: Counts,
}

impl Summary {
    /// The summary line every front end prints, with this worker's own
    /// counts (`worker`, `acked`, `skipped`, `retried`, `dead`) beside the
    /// shared fields. Events are the messages acked; every receipt was
    /// `persisted` (the stream stored the event before a worker took it).
    pub fn line(&self) -> hookrt::front::summary::Summary {
        let c = &self.counts;
        let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        let mut more = serde_json::Map::new();
        more.insert("worker".into(), self.worker.clone().into());
        for (key, value) in [
            ("acked", &c.acked),
            ("skipped", &c.skipped),
            ("retried", &c.retried),
            ("dead", &c.dead),
        ] {
            more.insert(key.into(), n(value).into());
        }
        hookrt::front::summary::Summary {
            events: n(&c.acked),
            deliveries: n(&c.deliveries),
            repeats: n(&c.repeats),
            outcomes: hookrt::Outcome::ALL
                .iter()
                .zip(&c.outcomes)
                .map(|(o, count)| (o.as_str(), n(count)))
                .collect(),
            optional_failures: n(&c.optional_failures),
            critical_failures: n(&c.critical_failures),
            cascades: n(&c.cascades),
            durability: hookrt::Durability::Persisted.as_str(),
            note: "every event was stored in the JetStream stream before any worker took it",
            more,
            ..Default::default()
        }
    }
}

/// Checks options that JetStream would otherwise refuse with less to go on.
fn check(options: &WorkerOptions) -> Result<(), WorkerError> {
    fleet::check_durable(&options.names.durable)?;
    let p = options.names.partitions;
    if p == 0 || p > MAX_PARTITIONS {
        return Err(WorkerError::Config(format!(
            "--partitions {p}: use 1 to {MAX_PARTITIONS}"
        )));
    }
    if !options.backoff.is_empty()
        && options.max_deliver > 0
        && options.max_deliver <= options.backoff.len() as i64
    {
        return Err(WorkerError::Config(format!(
            "--backoff has {} waits but --max-deliver is {}: JetStream needs more deliveries than waits",
            options.backoff.len(),
            options.max_deliver
        )));
    }
    if options.lease_ttl < Duration::from_millis(300) {
        return Err(WorkerError::Config(
            "--lease-ttl-ms below 300 cannot be renewed in time; use 300 or more".into(),
        ));
    }
    Ok(())
}

/// Records the partition count in the group's bucket the first time, and
/// refuses a worker that disagrees (its subjects would not match).
async fn agree_on_partitions(done: &Completion, names: &Names) -> Result<(), WorkerError> {
    let mine = names.partitions.to_string();
    let theirs = done.get_or_create("config.partitions", &mine).await?;
    if theirs != mine {
        return Err(WorkerError::Config(format!(
            "the group {:?} hashes sessions into {theirs} partitions, not {mine}: pass --partitions {theirs} to every worker and publisher",
            names.durable
        )));
    }
    Ok(())
}

/// Consumes until `shutdown` resolves; `on_ready` is called once the first
/// leases are settled. Returns what this worker did.
pub async fn run(
    runtime: Runtime,
    options: WorkerOptions,
    shutdown: impl Future<Output = ()> + Send,
    on_ready: impl FnOnce(),
) -> Result<Summary, WorkerError> {
    check(&options)?;
    let fleet = join(runtime, &options).await?;
    let Joined {
        client,
        events,
        lease_store,
        shared,
    } = fleet;
    let me = shared.me.clone();
    let advisories = tokio::spawn(copy_max_deliveries(shared.clone(), events.clone()));
    let mut partitions = Partitions {
        shared: shared.clone(),
        events,
        redelivery: fleet::Redelivery {
            ack_wait: options.ack_wait,
            max_deliver: if options.max_deliver > 0 {
                options.max_deliver
            } else {
                -1
            },
            backoff: options.backoff.clone(),
        },
        running: BTreeMap::new(),
        releasing: Vec::new(),
    };
    let names = &options.names;
    let mut leases = lease::Leases::new(lease_store, &me, names.partitions, options.lease_ttl);
    let mut on_ready = Some(on_ready);
    let mut tick = tokio::time::interval(options.lease_ttl / 3);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            _ = tick.tick() => {}
        }
        let changes = match leases.tick().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(target: "hookrt", "lease round failed: {e}");
                continue;
            }
        };
        // Ready once the first lease round is settled, before any delivery.
        if let Some(ready) = on_ready.take() {
            ready();
        }
        partitions.follow(changes, &mut leases).await;
    }
    partitions.drain(options.drain_timeout).await;
    // Bounded: with the server gone, giving leases back would wait for ever
    // (they expire on their own after the TTL).
    let _ = tokio::time::timeout(GIVE_BACK_TIMEOUT, leases.release_all()).await;
    // An aborted task is dropped at its next poll, not when `abort` returns:
    // awaiting it lets go of its `shared` before the count is read (without
    // it, one stop in a few raced it and failed "outlived the drain timeout").
    advisories.abort();
    let _ = advisories.await;
    let _ = tokio::time::timeout(GIVE_BACK_TIMEOUT, client.flush()).await;
    drop(partitions);
    let shared = Arc::try_unwrap(shared)
        .map_err(|_| WorkerError::Config("a partition task outlived the drain timeout".into()))?;
    Ok(Summary {
        worker: me,
        counts: shared.counts,
    })
}

/// A worker that joined its group: the JetStream objects it uses and what
/// its partitions share.
struct Joined {
    client: async_nats::Client,
    events: jetstream::stream::Stream,
    lease_store: async_nats::jetstream::kv::Store,
    shared: Arc<Shared>,
}

/// Connects, opens (or creates) the group's streams and buckets, checks the
/// partition count the group agreed on, and names this worker.
async fn join(mut runtime: Runtime, options: &WorkerOptions) -> Result<Joined, WorkerError> {
    let names = &options.names;
    let client = connect(&options.nats).await?;
    let js = jetstream::new(client.clone());
    let events = fleet::events_stream(&js, names).await?;
    fleet::dead_stream(&js, names.replicas).await?;
    let done_bucket = names.done_bucket();
    let done_store = fleet::bucket(&js, &done_bucket, options.done_ttl, names.replicas).await?;
    let completion = Completion::new(done_store);
    agree_on_partitions(&completion, names).await?;
    let lease_store = fleet::bucket(
        &js,
        &names.lease_bucket(),
        options.lease_ttl,
        names.replicas,
    )
    .await?;
    runtime.set_transport(Transport {
        kind: "nats".into(),
        detail: Some(names.stream.clone()),
    });
    if let Some(path) = &options.state {
        let store = StateStore::open(path).map_err(|e| WorkerError::State {
            path: path.clone(),
            source: e.into(),
        })?;
        runtime.use_state(store);
    }
    // The inbox's last token is a fresh NUID: unique across the fleet.
    let inbox = client.new_inbox();
    let unique = inbox.rsplit('.').next().unwrap_or_default();
    let me = format!("w{}-{unique}", std::process::id());
    let shared = Arc::new(Shared {
        runtime: Arc::new(runtime),
        js,
        client: client.clone(),
        completion,
        publisher: Publisher::new(client.clone(), &names.prefix, names.partitions),
        names: names.clone(),
        max_deliver: options.max_deliver,
        me,
        print: options.print_deliveries,
        threads: Arc::new(tokio::sync::Semaphore::new(options.threads.max(1))),
        counts: Counts::default(),
    });
    Ok(Joined {
        client,
        events,
        lease_store,
        shared,
    })
}

/// The partitions this worker consumes (a task each, steered by its
/// [`Control`]) and those it is giving back.
struct Partitions {
    shared: Arc<Shared>,
    events: jetstream::stream::Stream,
    redelivery: fleet::Redelivery,
    running: BTreeMap<u32, (Arc<Control>, tokio::task::JoinHandle<()>)>,
    releasing: Vec<u32>,
}

impl Partitions {
    /// Follows one lease round: stops the partitions lost at once, the
    /// surplus ones after their message (then gives them back), starts the
    /// acquired ones, and moves every task's lease deadline.
    async fn follow(&mut self, changes: lease::Changes, leases: &mut lease::Leases) {
        for p in changes.lost {
            if let Some((ctl, _)) = self.running.remove(&p) {
                *ctl.valid_until.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
                ctl.stop.store(true, Ordering::Relaxed);
            }
        }
        for p in changes.surplus {
            if let Some((ctl, _)) = self.running.get(&p) {
                ctl.stop.store(true, Ordering::Relaxed);
                self.releasing.push(p);
            }
        }
        // Give back the surplus partitions whose task has finished its message.
        let mut still = Vec::new();
        for p in std::mem::take(&mut self.releasing) {
            match self.running.get(&p) {
                Some((_, task)) if !task.is_finished() => still.push(p),
                _ => {
                    self.running.remove(&p);
                    leases.release(p).await;
                }
            }
        }
        self.releasing = still;
        for p in changes.acquired {
            self.start(p, leases).await;
        }
        for (p, (ctl, _)) in &self.running {
            if let Some(until) = leases.valid_until(*p) {
                *ctl.valid_until.lock().unwrap_or_else(|e| e.into_inner()) = until;
            }
        }
    }

    /// Starts consuming partition `p`, or gives it back when its consumer
    /// does not open.
    async fn start(&mut self, p: u32, leases: &mut lease::Leases) {
        let names = &self.shared.names;
        match fleet::partition_consumer(&self.events, names, p, &self.redelivery).await {
            Ok(consumer) => {
                let ctl = Arc::new(Control {
                    stop: AtomicBool::new(false),
                    valid_until: Mutex::new(leases.valid_until(p).unwrap_or_else(Instant::now)),
                });
                let task = tokio::spawn(partition::consume(
                    self.shared.clone(),
                    consumer,
                    p,
                    ctl.clone(),
                ));
                self.running.insert(p, (ctl, task));
            }
            Err(e) => {
                tracing::warn!(target: "hookrt", partition = p, "cannot open the partition's consumer: {e}");
                leases.release(p).await;
            }
        }
    }

    /// Shutdown: each partition finishes its message, within `timeout` in all.
    async fn drain(&mut self, timeout: Duration) {
        for (ctl, _) in self.running.values() {
            ctl.stop.store(true, Ordering::Relaxed);
        }
        let deadline = Instant::now() + timeout;
        for (_, (_, task)) in std::mem::take(&mut self.running) {
            let left = deadline.saturating_duration_since(Instant::now());
            let _ = tokio::time::timeout(left, task).await;
        }
    }
}

/// Copies each message JetStream stopped delivering (`max_deliver` reached
/// without an ack: workers died on it) to the dead letters. Every worker of
/// the group hears the advisory; the dead-letter id makes it one copy.
async fn copy_max_deliveries(shared: Arc<Shared>, events: jetstream::stream::Stream) {
    let names = &shared.names;
    let subject = format!(
        "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{}.*",
        names.stream
    );
    let Ok(mut sub) = shared.client.subscribe(subject).await else {
        tracing::warn!(target: "hookrt", "cannot hear max-deliveries advisories");
        return;
    };
    let mine = format!("{}-p", names.durable);
    while let Some(m) = sub.next().await {
        let Ok(a) = serde_json::from_slice::<serde_json::Value>(&m.payload) else {
            continue;
        };
        let consumer = a["consumer"].as_str().unwrap_or_default();
        let Some(seq) = a["stream_seq"].as_u64() else {
            continue;
        };
        if !consumer.starts_with(&mine) {
            continue;
        }
        let deliveries = a["deliveries"].as_u64().unwrap_or(0) as u32;
        let Ok(raw) = events.get_raw_message(seq).await else {
            continue;
        };
        let reason = format!(
            "delivered {deliveries} times without an ack (max_deliver): the workers that took it stopped or timed out"
        );
        let _ = dead::bury(
            &shared.js,
            &names.durable,
            dead::Burial {
                stream: &names.stream,
                seq,
                subject: raw.subject.as_str(),
                payload: raw.payload.clone(),
                reason: &reason,
                attempt: deliveries,
                failed: None,
            },
        )
        .await;
    }
}

/// Connects and lists the dead letters of `durable`.
pub async fn dead_letters(url: &str, durable: &str) -> Result<Vec<DeadMessage>, WorkerError> {
    fleet::check_durable(durable)?;
    let client = connect(url).await?;
    dead::list(&jetstream::new(client), durable).await
}

/// Connects and re-drives the dead letters of `durable` (those in `only`, or
/// all) to their subjects, each only when it lies under `prefix`.
pub async fn redrive(
    url: &str,
    durable: &str,
    prefix: &str,
    only: Option<&[u64]>,
) -> Result<Vec<Redriven>, WorkerError> {
    fleet::check_durable(durable)?;
    let client = connect(url).await?;
    dead::redrive(&jetstream::new(client), durable, prefix, only).await
}

/// Connects to `url` for publishing envelopes to `stream` (created for
/// `<prefix>.>` when missing, as workers do).
pub async fn publisher(
    url: &str,
    stream: &str,
    prefix: &str,
    partitions: u32,
    replicas: usize,
) -> Result<Publisher, WorkerError> {
    if partitions == 0 || partitions > MAX_PARTITIONS {
        return Err(WorkerError::Config(format!(
            "--partitions {partitions}: use 1 to {MAX_PARTITIONS}"
        )));
    }
    let client = connect(url).await?;
    let names = Names {
        stream: stream.to_owned(),
        prefix: prefix.to_owned(),
        durable: String::new(),
        partitions,
        replicas,
    };
    fleet::events_stream(&jetstream::new(client.clone()), &names).await?;
    Ok(Publisher::new(client, prefix, partitions))
}

/// Publishes raw `lines` to one `subject` as they are (no parsing, no
/// `Nats-Msg-Id`): for tests and for payloads that are not envelopes.
pub async fn publish_raw(url: &str, subject: &str, lines: &[String]) -> Result<usize, WorkerError> {
    let client = connect(url).await?;
    let js = jetstream::new(client);
    let mut acks = Vec::new();
    for line in lines {
        acks.push(
            js.publish(subject.to_owned(), line.clone().into())
                .await
                .map_err(nats("cannot publish a line"))?,
        );
    }
    for ack in acks {
        ack.await.map_err(nats("a published line was not stored"))?;
    }
    Ok(lines.len())
}
