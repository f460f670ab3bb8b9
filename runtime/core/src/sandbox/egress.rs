//! Sending a hook's outbound HTTP request: `wasi:http`'s send, done by hookrt
//! so that the policy in `http` holds for the connection actually made.
//!
//! Why not wasmtime-wasi-http's `default_send_request`: it resolves the name
//! itself (so a checked name could resolve elsewhere by connect time), gives
//! each phase (connect, first byte, between bytes) the whole timeout, and
//! leaves the TLS handshake unbounded. Here the request is checked against the
//! allow list, the name is resolved once, the address is checked, and that
//! very address is connected to; then TLS (named by the entry's host), the
//! HTTP/1 handshake, the response head and the body all run under ONE budget:
//! what is left of the delivery's deadline. A response whose `content-length`
//! is over [`MAX_RESPONSE_BYTES`] is refused, and a body without a length is
//! cut with an error once it streams past the same cap.

use std::future::{Future, poll_fn};
use std::net::IpAddr;
use std::sync::Arc;
use std::task::Poll;

use http_body_util::{BodyExt, Limited};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::Instant;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use crate::sandbox::http::{Entry, HttpPolicy, MAX_RESPONSE_BYTES};

type Sent = Box<dyn Future<Output = Result<(), Error>> + Send>;
type Reply = Result<(http::Response<WasiBody>, Sent), Error>;

/// A connection to an origin, plain or TLS.
pub(crate) trait Stream: AsyncRead + AsyncWrite + Send + Sync + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Sync + Unpin + 'static> Stream for T {}

impl WasiHttpHooks for HttpPolicy {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        fut: Sent,
    ) -> Box<dyn Future<Output = Reply> + Send> {
        _ = fut;
        let Some(entry) = self.allows(request.uri()).cloned() else {
            let shown = self.shown(request.uri());
            refused_warning(&format!(
                "outbound HTTP to {shown} refused: not in the hook's http_allow list"
            ));
            return Box::new(async { Err(Error::HttpRequestDenied) });
        };
        let deadline = Instant::from_std(self.deadline);
        Box::new(async move {
            match tokio::time::timeout_at(deadline, exchange(request, entry, deadline)).await {
                Ok(reply) => reply,
                Err(_) => Err(Error::ConnectionTimeout),
            }
        })
    }
}

/// Logs a refused request as a warning at most once a second, process-wide
/// (the others at debug, with how many were left out): a hook that asks for
/// refused URLs in a loop cannot flood the host's log, which no hook cap
/// covers. The hook gets its error either way.
fn refused_warning(what: &str) {
    static LAST: std::sync::Mutex<(Option<std::time::Instant>, u64)> =
        std::sync::Mutex::new((None, 0));
    let mut last = LAST
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let now = std::time::Instant::now();
    if last
        .0
        .is_some_and(|t| now.duration_since(t) < std::time::Duration::from_secs(1))
    {
        last.1 += 1;
        tracing::debug!("{what}");
        return;
    }
    let left_out = std::mem::take(&mut last.1);
    last.0 = Some(now);
    drop(last);
    if left_out > 0 {
        tracing::warn!("{what} ({left_out} more refused in the last second, logged at debug)");
    } else {
        tracing::warn!("{what}");
    }
}

impl HttpPolicy {
    /// A refused URL as logged: it is the hook's text, so it may carry a secret.
    fn shown(&self, uri: &http::Uri) -> String {
        self.redactor.mask(&uri.to_string()).into_owned()
    }
}

/// Resolve, check, connect, handshake and wait for the response head; the
/// caller bounds all of it by the deadline. The returned future drives the
/// connection (and so the body) and ends at the deadline too.
async fn exchange(mut request: http::Request<WasiBody>, entry: Entry, deadline: Instant) -> Reply {
    let io = connect(&entry).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io)).await?;
    // The request line carries only the path: scheme and authority go to a proxy only.
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    *request.uri_mut() = http::Uri::builder()
        .path_and_query(path)
        .build()
        .map_err(|_| Error::HttpRequestUriInvalid)?;
    let mut send = Box::pin(sender.send_request(request));
    let mut conn = Some(Box::pin(conn));
    // Wait for the response head while driving the connection.
    let response = poll_fn(|cx| {
        if let Poll::Ready(r) = send.as_mut().poll(cx) {
            return Poll::Ready(r.map_err(Error::from));
        }
        let Some(c) = conn.as_mut() else {
            return Poll::Pending;
        };
        match c.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(done) => {
                conn = None;
                match done {
                    Ok(()) => send.as_mut().poll(cx).map_err(Error::from),
                    Err(e) => Poll::Ready(Err(Error::from(e))),
                }
            }
        }
    })
    .await?;
    let length = response
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if length.is_some_and(|n| n > MAX_RESPONSE_BYTES) {
        return Err(Error::HttpResponseBodySize(length));
    }
    // Bodies without a length are cut at the same cap while they stream.
    let limited = response.map(|body| {
        Limited::new(body.map_err(Error::from), MAX_RESPONSE_BYTES as usize)
            .map_err(|e| match e.downcast::<Error>() {
                Ok(inner) => *inner,
                Err(_) => Error::HttpResponseBodySize(Some(MAX_RESPONSE_BYTES)),
            })
            .boxed_unsync()
    });
    // The body arrives while the connection runs: ending it at the deadline
    // ends the body too (the hook's read fails), so no phase gets a new budget.
    let driver = async move {
        let Some(conn) = conn else { return Ok(()) };
        match tokio::time::timeout_at(deadline, conn).await {
            Ok(done) => done.map_err(Error::from),
            Err(_) => Err(Error::ConnectionReadTimeout),
        }
    };
    Ok((limited, Box::new(driver) as Sent))
}

/// A connection to `entry`'s origin, as every outbound request of a hook
/// makes it (`http` and `secret` alike): the name resolved once, the
/// address checked ([`Entry::may_connect`]), that very address connected
/// to, TLS verified for the entry's host. The caller bounds it by the
/// delivery's deadline.
pub(crate) async fn connect(entry: &Entry) -> Result<Box<dyn Stream>, Error> {
    let addrs = tokio::net::lookup_host((entry.host.as_str(), entry.port))
        .await
        .map_err(|_| Error::DnsError {
            rcode: None,
            info_code: None,
        })?;
    // Only the checked address is connected to: the name is not resolved again.
    let addrs: Vec<_> = addrs.collect();
    let Some(addr) = addrs.iter().find(|a| entry.may_connect(a.ip())).copied() else {
        refused_warning(&format!(
            "outbound HTTP to {} refused: the name resolves only to non-public addresses",
            entry.host
        ));
        return Err(Error::DestinationIpProhibited);
    };
    let tcp = TcpStream::connect(addr).await.map_err(Error::Connect)?;
    Ok(if entry.https {
        Box::new(tls(entry, tcp).await?)
    } else {
        Box::new(tcp)
    })
}

/// The TLS client side over `tcp`, verifying the certificate for the entry's host.
async fn tls(entry: &Entry, tcp: TcpStream) -> Result<impl Stream, Error> {
    use rustls::pki_types::ServerName;
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.into(),
    };
    let config = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = match entry.host.parse::<IpAddr>() {
        Ok(ip) => ServerName::from(ip),
        Err(_) => ServerName::try_from(entry.host.clone()).map_err(Error::InvalidDnsNameError)?,
    };
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(Error::Tls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_url_is_logged_masked() {
        let p = HttpPolicy::new(&["api.example.com".into()], Default::default());
        let uri: http::Uri =
            "https://sk-live-4f9a8b7c6d5e4f3a2b1c.evil.example/x?key=sk-live-4f9a8b7c6d5e4f3a2b1c"
                .parse()
                .unwrap();
        assert_eq!(
            p.shown(&uri),
            "https://[redacted:api-key].evil.example/x?key=[redacted:api-key]"
        );
    }
}
