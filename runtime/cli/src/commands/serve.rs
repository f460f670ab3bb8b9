//! `hookrt serve`: the agent folder's hooks over HTTP (hookrt-serve, docs/serve.md).
//! SIGHUP reloads the hooks; stdout has the listening line, one `{"cascade": ...}`
//! line per failure cascade (as `hookrt run` writes them), and the summary at exit.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use anyhow::{Context, Result};
use hookrt::front::summary::Summary;
use hookrt::{BuildOptions, Durability, Envelope, Receipt, Runtime};
use hookrt_serve::{BoxError, Forward, ServeOptions, Tokens};

use crate::loading::Loading;

/// The OpenTelemetry export as the server's tap: it wraps the observer and
/// notes each event with its request's `traceparent` (docs/telemetry.md).
#[derive(Debug)]
struct Traced(Arc<hookrt_otel::Telemetry>);

impl hookrt_serve::Tap for Traced {
    fn observer(&self, inner: hookrt::Observer) -> hookrt::Observer {
        self.0.observer(inner)
    }

    fn taken(&self, envelope: &Envelope, traceparent: Option<&str>) {
        self.0.parents().note(envelope, traceparent);
    }
}

/// `--nats`: events published to JetStream, each receipt after the stream's ack.
#[derive(Debug)]
struct ToJetStream(hookrt_worker::Publisher);

impl Forward for ToJetStream {
    fn forward(
        &self,
        envelope: Envelope,
    ) -> Pin<Box<dyn Future<Output = Result<Receipt, BoxError>> + Send + '_>> {
        Box::pin(async move {
            // An id its agent used for another event: the conflict the
            // journal would answer, so the door answers it the same way.
            let published = self.0.publish(&envelope).await.map_err(|e| -> BoxError {
                match e {
                    hookrt_worker::WorkerError::Conflict {
                        event_id, agent, ..
                    } => Box::new(hookrt::EmitError::Conflict {
                        id: event_id,
                        agent,
                    }),
                    other => Box::new(other),
                }
            })?;
            Ok(Receipt {
                event_id: published.event_id,
                durability: published.durability,
                seq: i64::try_from(published.seq).ok(),
                duplicate: published.duplicate,
            })
        })
    }
}

#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// The agent folder.
    pub dir: PathBuf,
    /// Address to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:8787")]
    pub listen: SocketAddr,
    /// Commit every event to this journal (SQLite) before any hook sees it:
    /// receipts say `persisted`.
    #[arg(long)]
    pub journal: Option<PathBuf>,
    /// File of bearer tokens, one per line (at least 16 characters each).
    #[arg(long, value_name = "FILE")]
    pub tokens: Option<PathBuf>,
    /// Serve without authentication (only on a loopback address).
    #[arg(long)]
    pub insecure_no_auth: bool,
    /// File of Standard Webhooks secrets (`whsec_…`, one per line; two
    /// while one is rotated) that signed sources' requests are checked with:
    /// Anthropic's inference hooks, POSTing to /v1/anthropic-inference.
    #[arg(long, value_name = "FILE")]
    pub webhook_secrets: Option<PathBuf>,
    /// How long /v1/decide and /v1/edit wait for hooks before failing closed.
    #[arg(long, default_value = "2000", value_name = "MS")]
    pub decide_timeout_ms: u64,
    /// The largest request body (413 past it).
    #[arg(long, default_value_t = hookrt_serve::DEFAULT_MAX_BODY_BYTES, value_name = "BYTES")]
    pub max_body_bytes: usize,
    /// Connections open at once at most. Only authenticated connections
    /// hold a slot for good: past the cap a newcomer takes the slot of a
    /// connection without a valid token, else waits to be accepted.
    #[arg(long, default_value_t = hookrt_serve::DEFAULT_MAX_CONNECTIONS, value_name = "N")]
    pub max_connections: usize,
    /// How long a request's line and headers may take to arrive, counted
    /// from the previous answer on a kept-alive connection (the connection
    /// is closed past it).
    #[arg(long, default_value = "10000", value_name = "MS")]
    pub header_timeout_ms: u64,
    /// How long a connection with no request in flight may stay silent
    /// before it is closed.
    #[arg(long, default_value = "5000", value_name = "MS")]
    pub idle_timeout_ms: u64,
    /// What request bodies in flight, and the events parsed from them, may
    /// hold at once; a request past it is refused (503 server_busy,
    /// Retry-After) before its body is read. Default: 96 MiB, or one
    /// largest body and its parse window when --max-body-bytes needs more.
    #[arg(long, value_name = "BYTES")]
    pub max_in_flight_bytes: Option<usize>,
    /// How long a request's body may take to arrive (408 past it).
    #[arg(long, default_value = "30000", value_name = "MS")]
    pub body_timeout_ms: u64,
    /// Requests per second per token, on average (0: no limit).
    #[arg(long, default_value = "1000", value_name = "PER_SECOND")]
    pub rate_limit: f64,
    /// Requests per token at once, above the average.
    #[arg(long, default_value = "2000", value_name = "REQUESTS")]
    pub rate_burst: f64,
    /// How long to let queued deliveries finish at shutdown before cancelling them.
    #[arg(long, default_value = "30", value_name = "SECONDS")]
    pub drain_timeout: u64,
    /// Publish events (`POST /v1/events`) to this NATS server's JetStream
    /// instead of delivering them here: a `hookrt worker` fleet delivers
    /// them; receipts say `persisted` after the stream's ack. Decisions and
    /// edits are still answered here (docs/worker.md).
    #[arg(long, value_name = "URL", conflicts_with = "journal")]
    pub nats: Option<String>,
    /// With --nats: where the events go (as the workers').
    #[command(flatten)]
    pub stream: crate::args::StreamArgs,
    /// Print one JSON line per delivery on stdout (as `hookrt run` does).
    #[arg(long)]
    pub print_deliveries: bool,
    /// Offer the MCP interceptors on /mcp in `audit` mode: the invoker
    /// records what the hooks decide and blocks nothing (a shadow rollout).
    #[arg(long)]
    pub mcp_audit: bool,
    /// Append each input the agent routes take, as the agent sent it and
    /// masked by the folder's redaction patterns, to this recording (`hookrt
    /// test --agent AGENT --events FILE` replays it).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    #[command(flatten)]
    pub threads: crate::args::ThreadsArgs,
    #[command(flatten)]
    pub trail: crate::args::TrailArgs,
}

/// The configured tokens: `--tokens FILE`, else `HOOKRT_TOKENS`.
fn tokens(args: &ServeArgs) -> Result<Tokens> {
    if let Some(path) = &args.tokens {
        return Ok(Tokens::from_file(path)?);
    }
    match std::env::var("HOOKRT_TOKENS") {
        Ok(text) => Ok(Tokens::parse(&text)?),
        Err(_) => Ok(Tokens::default()),
    }
}

/// Serves `rt`; hot reloads load the folder again with `build`.
impl ServeArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        // Hot reloads load the folder the same way.
        let build = loading.clone().options(&self.dir);
        loading.loaded(&self.dir, |rt| serve(rt, &self, build))
    }
}

fn serve(rt: Runtime, args: &ServeArgs, build: BuildOptions) -> Result<ExitCode> {
    let mut options = ServeOptions::new(args.listen, tokens(args)?);
    options.build = Some(build);
    options.journal = args.journal.clone();
    options.insecure_no_auth = args.insecure_no_auth;
    options.webhook_secrets = args
        .webhook_secrets
        .as_deref()
        .map(hookrt_serve::WebhookSecrets::from_file)
        .transpose()?;
    options.decide_timeout = Duration::from_millis(args.decide_timeout_ms);
    options.max_body_bytes = args.max_body_bytes;
    options.max_connections = args.max_connections;
    options.header_timeout = Duration::from_millis(args.header_timeout_ms);
    options.idle_timeout = Duration::from_millis(args.idle_timeout_ms);
    options.max_in_flight_bytes = args.max_in_flight_bytes.unwrap_or(
        hookrt_serve::DEFAULT_MAX_IN_FLIGHT_BYTES.max(
            args.max_body_bytes
                .saturating_add(hookrt_serve::PARSE_WINDOW),
        ),
    );
    options.body_timeout = Duration::from_millis(args.body_timeout_ms);
    options.rate_limit = args.rate_limit;
    options.rate_burst = args.rate_burst;
    options.drain_timeout = Duration::from_secs(args.drain_timeout);
    options.threads = args.threads.count();
    options.trail = args.trail.options()?;
    options.print_deliveries = args.print_deliveries;
    options.record = args.record.clone();
    if args.mcp_audit {
        options.mcp_mode = hookrt_mcp::Mode::Audit;
    }
    let hooks = rt.hooks().len();
    if let Some(w) = rt.unlocked_warning() {
        tracing::warn!("{w}");
    }
    // Off unless the OTEL_* environment asks; started before the async
    // runtime (the exporter's client is a blocking one).
    let telemetry = hookrt_otel::init_from_env()
        .context("cannot start the OpenTelemetry export (docs/telemetry.md)")?
        .map(Arc::new);
    if let Some(t) = &telemetry {
        options.tap = Some(Arc::new(Traced(t.clone())));
    }
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    if let Some(url) = &args.nats {
        let publisher = tokio.block_on(hookrt_worker::publisher(
            url,
            &args.stream.stream,
            &args.stream.prefix,
            args.stream.partitions,
            usize::from(args.stream.replicas),
        ))?;
        options.forward = Some(Arc::new(ToJetStream(publisher)));
    }
    let stats = tokio.block_on(hookrt_serve::serve(
        rt,
        options,
        hookrt_serve::shutdown_signal(),
        |bound| {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "listening on {bound} ({hooks} hook(s))");
            let _ = out.flush();
        },
    ));
    // The spans not yet sent go out once the service has ended.
    if let Some(t) = &telemetry
        && let Err(e) = t.shutdown()
    {
        tracing::warn!(target: "hookrt", "{e}");
    }
    let stats = stats?;
    let durability = if args.journal.is_some() {
        Durability::Persisted
    } else {
        Durability::Accepted
    };
    Summary::of_stats(&stats, durability).write(&mut std::io::stdout().lock())?;
    Ok(ExitCode::SUCCESS)
}
