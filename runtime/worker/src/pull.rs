//! A partition's standing pull: one inbox subscription, pull requests for
//! up to [`PULL_BATCH`] messages kept waiting on the server, and a close
//! that leaves no message on an inbox nobody reads.
//!
//! The consumer hands its messages out one at a time (`max_ack_pending` 1),
//! each once the one before is acked, so a busy partition costs a pull
//! request per [`PULL_BATCH`]` / 2` messages (or per half [`PULL_EXPIRES`])
//! instead of one per message. Requests overlap: a new one is sent when the
//! last is half spent, all naming the same inbox, so a request the server
//! drops does not stall the partition.
//!
//! Closing: the pull's inbox is unsubscribed (a drain: what the server sent
//! before it took the unsubscribe still arrives), then the consumer's info
//! is asked for, which makes the server drop every waiting request whose
//! inbox has no subscriber; only then is a message that came meanwhile
//! handed back. Without the info, the requests are waited out by this
//! clock (their expiry plus [`PULL_MARGIN`]). Why each step is there, and
//! the server behaviour it works around: docs/reliability.md, "The fleet's
//! standing pull".

use std::time::Duration;

use async_nats::jetstream::{self, AckKind, consumer::PullConsumer, consumer::pull::BatchConfig};
use async_nats::{StatusCode, Subscriber};
use futures_util::StreamExt;
use tokio::time::Instant;

use crate::{WorkerError, nats};

/// Messages one request asks for.
pub(crate) const PULL_BATCH: usize = 128;
/// How long the server keeps a request waiting.
pub(crate) const PULL_EXPIRES: Duration = Duration::from_millis(500);
/// How long past a request's expiry (by this clock) it is taken to be gone
/// on the server too, when the server does not say (see [`Pull::close`]).
pub(crate) const PULL_MARGIN: Duration = Duration::from_millis(500);
/// How long a closing pull waits for the consumer's info.
const INFO_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a waiting partition looks whether it should stop.
const STOP_CHECK: Duration = Duration::from_millis(50);

/// A partition's pull.
pub(crate) struct Pull {
    consumer: PullConsumer,
    context: jetstream::Context,
    inbox: String,
    sub: Subscriber,
    /// When the last request was sent (`None`: none is open).
    asked: Option<Instant>,
    /// Messages received since.
    since_ask: usize,
}

impl Pull {
    /// Subscribes the pull's inbox; asks nothing yet.
    pub(crate) async fn open(
        consumer: PullConsumer,
        client: &async_nats::Client,
        context: jetstream::Context,
    ) -> Result<Pull, WorkerError> {
        let inbox = client.new_inbox();
        let sub = client
            .subscribe(inbox.clone())
            .await
            .map_err(nats("cannot subscribe a pull's inbox"))?;
        Ok(Pull {
            consumer,
            context,
            inbox,
            sub,
            asked: None,
            since_ask: 0,
        })
    }

    /// The next message, asking for more as requests are half spent;
    /// `None` once `stop()` says so (the pull is then to be closed, which
    /// hands back a message on its way).
    pub(crate) async fn next(
        &mut self,
        stop: impl Fn() -> bool,
    ) -> Result<Option<jetstream::Message>, WorkerError> {
        loop {
            if stop() {
                return Ok(None);
            }
            let due = match self.asked {
                Some(at)
                    if self.since_ask < PULL_BATCH / 2
                        && Instant::now() < at + PULL_EXPIRES / 2 =>
                {
                    at + PULL_EXPIRES / 2
                }
                _ => {
                    self.ask().await?;
                    continue;
                }
            };
            tokio::select! {
                m = self.sub.next() => {
                    let Some(message) = m else {
                        return Err(WorkerError::nats(
                            "a pull's inbox subscription ended",
                            std::io::Error::other("the client closed it (connection closed or drained)"),
                        ));
                    };
                    match message.status {
                        None | Some(StatusCode::OK) => {
                            self.since_ask += 1;
                            return Ok(Some(jetstream::Message {
                                message,
                                context: self.context.clone(),
                            }));
                        }
                        // One request expired; a later one is waiting.
                        Some(StatusCode::TIMEOUT | StatusCode::IDLE_HEARTBEAT) => {}
                        Some(status) => {
                            tracing::warn!(target: "hookrt", consumer = %self.consumer.cached_info().name,
                                "pull answered {status} {}; asking again", message.description.as_deref().unwrap_or(""));
                            tokio::time::sleep(Duration::from_millis(200)).await;
                            self.since_ask = PULL_BATCH;
                        }
                    }
                }
                _ = tokio::time::sleep_until(due) => {}
                _ = tokio::time::sleep(STOP_CHECK) => {}
            }
        }
    }

    /// Sends a request.
    async fn ask(&mut self) -> Result<(), WorkerError> {
        let config = BatchConfig {
            batch: PULL_BATCH,
            expires: Some(PULL_EXPIRES),
            ..Default::default()
        };
        self.consumer
            .request_batch(config, self.inbox.clone().into())
            .await
            .map_err(nats("cannot send a pull request"))?;
        self.asked = Some(Instant::now());
        self.since_ask = 0;
        Ok(())
    }

    /// When every request sent is taken to be gone from the server
    /// (`None`: none was sent).
    fn gone_at(&self) -> Option<Instant> {
        self.asked.map(|at| at + PULL_EXPIRES + PULL_MARGIN)
    }

    /// Unsubscribes (taking what the server sent before), has the server
    /// drop this pull's waiting requests, then hands back (nak) any message
    /// that reached the inbox meanwhile.
    pub(crate) async fn close(mut self) {
        if self.sub.drain().await.is_err() {
            return;
        }
        // The subscription ends once the server answered the drain's ping:
        // it has taken the unsubscribe.
        let mut came = Vec::new();
        let end = Instant::now() + Duration::from_secs(2);
        while let Ok(Some(message)) = tokio::time::timeout_at(end, self.sub.next()).await {
            if matches!(message.status, None | Some(StatusCode::OK)) {
                came.push(message);
            }
        }
        // Answering, the server drops the requests of an inbox nobody
        // subscribes (asked after the unsubscribe, on the same connection).
        let dropped = matches!(
            tokio::time::timeout(INFO_TIMEOUT, self.consumer.get_info()).await,
            Ok(Ok(_))
        );
        if !dropped && let Some(gone) = self.gone_at() {
            tracing::warn!(target: "hookrt", consumer = %self.consumer.cached_info().name,
                "the consumer's info was not answered; waiting out this pull's requests");
            tokio::time::sleep_until(gone).await;
        }
        for message in came {
            let message = jetstream::Message {
                message,
                context: self.context.clone(),
            };
            let _ = message.ack_with(AckKind::Nak(None)).await;
        }
    }
}
