//! One `send`: the hook's request with the secret put where the table says,
//! made as the `http` grant makes its requests (`egress::connect`: the name
//! resolved once, private addresses refused unless the origin names one,
//! TLS verified; the whole exchange within the delivery's deadline; the
//! response body capped at [`MAX_RESPONSE_BYTES`]), and what comes back
//! masked of every value before the hook sees it.
//!
//! A redirect is never followed: a 3xx comes back to the hook as it is (its
//! `Location` masked), and sending to it is a new `send`, whose origin is
//! checked again. So the value never reaches an origin it is not bound to.

use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use wasmtime_wasi_http::io::TokioIo;

use super::source::Value;
use super::table::{PATH_SLOT, Put, RESERVED_HEADERS};
use crate::sandbox::egress;
use crate::sandbox::http::{Entry, MAX_RESPONSE_BYTES};
use crate::sandbox::redaction::percent_encoded;
use crate::sandbox::wit::v0_4_0::hookrt::hook::secret::{Request, Response};

/// Largest request body a hook may send with a secret: a message, not an
/// upload.
pub(crate) const MAX_REQUEST_BYTES: usize = 1 << 20;

/// What came back, before it is masked.
pub(crate) struct Reply {
    status: u16,
    headers: Vec<(String, Vec<u8>)>,
    body: Bytes,
}

/// The request to send: the hook's, with `value` put where `put` says.
pub(crate) fn build(
    uri: &http::Uri,
    request: &Request,
    put: &Put,
    value: &Value,
) -> Result<http::Request<Full<Bytes>>, String> {
    let method = match request.method.as_str() {
        m @ ("GET" | "POST" | "PUT" | "PATCH" | "DELETE") => http::Method::from_bytes(m.as_bytes())
            .map_err(|_| format!("method `{m}` is not valid"))?,
        m => {
            return Err(format!(
                "method `{m}` is not one of GET, POST, PUT, PATCH, DELETE"
            ));
        }
    };
    if request.body.len() > MAX_REQUEST_BYTES {
        return Err(format!(
            "the body is {} bytes, over the {MAX_REQUEST_BYTES} a secret's request may send",
            request.body.len()
        ));
    }
    let authority = uri.authority().map_or("", |a| a.as_str());
    let mut builder = http::Request::builder()
        .method(method)
        .uri(path_and_query(uri, put, value)?)
        .header(http::header::HOST, authority)
        .header(http::header::USER_AGENT, "hookrt");
    for (name, text) in &request.headers {
        let lower = name.to_ascii_lowercase();
        let own = matches!(put, Put::Header { name: h, .. } if h.eq_ignore_ascii_case(name));
        if own || RESERVED_HEADERS.contains(&lower.as_str()) || lower == "user-agent" {
            return Err(format!("header `{name}` is set by hookrt, not by the hook"));
        }
        let name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("header name `{name}` is not valid"))?;
        let text = http::HeaderValue::from_str(text)
            .map_err(|_| format!("the value of header `{name}` is not valid header text"))?;
        builder = builder.header(name, text);
    }
    if let Put::Header { name, prefix } = put {
        let mut text = http::HeaderValue::from_str(&format!("{prefix}{}", value.0))
            .map_err(|_| "the secret is not valid header text".to_owned())?;
        text.set_sensitive(true);
        builder = builder.header(name.as_str(), text);
    }
    builder
        .body(Full::new(Bytes::copy_from_slice(&request.body)))
        .map_err(|_| "the request cannot be built".to_owned())
}

/// The request line's path and query, with the value put in the query
/// parameter or path part the table fixes.
fn path_and_query(uri: &http::Uri, put: &Put, value: &Value) -> Result<String, String> {
    let path = match uri.path() {
        "" => "/",
        p => p,
    };
    let query = uri.query();
    let encoded = percent_encoded(&value.0);
    Ok(match put {
        Put::Header { .. } => uri.path_and_query().map_or("/", |p| p.as_str()).to_owned(),
        Put::Query(param) => {
            let pair = format!("{param}={encoded}");
            match query {
                Some(q) if q.split('&').any(|kv| decoded_key(kv) == *param) => {
                    return Err(format!(
                        "the URL names query parameter `{param}` itself: the table puts the secret there"
                    ));
                }
                Some(q) if !q.is_empty() => format!("{path}?{q}&{pair}"),
                _ => format!("{path}?{pair}"),
            }
        }
        Put::Path(template) => {
            let prefix = template.replace(PATH_SLOT, &encoded);
            let path = if path == "/" {
                prefix
            } else {
                format!("{prefix}{path}")
            };
            match query {
                Some(q) => format!("{path}?{q}"),
                None => path,
            }
        }
    })
}

/// A query pair's key, percent-decoded (`tok%65n=` names `token`).
fn decoded_key(pair: &str) -> String {
    let key = pair.split('=').next().unwrap_or("").as_bytes();
    let mut out = Vec::with_capacity(key.len());
    let mut i = 0;
    while i < key.len() {
        let hex = key.get(i + 1..i + 3).and_then(|h| {
            std::str::from_utf8(h)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        });
        match (key[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Sends `request` to `entry`'s origin, all of it by `deadline`.
pub(crate) fn exchange(
    entry: &Entry,
    request: http::Request<Full<Bytes>>,
    deadline: Instant,
) -> Result<Reply, String> {
    let deadline = tokio::time::Instant::from_std(deadline);
    wasmtime_wasi::runtime::in_tokio(async {
        match tokio::time::timeout_at(deadline, round_trip(entry, request)).await {
            Ok(reply) => reply,
            Err(_) => Err("the delivery's deadline passed before the response came".to_owned()),
        }
    })
}

async fn round_trip(entry: &Entry, request: http::Request<Full<Bytes>>) -> Result<Reply, String> {
    let io = egress::connect(entry).await.map_err(|e| e.to_string())?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| e.to_string())?;
    let exchange = async move {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let length = response
            .headers()
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if length.is_some_and(|n| n > MAX_RESPONSE_BYTES) {
            return Err(format!("the response is over {MAX_RESPONSE_BYTES} bytes"));
        }
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.as_bytes().to_vec()))
            .collect();
        let body = Limited::new(response.into_body(), MAX_RESPONSE_BYTES as usize)
            .collect()
            .await
            .map_err(|_| format!("the response is over {MAX_RESPONSE_BYTES} bytes, or was cut"))?
            .to_bytes();
        Ok(Reply {
            status,
            headers,
            body,
        })
    };
    // The connection is driven until the response is read; its own end (the
    // server closing it) is not the exchange's.
    let mut exchange = std::pin::pin!(exchange);
    let mut conn = std::pin::pin!(conn);
    let mut conn_done = false;
    loop {
        tokio::select! {
            reply = &mut exchange => return reply,
            _ = &mut conn, if !conn_done => conn_done = true,
        }
    }
}

/// `reply` as the hook gets it: every value of `masks` (as written and
/// percent-encoded) replaced in its headers and body.
pub(crate) fn masked(reply: Reply, masks: &[(String, &Value)]) -> Response {
    let mask = |bytes: &[u8]| mask_bytes(bytes, masks);
    Response {
        status: reply.status,
        headers: reply
            .headers
            .into_iter()
            .map(|(k, v)| (k, String::from_utf8_lossy(&mask(&v)).into_owned()))
            .collect(),
        body: mask(&reply.body),
    }
}

/// `text` with every value of `masks` replaced.
pub(crate) fn mask_text(text: &str, masks: &[(String, &Value)]) -> String {
    String::from_utf8_lossy(&mask_bytes(text.as_bytes(), masks)).into_owned()
}

fn mask_bytes(bytes: &[u8], masks: &[(String, &Value)]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for (name, value) in masks {
        let label = format!("[redacted:secret:{name}]");
        for form in [value.0.clone(), percent_encoded(&value.0)] {
            out = replace_all(&out, form.as_bytes(), label.as_bytes());
        }
    }
    out
}

fn replace_all(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return haystack.to_vec();
    }
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value() -> Value {
        Value("tk_0123456789/abc".into())
    }

    fn request(url: &str, headers: &[(&str, &str)]) -> Request {
        Request {
            method: "POST".into(),
            url: url.into(),
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: b"hi".to_vec(),
        }
    }

    fn built(
        url: &str,
        headers: &[(&str, &str)],
        put: &Put,
    ) -> Result<http::Request<Full<Bytes>>, String> {
        let r = request(url, headers);
        build(&r.url.parse().unwrap(), &r, put, &value())
    }

    #[test]
    fn the_value_goes_in_the_one_place_the_table_fixes() {
        let header = Put::Header {
            name: "Authorization".into(),
            prefix: "Bearer ".into(),
        };
        let r = built("https://ntfy.sh/alerts?x=1", &[("Title", "done")], &header).unwrap();
        assert_eq!(r.uri(), "/alerts?x=1");
        assert_eq!(r.headers()["authorization"], "Bearer tk_0123456789/abc");
        assert!(r.headers()["authorization"].is_sensitive());
        assert_eq!(r.headers()["host"], "ntfy.sh");
        let r = built(
            "https://api.example/1/m.json?a=b",
            &[],
            &Put::Query("token".into()),
        )
        .unwrap();
        assert_eq!(r.uri(), "/1/m.json?a=b&token=tk_0123456789%2Fabc");
        let path = Put::Path("/bot{secret}".into());
        assert_eq!(
            built("https://t.example/send", &[], &path).unwrap().uri(),
            "/bottk_0123456789%2Fabc/send"
        );
        assert_eq!(
            built("https://t.example", &[], &path).unwrap().uri(),
            "/bottk_0123456789%2Fabc"
        );
    }

    #[test]
    fn the_hook_cannot_set_the_secrets_own_header_or_parameter_nor_reserved_headers() {
        let header = Put::Header {
            name: "Authorization".into(),
            prefix: String::new(),
        };
        for name in [
            "authorization",
            "Host",
            "Content-Length",
            "Transfer-Encoding",
        ] {
            let err = built("https://a.example/", &[(name, "x")], &header).unwrap_err();
            assert_eq!(
                err,
                format!("header `{name}` is set by hookrt, not by the hook")
            );
        }
        let query = Put::Query("token".into());
        for url in [
            "https://a.example/?token=mine",
            "https://a.example/?a=1&tok%65n=mine",
        ] {
            let err = built(url, &[], &query).unwrap_err();
            assert!(
                err.contains("names query parameter `token` itself"),
                "{err}"
            );
        }
        let mut r = request("https://a.example/", &[]);
        r.method = "CONNECT".into();
        assert!(build(&r.url.parse().unwrap(), &r, &query, &value()).is_err());
    }

    #[test]
    fn a_reply_echoing_the_value_reaches_the_hook_masked() {
        let v = value();
        let reply = Reply {
            status: 302,
            headers: vec![(
                "location".into(),
                b"https://elsewhere.example/?t=tk_0123456789%2Fabc".to_vec(),
            )],
            body: Bytes::from_static(b"{\"echo\":\"Bearer tk_0123456789/abc\"}"),
        };
        let r = masked(reply, &[("ntfy".into(), &v)]);
        assert_eq!(r.status, 302);
        assert_eq!(
            r.headers[0].1,
            "https://elsewhere.example/?t=[redacted:secret:ntfy]"
        );
        assert_eq!(
            String::from_utf8(r.body).unwrap(),
            "{\"echo\":\"Bearer [redacted:secret:ntfy]\"}"
        );
    }
}
