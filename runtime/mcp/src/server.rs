//! The MCP server: `initialize` advertises the interceptors extension
//! (`capabilities.extensions["io.modelcontextprotocol/interceptors"]`,
//! `supportedEvents: ["tools/call"]`), and the draft's two methods are
//! answered: `interceptors/list`, and `interceptor/invoke` (also under the
//! draft's other spelling, `interceptors/invoke`, which its working group
//! has not settled). An invocation is decided by the folder's hooks through
//! any [`Resolver`] within the server's budget (and the invoker's
//! `timeoutMs`): a gate hookrt cannot decide (hooks past the budget, a
//! service that will not take the event, an input it cannot read) is
//! refused, an invalid call or a failed mutator, never let through.
//!
//! Over stdio ([`serve_stdio`], `hookrt mcp DIR`), or as a tower service
//! for streamable HTTP ([`http_service`], mounted by `hookrt serve` on
//! `/mcp`); each MCP session has an id of its own, the session of its
//! events when the invoker's `context` names none.

use std::sync::Arc;
use std::time::{Duration, Instant};

use hookrt::front::bridge::{Bridge, BridgeEvent};
use hookrt::front::decide::{Resolver, Undecided, decide};
use rmcp::model::{
    CustomRequest, CustomResult, ErrorCode, ExtensionCapabilities, Implementation,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use crate::interceptors::{EVENT, EXTENSION, Mode, list};
use crate::invoke::{Invocation, InvokeError};

/// The interceptor server of one MCP session.
pub struct Interceptors<R> {
    resolver: Arc<R>,
    /// How long hooks may take on an invocation, at most.
    budget: Duration,
    mode: Mode,
    /// `data.bridge.transport` of its events (`stdio`, `http`).
    transport: &'static str,
    /// The MCP session's id.
    session: String,
}

/// The `mcp` protocol of the registry.
fn bridge() -> Bridge {
    Bridge::named("mcp").expect("the registry names the MCP interceptors")
}

impl<R: Resolver + Send + Sync + 'static> Interceptors<R> {
    /// A new session's server deciding through `resolver` within `budget`.
    pub fn new(resolver: Arc<R>, budget: Duration, mode: Mode, transport: &'static str) -> Self {
        let mut id = [0u8; 8];
        // No randomness: the session is told apart by the time instead.
        if getrandom::fill(&mut id).is_err() {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            id = (now.as_nanos() as u64).to_le_bytes();
        }
        Interceptors {
            resolver,
            budget,
            mode,
            transport,
            session: format!("mcp-{}", hex::encode(id)),
        }
    }

    /// One `interceptor/invoke`: its result, or the draft's error.
    async fn invoke(&self, params: Option<&Value>) -> Result<Value, InvokeError> {
        let started = Instant::now();
        let invocation = Invocation::read(params)?;
        let bridge = bridge();
        let gate = bridge.is_gate(invocation.hook);
        let input = invocation.hook_input(&self.session).to_string();
        let event = bridge.read(bridge.name(), &input, None, self.transport);
        let BridgeEvent { name, envelope } = match event {
            Ok(event) => event,
            // An unreadable call is refused, not let through.
            Err(e) if gate => {
                let refusal = bridge.refusal(invocation.hook, &e.to_string());
                return invocation.result(Some(refusal), started.elapsed());
            }
            Err(e) => return Err(InvokeError::Params(e.to_string())),
        };
        // Answer before the invoker gives up on the interceptor.
        let budget = invocation
            .timeout
            .map_or(self.budget, |t| self.budget.min(t.mul_f64(0.8)));
        let answer = match decide(&*self.resolver, envelope, budget)
            .await
            .told(bridge, &name)
        {
            Ok(told) => told.answer,
            Err(why) => {
                let reason = match why {
                    Undecided::Duplicate => {
                        "this event's id was taken before; its decision is not made again"
                            .to_owned()
                    }
                    Undecided::Refused(e) => e.to_string(),
                    Undecided::TimedOut(b) => {
                        format!(
                            "hooks did not decide within the budget ({} ms)",
                            b.as_millis()
                        )
                    }
                };
                match gate {
                    true => Some(bridge.refusal(&name, &reason)),
                    // A result is not held back: it is let through, and
                    // the invoker told hookrt did not record it.
                    false => {
                        tracing::warn!(event = %name, "an MCP result was not recorded: {reason}");
                        let message = format!("hookrt did not record this result: {reason}");
                        Some(json!({"valid": true, "severity": "warn",
                            "messages": [{"message": message, "severity": "warn"}]}))
                    }
                }
            }
        };
        invocation.result(answer, started.elapsed())
    }
}

impl<R: Resolver + Send + Sync + 'static> ServerHandler for Interceptors<R> {
    fn get_info(&self) -> ServerConfig {
        let mut extensions = ExtensionCapabilities::new();
        let supported = json!({"supportedEvents": [EVENT]});
        let Value::Object(supported) = supported else {
            unreachable!("an object literal")
        };
        extensions.insert(EXTENSION.into(), supported);
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_extensions_with(extensions)
                .build(),
        )
        .with_server_info(Implementation::new("hookrt", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "hookrt's interceptors of tools/call (SEP-2624, draft of 2026-07-17): `hookrt-rewrite` (mutation) then `hookrt` (validation) on requests, `hookrt` on responses",
        )
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let params = request.params.as_ref();
        match request.method.as_str() {
            "interceptors/list" => list(params, self.mode)
                .map(CustomResult::new)
                .map_err(|e| ErrorData::invalid_params(e, None)),
            "interceptor/invoke" | "interceptors/invoke" => self
                .invoke(params)
                .await
                .map(CustomResult::new)
                .map_err(|e| ErrorData::new(ErrorCode(e.code()), e.message(), e.data())),
            other => Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "hookrt's interceptor server has no method `{other}` (it answers interceptors/list and interceptor/invoke)"
                ),
                None,
            )),
        }
    }
}

/// The streamable HTTP endpoint [`http_service`] makes: a tower service.
pub type HttpService<R> = StreamableHttpService<Interceptors<R>, LocalSessionManager>;

/// Serves `interceptors` on stdin and stdout until the client closes them.
pub async fn serve_stdio<R: Resolver + Send + Sync + 'static>(
    interceptors: Interceptors<R>,
) -> std::io::Result<()> {
    let running = interceptors
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// The streamable HTTP endpoint of interceptors deciding through
/// `resolver` within `budget`: a session of its own per MCP client,
/// request bodies of at most `max_body_bytes`. `any_host`: the server
/// authenticates its callers (a bearer token), so any `Host` is taken;
/// else only loopback names are (a browser page cannot reach it by DNS
/// rebinding).
pub fn http_service<R: Resolver + Send + Sync + 'static>(
    resolver: Arc<R>,
    budget: Duration,
    mode: Mode,
    max_body_bytes: usize,
    any_host: bool,
) -> HttpService<R> {
    let mut config =
        StreamableHttpServerConfig::default().with_max_request_body_bytes(max_body_bytes);
    if any_host {
        config = config.disable_allowed_hosts();
    }
    StreamableHttpService::new(
        move || Ok(Interceptors::new(resolver.clone(), budget, mode, "http")),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
