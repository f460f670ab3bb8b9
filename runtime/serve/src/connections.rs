//! The server's connections: accepted up to a cap, each request's head read
//! within a deadline, closed gracefully at shutdown.
//!
//! `axum::serve` runs hyper without a timer, so a client that sends half a
//! request holds its connection (and a task) for ever, and it accepts
//! without bound. Here at most `max_connections` are open at once: past the
//! cap the server stops accepting (new connections wait in the kernel's
//! backlog) until one closes. A connection whose request head (request line
//! and headers) is not in within `header_timeout` is closed (hyper's
//! `header_read_timeout`, which also bounds how long a kept-alive
//! connection may wait idle for its next request); a body slower than the
//! body timeout is answered 408 by the routes (`AppState::read`).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tower_service::Service;

/// How connections are bounded.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Connections open at once at most.
    pub max_connections: usize,
    /// How long a request's line and headers may take to arrive.
    pub header_timeout: Duration,
}

/// Serves `router` on `listener` within `bounds` until `shutdown` resolves;
/// then stops accepting, lets each connection finish its request in flight,
/// and returns once all are closed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    bounds: Bounds,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let slots = Arc::new(Semaphore::new(bounds.max_connections.max(1)));
    let (stop_tx, stop_rx) = watch::channel(false);
    let (open_tx, open_rx) = watch::channel(());
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let mut stopping = stop_rx.clone();
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
            _ = stopped(&mut stopping) => break,
        };
        let (stream, _peer) = tokio::select! {
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
        };
        let router = router.clone();
        let mut stop = stop_rx.clone();
        let open = open_rx.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                let mut router = router.clone();
                async move {
                    let answer = router.call(req.map(Body::new)).await;
                    Ok::<_, Infallible>(answer.unwrap_or_else(|never| match never {}))
                }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(bounds.header_timeout);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = stopped(&mut stop) => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.as_mut().await;
                }
            }
            drop((slot, open));
        });
    }
    drop(listener);
    drop(open_rx);
    open_tx.closed().await;
}

/// Resolves once shutdown began.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    // Never dropped sender-side before it says `true`; a closed channel
    // counts as stopping too.
    let _ = stop.wait_for(|s| *s).await.map(drop);
}
