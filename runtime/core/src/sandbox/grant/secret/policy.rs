//! A hook's `secret` grant made ready: each secret's value read at load
//! (or why it is unavailable), its origins parsed; a `send` checked against
//! them and made with the value put where the table says (`send.rs`).

use std::collections::BTreeMap;
use std::time::Instant;

use super::send;
use super::source::{self, SourceError, Value};
use super::table::{Binding, Table};
use crate::sandbox::http::Entry;
use crate::sandbox::wit::v0_4_0::hookrt::hook::secret::{Request, Response, SecretError};

/// One secret made ready.
#[derive(Debug)]
pub(crate) struct Ready {
    pub(crate) binding: Binding,
    pub(crate) origins: Vec<Entry>,
    /// The value, or why it is not available here.
    pub(crate) value: Result<Value, String>,
}

/// A hook's `secret` grant, ready: its secrets by name.
#[derive(Debug)]
pub(crate) struct Policy {
    pub(crate) secrets: BTreeMap<String, Ready>,
}

impl Policy {
    /// Reads every secret of `table`; a source that is unsafe or broken
    /// refuses the hook (a secret not set up here is only unavailable).
    pub(crate) fn resolve(table: &Table) -> Result<Policy, SourceError> {
        let mut secrets = BTreeMap::new();
        for (name, binding) in &table.secrets {
            let value = source::read(name, &binding.source)?;
            let origins = binding
                .origins
                .iter()
                .filter_map(|o| Entry::parse(o).ok())
                .collect();
            secrets.insert(
                name.clone(),
                Ready {
                    binding: binding.clone(),
                    origins,
                    value,
                },
            );
        }
        Ok(Policy { secrets })
    }

    /// Each available secret's (name, value): what the runtime's redactor
    /// masks as the `secret` class.
    pub(crate) fn values(&self) -> Vec<(String, String)> {
        self.secrets
            .iter()
            .filter_map(|(name, r)| Some((name.clone(), r.value.as_ref().ok()?.0.clone())))
            .collect()
    }

    /// What `audit` says of it: one line per secret (its source, origins,
    /// place and whether it is available here), never a value.
    pub(crate) fn audit_lines(&self) -> Vec<String> {
        self.secrets
            .iter()
            .map(|(name, r)| {
                let state = match &r.value {
                    Ok(_) => "available".to_owned(),
                    Err(why) => format!("UNAVAILABLE: {why}"),
                };
                format!(
                    "{name}: from {}, to {} in {}; {state}",
                    r.binding.source.describe(),
                    r.binding.origins.join(" "),
                    r.binding.put.describe()
                )
            })
            .collect()
    }

    /// Sends `request` with secret `name` put in, by `deadline`.
    pub(crate) fn send(
        &self,
        name: &str,
        request: &Request,
        deadline: Instant,
    ) -> Result<Response, SecretError> {
        let Some(ready) = self.secrets.get(name) else {
            return Err(SecretError::Unknown(format!(
                "`{name}` is not a secret of this hook's secret table"
            )));
        };
        let uri: http::Uri = request
            .url
            .parse()
            .map_err(|_| SecretError::Failed("the URL does not parse".into()))?;
        let Some(entry) = origin_of(&uri, &ready.origins) else {
            return Err(SecretError::OriginRefused(format!(
                "{} is not an origin `{name}` is bound to ({})",
                shown_origin(&uri),
                ready.binding.origins.join(", ")
            )));
        };
        let value = ready
            .value
            .as_ref()
            .map_err(|why| SecretError::Unavailable(why.clone()))?;
        let outgoing =
            send::build(&uri, request, &ready.binding.put, value).map_err(SecretError::Failed)?;
        let masks = self.masks();
        let reply = send::exchange(entry, outgoing, deadline)
            .map_err(|why| SecretError::Failed(send::mask_text(&why, &masks)))?;
        Ok(send::masked(reply, &masks))
    }

    /// Each available value with its name: what a reply is masked of.
    fn masks(&self) -> Vec<(String, &Value)> {
        self.secrets
            .iter()
            .filter_map(|(name, r)| Some((name.clone(), r.value.as_ref().ok()?)))
            .collect()
    }
}

/// The one of `origins` `uri` is for: scheme, host and port all alike.
fn origin_of<'e>(uri: &http::Uri, origins: &'e [Entry]) -> Option<&'e Entry> {
    let https = match uri.scheme_str() {
        Some("https") => true,
        Some("http") => false,
        _ => return None,
    };
    let authority = uri.authority()?;
    if authority.as_str().contains('@') {
        return None;
    }
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
    origins
        .iter()
        .find(|e| e.https == https && e.port == port && e.host == host)
}

/// A URL's scheme and authority, as a refusal names it.
fn shown_origin(uri: &http::Uri) -> String {
    format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("?"),
        uri.authority().map_or("?", |a| a.as_str())
    )
}

// The `secret` grant against a loopback receiver: each test names the claim
// it proves in docs/sandbox.md. The receiver records what reached it; the
// response a test reads is what a hook would be handed.
#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::sandbox::grant::secret::table::{Put, Source};

    /// The value every test sends.
    const VALUE: &str = "tk_live_0123456789/abcdef";

    /// A loopback HTTP receiver: its origin, and each request's head and
    /// body as it arrived. It answers `reply(head)`.
    fn receiver(reply: fn(&str) -> String) -> (String, mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push_str(&line);
                }
                let length = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(|n| n.trim().parse().unwrap_or(0))
                    })
                    .unwrap_or(0);
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let answer = reply(&head);
                let _ = tx.send(format!("{head}\r\n{}", String::from_utf8_lossy(&body)));
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        (origin, rx)
    }

    fn ok(_head: &str) -> String {
        "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok".to_owned()
    }

    /// Echoes the request's head in its body and a header, as some servers do.
    fn echo(head: &str) -> String {
        let line = head.lines().next().unwrap_or("");
        format!(
            "HTTP/1.1 200 OK\r\nx-seen: {line}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{head}",
            head.len()
        )
    }

    fn binding(origin: &str, put: Put) -> Binding {
        Binding {
            source: Source::Env("HOOKRT_TEST_SECRET_VALUE".into()),
            origins: vec![origin.to_owned()],
            put,
        }
    }

    /// A policy whose secrets have [`VALUE`] (read from no environment).
    fn policy(secrets: Vec<(&str, Binding)>) -> Policy {
        Policy {
            secrets: secrets
                .into_iter()
                .map(|(name, binding)| {
                    let origins = binding
                        .origins
                        .iter()
                        .filter_map(|o| Entry::parse(o).ok())
                        .collect();
                    let ready = Ready {
                        binding,
                        origins,
                        value: Ok(Value(VALUE.into())),
                    };
                    (name.to_owned(), ready)
                })
                .collect(),
        }
    }

    fn post(url: &str) -> Request {
        Request {
            method: "POST".into(),
            url: url.into(),
            headers: vec![("Title".into(), "done".into())],
            body: b"Claude finished responding".to_vec(),
        }
    }

    fn send(p: &Policy, name: &str, url: &str) -> Result<Response, SecretError> {
        p.send(name, &post(url), Instant::now() + Duration::from_secs(10))
    }

    fn arrived(rx: &mpsc::Receiver<String>) -> Option<String> {
        rx.recv_timeout(Duration::from_millis(500)).ok()
    }

    #[test]
    fn the_secret_arrives_in_the_header_query_or_path_its_table_fixes() {
        let (origin, rx) = receiver(ok);
        let p = policy(vec![
            (
                "header",
                binding(
                    &origin,
                    Put::Header {
                        name: "Authorization".into(),
                        prefix: "Bearer ".into(),
                    },
                ),
            ),
            ("query", binding(&origin, Put::Query("token".into()))),
            ("path", binding(&origin, Put::Path("/bot{secret}".into()))),
        ]);
        let r = send(&p, "header", &format!("{origin}/alerts")).unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, b"ok".as_slice()));
        let got = arrived(&rx).unwrap();
        assert!(got.starts_with("POST /alerts HTTP/1.1\r\n"), "{got}");
        assert!(
            got.contains(&format!("authorization: Bearer {VALUE}\r\n")),
            "{got}"
        );
        assert!(
            got.contains("title: done\r\n") && got.ends_with("\r\n\r\nClaude finished responding"),
            "{got}"
        );
        send(&p, "query", &format!("{origin}/1/messages.json?a=b")).unwrap();
        let got = arrived(&rx).unwrap();
        assert!(
            got.starts_with(
                "POST /1/messages.json?a=b&token=tk_live_0123456789%2Fabcdef HTTP/1.1\r\n"
            ),
            "{got}"
        );
        send(&p, "path", &format!("{origin}/sendMessage")).unwrap();
        let got = arrived(&rx).unwrap();
        assert!(
            got.starts_with("POST /bottk_live_0123456789%2Fabcdef/sendMessage HTTP/1.1\r\n"),
            "{got}"
        );
        assert!(
            !got.to_ascii_lowercase().contains("authorization"),
            "one place only: {got}"
        );
    }

    #[test]
    fn a_request_to_an_origin_the_secret_is_not_bound_to_is_refused_unsent() {
        let (origin, rx) = receiver(ok);
        let (other, other_rx) = receiver(ok);
        let p = policy(vec![("ntfy", binding(&origin, Put::Query("token".into())))]);
        let https = origin.replacen("http://", "https://", 1);
        for url in [
            format!("{other}/x"),
            format!("{https}/x"),
            "http://localhost/x".to_owned(),
        ] {
            let err = send(&p, "ntfy", &url).unwrap_err();
            assert!(
                matches!(&err, SecretError::OriginRefused(m) if m.contains(&format!("is not an origin `ntfy` is bound to ({origin})"))),
                "{url}: {err:?}"
            );
        }
        assert_eq!(arrived(&rx), None);
        assert_eq!(arrived(&other_rx), None);
    }

    #[test]
    fn a_redirect_to_another_origin_does_not_carry_the_secret() {
        let (elsewhere, elsewhere_rx) = receiver(ok);
        // The bound origin redirects to the other one, the value in the Location.
        let target = format!("{elsewhere}/stolen");
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let _ = tx.send(String::from_utf8_lossy(&buf[..n]).into_owned());
            let answer = format!(
                "HTTP/1.1 302 Found\r\nlocation: {target}?t={VALUE}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
            let _ = stream.write_all(answer.as_bytes());
        });
        let p = policy(vec![(
            "ntfy",
            binding(
                &origin,
                Put::Header {
                    name: "X-Token".into(),
                    prefix: String::new(),
                },
            ),
        )]);
        let r = send(&p, "ntfy", &format!("{origin}/go")).unwrap();
        assert_eq!(r.status, 302, "the redirect comes back, unfollowed");
        let location = r
            .headers
            .iter()
            .find(|(k, _)| k == "location")
            .map(|(_, v)| v.clone());
        assert_eq!(
            location,
            Some(format!("{elsewhere}/stolen?t=[redacted:secret:ntfy]"))
        );
        assert!(
            rx.recv_timeout(Duration::from_secs(2))
                .unwrap()
                .contains(VALUE),
            "the bound origin got it"
        );
        assert_eq!(arrived(&elsewhere_rx), None, "the other origin got nothing");
        let err = send(&p, "ntfy", &format!("{elsewhere}/stolen")).unwrap_err();
        assert!(matches!(err, SecretError::OriginRefused(_)), "{err:?}");
        assert_eq!(arrived(&elsewhere_rx), None);
    }

    #[test]
    fn a_server_echoing_the_secret_reaches_the_hook_masked() {
        let (origin, rx) = receiver(echo);
        let p = policy(vec![
            (
                "ntfy",
                binding(
                    &origin,
                    Put::Header {
                        name: "Authorization".into(),
                        prefix: "Bearer ".into(),
                    },
                ),
            ),
            ("pushover", binding(&origin, Put::Query("token".into()))),
        ]);
        for name in ["ntfy", "pushover"] {
            let r = send(&p, name, &format!("{origin}/echo")).unwrap();
            assert!(
                arrived(&rx).unwrap().contains("tk_live_0123456789"),
                "it was sent"
            );
            let seen = format!("{:?} {}", r.headers, String::from_utf8_lossy(&r.body));
            assert!(!seen.contains("tk_live_0123456789"), "{seen}");
            assert!(seen.contains("[redacted:secret:"), "{seen}");
        }
    }

    #[test]
    fn an_unknown_secret_or_one_without_a_value_here_is_refused_saying_so() {
        let (origin, rx) = receiver(ok);
        let mut p = policy(vec![("ntfy", binding(&origin, Put::Query("token".into())))]);
        let err = send(&p, "github", &format!("{origin}/")).unwrap_err();
        assert!(
            matches!(&err, SecretError::Unknown(m) if m == "`github` is not a secret of this hook's secret table"),
            "{err:?}"
        );
        let table = Table {
            secrets: [(
                "ntfy".to_owned(),
                binding(&origin, Put::Query("token".into())),
            )]
            .into(),
        };
        // The variable is unset in the test process: the hook loads, a send says where it looked.
        p = Policy::resolve(&table).unwrap();
        assert!(p.values().is_empty());
        let err = send(&p, "ntfy", &format!("{origin}/")).unwrap_err();
        assert!(
            matches!(&err, SecretError::Unavailable(m) if m == "environment variable HOOKRT_TEST_SECRET_VALUE is not set in hookrt's process"),
            "{err:?}"
        );
        assert!(p.audit_lines()[0].ends_with("UNAVAILABLE: environment variable HOOKRT_TEST_SECRET_VALUE is not set in hookrt's process"));
        assert_eq!(arrived(&rx), None);
    }

    #[test]
    fn a_failed_send_never_quotes_the_value() {
        // Nothing listens there: the connection fails.
        let closed = TcpListener::bind("127.0.0.1:0").unwrap();
        let origin = format!("http://{}", closed.local_addr().unwrap());
        drop(closed);
        let p = policy(vec![("ntfy", binding(&origin, Put::Query("token".into())))]);
        let err = send(&p, "ntfy", &format!("{origin}/")).unwrap_err();
        assert!(
            matches!(&err, SecretError::Failed(m) if !m.contains("tk_live")),
            "{err:?}"
        );
        assert!(!format!("{:?}", p.secrets["ntfy"]).contains("tk_live"));
    }
}
