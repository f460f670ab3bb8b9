//! The server's connections: accepted up to a cap, each request's head read
//! within a deadline, idle ones closed, refused callers' ones closed after
//! the answer, all closed gracefully at shutdown. (`axum::serve` runs hyper
//! without a timer, so half a request holds its connection, and accepts
//! without bound.) Here:
//! - at most `max_connections` are open at once, and only authenticated
//!   ones hold their slot for good (`slots.rs`): a newcomer past the cap
//!   takes the slot of a connection without a token, else waits in the
//!   kernel's backlog until one closes;
//! - a request head not in within `header_timeout` closes its connection
//!   (hyper's `header_read_timeout`, from the previous answer on);
//! - a connection with no request in flight that moved no byte for
//!   `idle_timeout` is closed (`idle.rs`);
//! - a 401, 403, 429 or 503 is sent with `Connection: close` and ends its
//!   connection: a refused caller opens a new one to try again, and cannot
//!   keep one open on refusals;
//! - a body slower than the body timeout is answered 408 by the routes
//!   (`AppState::read`);
//! - with an idle exit, the server stops once no connection was open for
//!   that long (`hookrt service`).

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, header};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{OwnedSemaphorePermit, watch};
use tower_service::Service;

use crate::error::closes;
use crate::idle::{Activity, Watched};
use crate::listener::{Listener, Stream};
use crate::slots::Slots;

/// How connections are bounded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// Connections open at once at most.
    pub max_connections: usize,
    /// How long a request's line and headers may take to arrive.
    pub header_timeout: Duration,
    /// How long a connection with no request in flight may stay silent.
    pub idle_timeout: Duration,
    /// Stop serving once no connection was open for this long.
    pub idle_exit: Option<Duration>,
}

/// How long a retiring server still accepts what was in its backlog.
const BACKLOG_DRAIN: Duration = Duration::from_millis(200);

/// Whether a request's headers authenticate it (a valid token).
pub(crate) type Trusts = Arc<dyn Fn(&HeaderMap) -> bool + Send + Sync>;

/// Serves `router` on `listener` within `bounds` until `shutdown` resolves
/// (or the idle exit passes with no connection open); then stops
/// accepting, lets each connection finish its request in flight, and
/// returns once all are closed. `trusts` says which requests make their
/// connection hold its slot for good.
pub(crate) async fn serve(
    listener: Listener,
    router: Router,
    bounds: Bounds,
    trusts: Trusts,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let slots = Slots::new(bounds.max_connections);
    let (stop_tx, stop_rx) = watch::channel(false);
    let (open_tx, open_rx) = watch::channel(());
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let mut stopping = stop_rx.clone();
    // Set once the idle exit passed: until then, the backlog is served.
    let mut retiring: Option<tokio::time::Instant> = None;
    let open = |stream: Stream, peer: std::net::IpAddr, permit: OwnedSemaphorePermit| {
        let connection = Connection {
            slot: slots.hold(permit, peer),
            router: router.clone(),
            trusts: trusts.clone(),
            bounds,
        };
        let stop = stop_rx.clone();
        let open = open_rx.clone();
        tokio::spawn(async move {
            connection.run(stream, stop).await;
            drop(open);
        });
    };
    loop {
        let permit = match slots.try_free() {
            Some(p) => p,
            None => {
                // Full. A newcomer may take an untrusted connection's slot;
                // none can appear while we wait (nothing is accepted), so
                // asking once is enough.
                let room = slots.any_untrusted();
                tokio::select! {
                    p = slots.free() => match p { Some(p) => p, None => break },
                    accepted = listener.accept(), if room => {
                        let Ok((stream, peer)) = accepted else { continue };
                        slots.make_room();
                        let permit = tokio::select! {
                            p = slots.free() => match p { Some(p) => p, None => break },
                            _ = stopped(&mut stopping) => break,
                        };
                        open(stream, peer, permit);
                        continue;
                    }
                    _ = stopped(&mut stopping) => break,
                }
            }
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little
                    // rather than spin, then accept again.
                    tracing::debug!(target: "hookrt", error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stopped(&mut stopping) => break,
            () = idle_exit(&open_tx, bounds.idle_exit), if retiring.is_none() => {
                // No new client finds the socket from now on; those that
                // connected before are in the backlog, and served.
                tracing::info!(target: "hookrt", "no connection for the idle exit's time: stopping");
                listener.retire();
                retiring = Some(tokio::time::Instant::now() + BACKLOG_DRAIN);
                continue;
            }
            () = tokio::time::sleep_until(retiring.unwrap_or_else(tokio::time::Instant::now)), if retiring.is_some() => break,
        };
        open(stream, peer, permit);
    }
    drop(listener);
    drop(open_rx);
    open_tx.closed().await;
}

/// One accepted connection and what it needs to serve its requests.
struct Connection {
    slot: crate::slots::Slot,
    router: Router,
    trusts: Trusts,
    bounds: Bounds,
}

impl Connection {
    /// Serves the connection's requests until it closes, idles out, is
    /// closed to make room, or shutdown has let its request finish.
    async fn run(self, stream: Stream, mut stop: watch::Receiver<bool>) {
        let Connection {
            mut slot,
            router,
            trusts,
            bounds,
        } = self;
        let activity = Activity::new();
        let trusted = slot.trusted.clone();
        let busy = activity.clone();
        let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let mut router = router.clone();
            if !trusted.load(Ordering::Relaxed) && trusts(req.headers()) {
                trusted.store(true, Ordering::SeqCst);
            }
            let busy = busy.busy();
            async move {
                let mut answer = router
                    .call(req.map(Body::new))
                    .await
                    .unwrap_or_else(|never| match never {});
                if closes(answer.status()) {
                    answer
                        .headers_mut()
                        .insert(header::CONNECTION, HeaderValue::from_static("close"));
                }
                drop(busy);
                Ok::<_, Infallible>(answer)
            }
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(bounds.header_timeout);
        let io = TokioIo::new(Watched::new(stream, activity.clone()));
        let conn = builder.serve_connection(io, service);
        let mut conn = std::pin::pin!(conn);
        loop {
            let idle_until = activity
                .idle_since()
                .map_or_else(tokio::time::Instant::now, tokio::time::Instant::from_std)
                + bounds.idle_timeout;
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = &mut slot.evicted => return,
                _ = stopped(&mut stop) => break,
                _ = tokio::time::sleep_until(idle_until) => {
                    let idle = activity.idle_since().is_some_and(|since| since.elapsed() >= bounds.idle_timeout);
                    if idle {
                        break;
                    }
                }
            }
        }
        // Shutdown or idle: close once the request in flight, if any, is
        // answered.
        conn.as_mut().graceful_shutdown();
        tokio::select! {
            _ = conn.as_mut() => {}
            _ = &mut slot.evicted => {}
        }
    }
}

/// Resolves once no connection has been open for `after` (never without
/// one): `open` has a receiver per open connection, besides the loop's.
async fn idle_exit(open: &watch::Sender<()>, after: Option<Duration>) {
    let Some(after) = after else {
        return std::future::pending().await;
    };
    let mut quiet_since = tokio::time::Instant::now();
    loop {
        tokio::time::sleep_until(quiet_since + after).await;
        if open.receiver_count() <= 1 {
            return;
        }
        // Connections are open: wait for them to close, then a full span.
        while open.receiver_count() > 1 {
            tokio::time::sleep(Duration::from_millis(100).min(after)).await;
        }
        quiet_since = tokio::time::Instant::now();
    }
}

/// Resolves once shutdown began.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    // Never dropped sender-side before it says `true`; a closed channel
    // counts as stopping too.
    let _ = stop.wait_for(|s| *s).await.map(drop);
}
