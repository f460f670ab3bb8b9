//! Errors: what a request is answered with when it fails (`ApiError`, always
//! JSON `{ "code": ..., "error": ..., "fix": ... }`), and why the server could
//! not start (`ServeError`).
//!
//! The `code` is stable (clients match on it; docs/openapi.json lists every
//! one); `error` and `fix` are for people and may be reworded.

use std::net::SocketAddr;
use std::path::PathBuf;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A failed request: its status and a JSON body saying what went wrong and
/// what to do about it.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable machine-readable code (`unauthorized`, `not_json`, ...).
    pub code: &'static str,
    /// What went wrong.
    pub error: String,
    /// What the caller can do about it.
    pub fix: String,
    /// Seconds to wait before trying again (429), sent as `Retry-After`.
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// An error with `status`, its code the status's own (see
    /// [`code_of`]); [`ApiError::with_code`] names a narrower one.
    pub fn new(status: StatusCode, error: impl Into<String>, fix: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code: code_of(status),
            error: error.into(),
            fix: fix.into(),
            retry_after: None,
        }
    }

    /// The same error under a narrower stable code.
    pub(crate) fn with_code(mut self, code: &'static str) -> ApiError {
        self.code = code;
        self
    }

    /// 400: the request itself cannot be read.
    pub(crate) fn bad_request(error: impl Into<String>, fix: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, error, fix)
    }

    /// The JSON body.
    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({ "code": self.code, "error": self.error, "fix": self.fix })
    }
}

/// The code of an error that names none narrower: one per status.
pub(crate) fn code_of(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not_found",
        405 => "method_not_allowed",
        408 => "request_timeout",
        409 => "conflict",
        413 => "body_too_large",
        415 => "unsupported_media_type",
        422 => "unprocessable",
        429 => "rate_limited",
        503 => "unavailable",
        s if s >= 500 => "internal",
        _ => "bad_request",
    }
}

/// Whether an answer of `status` ends its connection (`Connection: close`):
/// a caller refused for its token (401), its rights (403) or its rate (429),
/// or a server that cannot take the request now (503), tries again on a new
/// connection, so a refused caller never keeps one open.
pub(crate) fn closes(status: StatusCode) -> bool {
    matches!(status.as_u16(), 401 | 403 | 429 | 503)
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        if let Some(secs) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&secs.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, v);
        }
        response
    }
}

/// An error from below the server (the journal, a forwarding peer), kept
/// whole with its source chain.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why `serve` could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// No bearer tokens were configured and `--insecure-no-auth` was not given.
    #[error(
        "no bearer tokens configured: give --tokens FILE (one token per line) or set HOOKRT_TOKENS, \
         or pass --insecure-no-auth to serve without authentication on a loopback address only"
    )]
    NoTokens,
    /// Serving without authentication was asked for on a non-loopback address.
    #[error(
        "--insecure-no-auth serves only on a loopback address (127.0.0.1, [::1]); {0} is not one: \
         configure tokens to listen there"
    )]
    InsecureNotLoopback(SocketAddr),
    /// A file of secrets (tokens, webhook secrets) could not be read.
    #[error("cannot read the {what} {path}: {source}")]
    SecretsFile {
        /// What it holds.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A configured token is unusable.
    #[error("{0}")]
    BadToken(String),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The Unix socket could not be bound.
    #[error("cannot listen on the Unix socket {path}: {source}")]
    BindSocket {
        /// The socket's path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The budget of bodies in flight cannot hold one body of the largest size.
    #[error(
        "--max-in-flight-bytes {budget} cannot hold one body of --max-body-bytes and its parse window: \
         give at least {smallest} (or lower --max-body-bytes)"
    )]
    Budget {
        /// The budget given.
        budget: usize,
        /// The least it may be.
        smallest: usize,
    },
    /// The hook service did not start.
    #[error(transparent)]
    Start(#[from] hookrt::StartError),
    /// The HTTP server failed.
    #[error("the HTTP server stopped: {0}")]
    Io(#[from] std::io::Error),
}
