//! Errors: what a request is answered with when it fails (`ApiError`, always
//! JSON `{ "error": ..., "fix": ... }`), and why the server could not start
//! (`ServeError`).

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
    /// What went wrong.
    pub error: String,
    /// What the caller can do about it.
    pub fix: String,
    /// Seconds to wait before trying again (429), sent as `Retry-After`.
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// An error with `status`.
    pub fn new(status: StatusCode, error: impl Into<String>, fix: impl Into<String>) -> ApiError {
        ApiError {
            status,
            error: error.into(),
            fix: fix.into(),
            retry_after: None,
        }
    }

    /// 400: the request itself cannot be read.
    pub fn bad_request(error: impl Into<String>, fix: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, error, fix)
    }

    /// The JSON body.
    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({ "error": self.error, "fix": self.fix })
    }
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
    /// The tokens file could not be read.
    #[error("cannot read the tokens file {path}: {source}")]
    TokensFile {
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
    /// The hook service did not start.
    #[error(transparent)]
    Start(#[from] hookrt::StartError),
    /// The HTTP server failed.
    #[error("the HTTP server stopped: {0}")]
    Io(#[from] std::io::Error),
}
