//! Outbound HTTP: `wasi:http` for hooks granted `http`, to an allow list only.
//!
//! Every request is checked against the hook's `http_allow` list (`host` or
//! `host:port`) before any connection is made; anything else fails with
//! `HTTP-request-denied`. Connect, first-byte and between-bytes timeouts are
//! set from the hook's deadline. A response whose `content-length` is over
//! [`MAX_RESPONSE_BYTES`] is refused, and a body without a length is cut with
//! an error once it streams past the same cap.

use std::future::Future;
use std::time::Duration;

use http_body_util::{BodyExt, Limited};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

/// Largest response a hook may receive, by its `content-length`.
pub const MAX_RESPONSE_BYTES: u64 = 1 << 20;

/// One hook's outbound HTTP policy.
#[derive(Debug, Clone, Default)]
pub struct HttpPolicy {
    /// Allowed authorities: `host` (any port) or `host:port`.
    pub allow: Vec<String>,
    /// Timeout for connecting and for each wait on the response.
    pub timeout: Duration,
}

impl HttpPolicy {
    /// Whether a request to `authority` (`host[:port]`) may go out.
    pub fn allows(&self, authority: &str) -> bool {
        let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h);
        self.allow.iter().any(|a| a == authority || a == host)
    }
}

type Sent = Box<dyn Future<Output = Result<(), Error>> + Send>;

impl WasiHttpHooks for HttpPolicy {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        fut: Sent,
    ) -> Box<dyn Future<Output = Result<(http::Response<WasiBody>, Sent), Error>> + Send> {
        _ = fut;
        let authority = request
            .uri()
            .authority()
            .map(|a| a.as_str().to_owned())
            .unwrap_or_default();
        if !self.allows(&authority) {
            tracing::warn!(%authority, "outbound HTTP refused: not in the hook's http_allow list");
            return Box::new(async { Err(Error::HttpRequestDenied) });
        }
        let t = Some(self.timeout);
        let options = RequestOptions {
            connect_timeout: t,
            first_byte_timeout: t,
            between_bytes_timeout: t,
        };
        Box::new(async move {
            let (res, io) =
                wasmtime_wasi_http::default_send_request(request, Some(options)).await?;
            let length = res
                .headers()
                .get(http::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
            if length.is_some_and(|n| n > MAX_RESPONSE_BYTES) {
                return Err(Error::HttpResponseBodySize(length));
            }
            // Bodies without a length are cut at the same cap while they stream.
            let limited = res.map(|body| {
                Limited::new(body, MAX_RESPONSE_BYTES as usize)
                    .map_err(|e| match e.downcast::<Error>() {
                        Ok(inner) => *inner,
                        Err(_) => Error::HttpResponseBodySize(Some(MAX_RESPONSE_BYTES)),
                    })
                    .boxed_unsync()
            });
            Ok((limited, Box::new(io) as Sent))
        })
    }
}
