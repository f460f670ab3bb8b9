//! `/mcp`: the MCP interceptors' endpoint (hookrt-mcp's streamable HTTP
//! service) over the server's own hook service, so an MCP host or
//! gateway's `tools/call` is decided by the same hooks as the agents'
//! routes and lands in the same journal. Behind the server's bearer tokens
//! (a token bound to agents must name `mcp`), rate limits, body limit, body
//! timeout and in-flight budget, like every other endpoint.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hookrt::front::decide::Resolver;
use hookrt::{EmitError, Envelope, ResolveReply};

use crate::routes::Shared;

/// The path of the endpoint.
pub(crate) const PATH: &str = "/mcp";

/// The MCP protocol's agent name: a token must be bound to it (or to no
/// agent) to invoke the interceptors.
const AGENT: &str = "mcp";

/// The server's hook service as the interceptors' resolver: the one the
/// server holds now (a reload swaps it).
pub(crate) struct Served(pub(crate) Shared);

impl Resolver for Served {
    async fn resolve(&self, envelope: Envelope) -> Result<ResolveReply, EmitError> {
        let guard = self.0.service.read().await;
        match guard.as_ref() {
            Some(service) => service.resolve(envelope).await,
            None => Err(EmitError::ShuttingDown(envelope.id)),
        }
    }
}

/// Admits a request to `/mcp` as every endpoint admits one (its token, one
/// request from its bucket), and only for a caller that may send the MCP
/// plane's events.
pub(crate) async fn admit(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let access = match state.admit(request.headers()) {
        Ok(access) => access,
        Err(e) => return e.into_response(),
    };
    if !access.may_send(AGENT) {
        return access.refuse_agent(AGENT).into_response();
    }
    // The body as every route reads it: within the server's limit and body
    // timeout, charged to the bodies in flight (and what it costs parsed)
    // while the MCP server takes it.
    let (parts, body) = request.into_parts();
    let (bytes, mut charge) = match state.read(&parts.headers, body).await {
        Ok(read) => read,
        Err(e) => return e.into_response(),
    };
    if let Err(e) = state.charge_parse(&mut charge, &bytes) {
        return e.into_response();
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    drop(charge);
    response
}

/// The endpoint's service over `state`.
pub(crate) fn service(state: &Shared, mode: hookrt_mcp::Mode) -> hookrt_mcp::HttpService<Served> {
    hookrt_mcp::http_service(
        std::sync::Arc::new(Served(state.clone())),
        state.decide_timeout,
        mode,
        state.max_body_bytes,
        // `admit` checks the caller (and, without tokens, that it is a
        // program on loopback): any `Host` the server answers is taken.
        true,
    )
}
