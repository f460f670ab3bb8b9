//! The router: every endpoint ([`ROUTES`]) and its handler (`routes.rs`,
//! `hook.rs`), and the answers for a path or method it does not serve.

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{MethodRouter, get, post};

use crate::error::ApiError;
use crate::hook::{claude_code, codex, copilot, cursor, gemini};
use crate::routes::{Shared, decide, edit, events, healthz, metrics, readyz, reload};

/// Every endpoint, `(method, path)`: the router is built from this list, and
/// `tests/serve/openapi.rs` checks it against docs/openapi.json both ways.
pub const ROUTES: &[(&str, &str)] = &[
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
    ("POST", "/v1/events"),
    ("POST", "/v1/decide"),
    ("POST", "/v1/edit"),
    ("POST", "/v1/admin/reload"),
    ("POST", "/v1/claude-code"),
    ("POST", "/v1/codex"),
    ("POST", "/v1/gemini"),
    ("POST", "/v1/cursor"),
    ("POST", "/v1/copilot"),
];

/// The handler of one of [`ROUTES`].
fn handler(path: &str) -> MethodRouter<Shared> {
    match path {
        "/healthz" => get(healthz),
        "/readyz" => get(readyz),
        "/metrics" => get(metrics),
        "/v1/events" => post(events),
        "/v1/decide" => post(decide),
        "/v1/edit" => post(edit),
        "/v1/admin/reload" => post(reload),
        "/v1/claude-code" => post(claude_code),
        "/v1/codex" => post(codex),
        "/v1/gemini" => post(gemini),
        "/v1/cursor" => post(cursor),
        "/v1/copilot" => post(copilot),
        other => unreachable!("{other} is in ROUTES without a handler"),
    }
}

/// The router over `state`.
pub fn router(state: Shared) -> Router {
    ROUTES
        .iter()
        .fold(Router::new(), |router, (_, path)| {
            router.route(path, handler(path))
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "this endpoint does not take that method",
                "GET /healthz, /readyz and /metrics; POST the others (docs/serve.md#endpoints)",
            )
        })
        .fallback(|| async {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "no such endpoint",
                "POST /v1/events, /v1/decide, /v1/edit, /v1/claude-code, /v1/codex, /v1/gemini, /v1/cursor, /v1/copilot or /v1/admin/reload; GET /healthz, /readyz or /metrics (docs/serve.md, docs/openapi.json)",
            )
        })
        .with_state(state)
}
