//! The router: every endpoint ([`routes`]) and its handler (`routes.rs`,
//! `decide.rs`, and `hook.rs` for each agent of the registry, `Bridge::ALL`), and the
//! answers for a path or method it does not serve.

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{MethodRouter, get, post};
use hookrt::front::bridge::Bridge;

use crate::decide::{decide, edit};
use crate::error::ApiError;
use crate::hook::agent_hook;
use crate::mcp;
use crate::routes::{Shared, events, healthz, metrics, readyz, reload};

/// The endpoints that are no agent's, `(method, path)`.
const ENDPOINTS: &[(&str, &str)] = &[
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
    ("POST", "/v1/events"),
    ("POST", "/v1/decide"),
    ("POST", "/v1/edit"),
    ("POST", "/v1/admin/reload"),
];

/// Every endpoint, `(method, path)`: [`ENDPOINTS`], then `POST` on each
/// agent's route (`/v1/<agent>`). The router is built from this list, and
/// `tests/serve/openapi.rs` checks it against docs/openapi.json both ways.
/// Beside them the router serves `/mcp`, the MCP interceptors' streamable
/// HTTP endpoint, whose protocol is MCP's own rather than this document's
/// (`mcp.rs`; docs/serve.md, "MCP interceptors").
pub fn routes() -> Vec<(&'static str, String)> {
    ENDPOINTS
        .iter()
        .map(|(method, path)| (*method, (*path).to_owned()))
        .chain(Bridge::ALL.iter().map(|b| ("POST", b.route())))
        .collect()
}

/// The handler of one of [`ENDPOINTS`].
fn handler(path: &str) -> MethodRouter<Shared> {
    match path {
        "/healthz" => get(healthz),
        "/readyz" => get(readyz),
        "/metrics" => get(metrics),
        "/v1/events" => post(events),
        "/v1/decide" => post(decide),
        "/v1/edit" => post(edit),
        "/v1/admin/reload" => post(reload),
        other => unreachable!("{other} is in ENDPOINTS without a handler"),
    }
}

/// The router over `state`, with a route for each of `agents`, and the MCP
/// interceptors' endpoint in `mcp_mode`.
pub(crate) fn router(state: Shared, agents: &[Bridge], mcp_mode: hookrt_mcp::Mode) -> Router {
    let router = ENDPOINTS.iter().fold(Router::new(), |router, (_, path)| {
        router.route(path, handler(path))
    });
    let interceptors = Router::new()
        .route_service(mcp::PATH, mcp::service(&state, mcp_mode))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            mcp::admit,
        ));
    let router = router.merge(interceptors);
    let router = agents.iter().fold(router, |router, &bridge| {
        router.route(
            &bridge.route(),
            post(move |state, query, headers, body| {
                agent_hook(bridge, state, query, headers, body)
            }),
        )
    });
    let agent_routes = agents
        .iter()
        .map(|b| b.route())
        .collect::<Vec<_>>()
        .join(", ");
    let not_found = format!(
        "POST /v1/events, /v1/decide, /v1/edit, {agent_routes} or /v1/admin/reload; GET /healthz, /readyz or /metrics (docs/serve.md, docs/openapi.json); MCP at {}",
        mcp::PATH
    );
    router
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "this endpoint does not take that method",
                "GET /healthz, /readyz and /metrics; POST the others (docs/serve.md#endpoints)",
            )
        })
        .fallback(move || {
            let fix = not_found.clone();
            async move { ApiError::new(StatusCode::NOT_FOUND, "no such endpoint", fix) }
        })
        .with_state(state)
}
