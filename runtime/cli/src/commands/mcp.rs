//! `hookrt mcp DIR`: the agent folder's hooks as an MCP interceptor server
//! over stdio (hookrt-mcp; SEP-2624, a draft), for an MCP host or gateway
//! that starts its interceptors as processes. stdout carries the MCP
//! messages and nothing else; logs go to stderr. One hook service for the
//! whole session, with an optional journal; `hookrt serve` offers the same
//! interceptors over streamable HTTP on `/mcp` (docs/agents.md, "MCP
//! interceptors").

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use hookrt::{HookService, Runtime, ServiceOptions, Transport};

use crate::loading::Loading;

#[derive(clap::Args)]
pub(crate) struct McpArgs {
    /// The agent folder.
    pub dir: PathBuf,
    /// Commit every event to this journal (SQLite) before any hook sees it.
    #[arg(long)]
    pub journal: Option<PathBuf>,
    /// How long the hooks may take on one invocation (less where the
    /// invoker's `timeoutMs` asks): past it a call is refused.
    #[arg(long, default_value = "2000", value_name = "MS")]
    pub decide_timeout_ms: u64,
    /// Offer the interceptors in `audit` mode: the invoker records what the
    /// hooks decide and blocks nothing (a shadow rollout).
    #[arg(long)]
    pub audit: bool,
    /// How long to let queued deliveries finish once the client has gone.
    #[arg(long, default_value = "30", value_name = "SECONDS")]
    pub drain_timeout: u64,
    #[command(flatten)]
    pub trail: crate::args::TrailArgs,
}

impl McpArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        loading.loaded(&self.dir, |rt| serve(rt, &self))
    }
}

fn serve(mut rt: Runtime, args: &McpArgs) -> Result<ExitCode> {
    rt.set_transport(Transport {
        kind: "stdio".into(),
        detail: None,
    });
    if let Some(w) = rt.unlocked_warning() {
        tracing::warn!("{w}");
    }
    // One delivery thread: a session's invocations come one at a time.
    let options = ServiceOptions {
        trail: args.trail.options()?,
        ..ServiceOptions::default()
    };
    let mode = match args.audit {
        true => hookrt_mcp::Mode::Audit,
        false => hookrt_mcp::Mode::Active,
    };
    let budget = Duration::from_millis(args.decide_timeout_ms);
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    tokio.block_on(async {
        // Deliveries are not printed: stdout is the client's.
        let service =
            HookService::start(rt, args.journal.clone(), Box::new(|_| {}), options).await?;
        let service = Arc::new(service);
        let interceptors = hookrt_mcp::Interceptors::new(service.clone(), budget, mode, "stdio");
        let served = hookrt_mcp::serve_stdio(interceptors).await;
        // The session is over: what its events started is drained.
        if let Ok(service) = Arc::try_unwrap(service) {
            service
                .shutdown(Duration::from_secs(args.drain_timeout))
                .await;
        }
        served.context("the MCP session over stdio failed")?;
        Ok(ExitCode::SUCCESS)
    })
}
