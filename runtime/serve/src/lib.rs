//! hookrt over HTTP: `hookrt serve DIR --listen ADDR` lets agent servers in
//! any language send lifecycle events, and ask for decisions and edits, by
//! POSTing JSON (docs/serve.md).
//!
//! The server is one [`HookService`] (with an optional journal) behind an
//! axum router. This package is apart from the `hookrt` library so that an
//! embedder of the library brings no HTTP stack.
//!
//! Modules, in layer order (`tests/architecture.rs`): `error`, `auth`,
//! `metrics`, `cost` (what a JSON text costs parsed), `budget` (the bytes
//! bodies in flight may hold), `ingest`, `tally`,
//! `parsing` (a batch's events parsed one at a time within the budget),
//! `reload` (hot reload on SIGHUP and `POST /v1/admin/reload`), `routes`,
//! `decide` (`/v1/decide`, `/v1/edit`), `hook`, `mcp` (`/mcp`, the MCP
//! interceptors over the server's hook service), `router`, `slots` (the
//! connection cap, held only by authenticated connections), `idle` (idle
//! connections closed), `listener` (TCP, or a Unix socket for its owner
//! only), `connections` (the accept loop), then this file. The endpoints are
//! described in `docs/openapi.json`.

#![warn(missing_docs)]

mod auth;
mod budget;
mod connections;
pub mod cost;
mod decide;
mod error;
mod hook;
mod idle;
mod ingest;
mod listener;
mod mcp;
mod metrics;
mod parsing;
mod reload;
mod router;
mod routes;
mod slots;
mod tally;
mod webhooks;

/// Unit tests count what parsing allocates (`cost.rs`).
#[cfg(test)]
#[global_allocator]
static COUNTING: cost::tests::Counting = cost::tests::Counting;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookrt::front::bridge::Bridge;
use hookrt::journal::Journal;
use hookrt::{BuildOptions, HookService, Runtime, ServiceOptions, Stats, Transport};
use tokio::sync::RwLock;

pub use auth::{Access, Tokens};
pub use budget::{DEFAULT_MAX_IN_FLIGHT_BYTES, PARSE_WINDOW};
pub use error::{ApiError, BoxError, ServeError};
pub use ingest::{Format, Forward, MAX_ITEMS, Streams, Tap, Text};
pub use listener::Bound;
pub use reload::Fingerprint;
pub use router::routes;
pub use webhooks::{TOLERANCE_SECS, WebhookSecrets};

use auth::RateLimiter;
use listener::Listener;
use metrics::ServerMetrics;
use reload::Reloader;
use routes::AppState;

/// The default largest request body: 16 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// The default cap on connections open at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// The default time a connection with no request in flight may stay silent
/// before it is closed: long enough for a client to reuse it for its next
/// request, short enough that idle keep-alive connections do not pile up.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// How the server runs.
#[derive(Debug)]
pub struct ServeOptions {
    /// Where to listen (port 0: any free port; see `on_listen`).
    pub listen: SocketAddr,
    /// Listen on a new Unix socket at this path instead (mode 0600, in a
    /// folder the caller made private): only its owner's connections are
    /// served, so no token is asked (`hookrt service`).
    pub socket: Option<PathBuf>,
    /// Stop once no connection was open for this long (the resident
    /// service exits when idle); `None`: never.
    pub idle_exit: Option<Duration>,
    /// Before handing an event to the hooks, load the agent folder again
    /// when it (or its lock) changed since this fingerprint, taken before
    /// the runtime was loaded; a changed folder that does not load fails
    /// the event's gate (the resident service: no event is answered by a
    /// policy older than the folder). `None`: reload on SIGHUP only.
    pub follow_changes: Option<Fingerprint>,
    /// Commit every event to this journal before hooks see it (`persisted`).
    pub journal: Option<PathBuf>,
    /// Accepted bearer tokens.
    pub tokens: Tokens,
    /// Serve without tokens (loopback addresses only).
    pub insecure_no_auth: bool,
    /// How long `/v1/decide` and `/v1/edit` wait before failing closed.
    pub decide_timeout: Duration,
    /// The largest request body read (413 past it).
    pub max_body_bytes: usize,
    /// Connections open at once at most. Only authenticated connections
    /// hold a slot for good: past the cap a newcomer takes the slot of one
    /// that has not authenticated, else waits to be accepted.
    pub max_connections: usize,
    /// How long a connection with no request in flight may stay silent.
    pub idle_timeout: Duration,
    /// What request bodies in flight, and the events parsed from them, may
    /// hold at once (503 `server_busy` past it). At least `max_body_bytes`
    /// plus [`PARSE_WINDOW`].
    pub max_in_flight_bytes: usize,
    /// How long a request's line and headers may take to arrive (the
    /// connection is closed past it), and a kept-alive connection may wait
    /// for its next request.
    pub header_timeout: Duration,
    /// How long a request's body may take to arrive (408 past it).
    pub body_timeout: Duration,
    /// Requests per second per token on average (0: no limit).
    pub rate_limit: f64,
    /// Requests per token at once.
    pub rate_burst: f64,
    /// How long queued deliveries may run at shutdown before they are cancelled.
    pub drain_timeout: Duration,
    /// Delivery threads ([`ServiceOptions::threads`]).
    pub threads: usize,
    /// How hot reloads load the agent folder (cache, prebuilt, lock); `None`:
    /// [`BuildOptions::for_agent`].
    pub build: Option<BuildOptions>,
    /// Send `POST /v1/events` there instead of the local service
    /// (`hookrt serve --nats`); decisions and edits stay local.
    pub forward: Option<Arc<dyn Forward>>,
    /// Print each delivery's line on stdout as it ends (the front-end
    /// kit's delivery line, as `hookrt run` prints it).
    pub print_deliveries: bool,
    /// The auditor's trail in the journal, and the key signing it.
    pub trail: hookrt::journal::TrailOptions,
    /// Wraps the service's observer and is told of each event `/v1/events`,
    /// `/v1/decide` and `/v1/edit` take, with the request's `traceparent`
    /// (the command's OpenTelemetry export, docs/telemetry.md).
    pub tap: Option<Arc<dyn Tap>>,
    /// The agents with a route (`POST /v1/<agent>`): the registry,
    /// `Bridge::ALL`, unless an embedder (or a test) adds its own.
    pub agents: Vec<Bridge>,
    /// Append each agent route's input, as the agent sent it and masked by
    /// the folder's redaction patterns, to this recording
    /// (`hookrt::front::record`).
    pub record: Option<PathBuf>,
    /// The secrets a signed source's requests are checked with (Anthropic's
    /// inference hooks, `Protocol::signature`); `None`: its route refuses
    /// every request.
    pub webhook_secrets: Option<WebhookSecrets>,
    /// Whether the MCP interceptors on `/mcp` block what the hooks refuse
    /// (`Active`) or only report it (`Audit`: the invoker never blocks on
    /// them, a shadow rollout; `hookrt serve --mcp-audit`).
    pub mcp_mode: hookrt_mcp::Mode,
}

impl ServeOptions {
    /// The defaults, listening on `listen` with `tokens`.
    pub fn new(listen: SocketAddr, tokens: Tokens) -> ServeOptions {
        ServeOptions {
            listen,
            socket: None,
            idle_exit: None,
            follow_changes: None,
            journal: None,
            tokens,
            insecure_no_auth: false,
            decide_timeout: Duration::from_millis(2000),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_in_flight_bytes: DEFAULT_MAX_IN_FLIGHT_BYTES,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            rate_limit: 1000.0,
            rate_burst: 2000.0,
            drain_timeout: Duration::from_secs(30),
            threads: 1,
            build: None,
            forward: None,
            print_deliveries: false,
            trail: hookrt::journal::TrailOptions::default(),
            tap: None,
            agents: Bridge::ALL.to_vec(),
            record: None,
            webhook_secrets: None,
            mcp_mode: hookrt_mcp::Mode::Active,
        }
    }
}

/// Serves `runtime` until `shutdown` resolves, then stops taking requests,
/// lets running ones finish, and shuts the service down within the drain
/// timeout (or once no connection was open for `idle_exit`). `on_listen`
/// is told where the server listens once it does.
/// SIGHUP (and `POST /v1/admin/reload`) loads the runtime's agent folder
/// again and swaps the new hooks in (docs/serve.md#hot-reload).
pub async fn serve(
    mut runtime: Runtime,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
    on_listen: impl FnOnce(&Bound),
) -> Result<Stats, ServeError> {
    check_options(&options)?;
    let listener = bind(&options).await?;
    let tokens = (!options.tokens.is_empty()).then_some(options.tokens);
    let bound = listener.bound()?;
    runtime.set_transport(Transport {
        kind: "http".into(),
        detail: None,
    });
    let server_metrics = Arc::new(ServerMetrics::new());
    server_metrics.hooks.set(runtime.hooks().len() as i64);
    let agent_dir = runtime.agent_dir().to_path_buf();
    let record = (options.record.clone()).map(|p| (p, runtime.redactor().clone()));
    let build = options
        .build
        .clone()
        .unwrap_or_else(|| BuildOptions::for_agent(&agent_dir));
    // Signed receipts name the components and settings deciding.
    let receipts = options.trail.signing_key.map(|_| reload::Receipts {
        context: Arc::new(std::sync::RwLock::new(hookrt::journal::trail_context(
            &runtime,
            &options.trail,
        ))),
        options: options.trail,
    });
    let observer = metrics::observer(server_metrics.clone(), options.print_deliveries);
    let observer = match &options.tap {
        Some(tap) => tap.observer(observer),
        None => observer,
    };
    let service = HookService::start(
        runtime,
        options.journal.clone(),
        observer,
        ServiceOptions {
            threads: options.threads,
            trail: options.trail,
            ..ServiceOptions::default()
        },
    )
    .await?;
    let journal = options.journal.as_deref().map(open_journal).transpose()?;
    // One bucket per token (or the one of a server without), and one for
    // signed sources' requests.
    let keys = tokens.as_ref().map_or(1, |t| t.len()) + 1;
    let state = Arc::new(AppState {
        durability: service.durability(),
        service: RwLock::new(Some(service)),
        streams: ingest::Streams::with_journal(options.journal.clone()),
        metrics: server_metrics,
        tokens,
        limiter: RateLimiter::new(options.rate_limit, options.rate_burst.max(1.0), keys),
        journal,
        receipts: receipts.as_ref().map(|r| r.context.clone()),
        reloader: Reloader::new(agent_dir, build, receipts, options.follow_changes.clone()),
        decide_timeout: options.decide_timeout,
        max_body_bytes: options.max_body_bytes,
        body_timeout: options.body_timeout,
        budget: Arc::new(budget::Budget::new(options.max_in_flight_bytes)),
        stopping: AtomicBool::new(false),
        forward: options.forward.clone(),
        tap: options.tap.clone(),
        record,
        webhook_secrets: options.webhook_secrets.clone(),
    });
    reload_on_hangup(state.clone())?;
    let flusher = tokio::spawn(give_back_once_delivered(state.clone()));
    on_listen(&bound);
    let app = router::router(state.clone(), &options.agents, options.mcp_mode);
    let bounds = connections::Bounds {
        max_connections: options.max_connections,
        header_timeout: options.header_timeout,
        idle_timeout: options.idle_timeout,
        idle_exit: options.idle_exit,
    };
    take_connections(listener, app, &state, bounds, shutdown).await;
    flusher.abort();
    let service = state.service.write().await.take();
    Ok(match service {
        Some(service) => service.shutdown(options.drain_timeout).await,
        None => Stats::default(),
    })
}

/// The listener `options` ask for: the Unix socket, else the address; one
/// in use or refused names itself.
async fn bind(options: &ServeOptions) -> Result<Listener, ServeError> {
    match &options.socket {
        #[cfg(unix)]
        Some(path) => Listener::unix(path),
        #[cfg(not(unix))]
        Some(path) => Err(ServeError::BindSocket {
            path: path.clone(),
            source: std::io::Error::other("Unix sockets need a Unix system"),
        }),
        None => Listener::tcp(options.listen).await,
    }
}

/// The journal's reader for the routes that read it (`/v1/journal/...`).
fn open_journal(path: &std::path::Path) -> Result<Mutex<Journal>, ServeError> {
    let journal = Journal::open_existing(path).map_err(|e| ServeError::Start(e.into()))?;
    Ok(Mutex::new(journal))
}

/// Serves `app` on `listener`'s connections until `shutdown`, which
/// marks the state stopping; returns once running requests finished.
async fn take_connections(
    listener: Listener,
    app: axum::Router,
    state: &Arc<AppState>,
    bounds: connections::Bounds,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let stopping = state.clone();
    let trusting = state.clone();
    let trusts: connections::Trusts = Arc::new(move |headers| trusting.authenticates(headers));
    connections::serve(listener, app, bounds, trusts, async move {
        shutdown.await;
        stopping.stopping.store(true, Ordering::SeqCst);
        tracing::info!(target: "hookrt", "shutting down: finishing requests, then draining the service");
    })
    .await;
}

/// Refuses options that cannot serve safely: no tokens unless
/// `insecure_no_auth`, and that only on a loopback address (a Unix socket
/// serves its owner alone, and needs none); an in-flight budget smaller
/// than one request and its parse window.
fn check_options(options: &ServeOptions) -> Result<(), ServeError> {
    let owner_only = options.socket.is_some();
    match (
        options.tokens.is_empty() && !owner_only,
        options.insecure_no_auth,
    ) {
        (true, false) => return Err(ServeError::NoTokens),
        (true, true) if !options.listen.ip().is_loopback() => {
            return Err(ServeError::InsecureNotLoopback(options.listen));
        }
        _ => {}
    }
    let smallest = options.max_body_bytes.saturating_add(PARSE_WINDOW);
    if options.max_in_flight_bytes < smallest {
        return Err(ServeError::Budget {
            budget: options.max_in_flight_bytes,
            smallest,
        });
    }
    Ok(())
}

/// Gives the budget back what requests handed to it, once a flush of the
/// service proves the events they gave it delivered (`budget.rs`).
async fn give_back_once_delivered(state: Arc<AppState>) {
    let budget = state.budget.clone();
    budget
        .flushing(move || {
            let state = state.clone();
            async move {
                if let Some(service) = state.service.read().await.as_ref() {
                    service.flush().await;
                }
            }
        })
        .await;
}

/// Reloads the hooks at every SIGHUP, for as long as the server runs. The
/// handler is installed before the server says it listens, so a SIGHUP
/// never ends the process.
fn reload_on_hangup(state: Arc<AppState>) -> Result<(), ServeError> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut hangups = signal(SignalKind::hangup())?;
        tokio::spawn(async move {
            while hangups.recv().await.is_some() {
                tracing::info!(target: "hookrt", "SIGHUP: reloading the hooks");
                let guard = state.service.read().await;
                let Some(service) = guard.as_ref() else {
                    return;
                };
                // The result is counted and logged by the reloader.
                let _ = state.reloader.reload(service, &state.metrics).await;
            }
        });
    }
    #[cfg(not(unix))]
    let _ = state;
    Ok(())
}

/// Resolves at ctrl-c or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
