//! `hookrt hook --agent NAME --http URL` (or `--service`, or `hookrt-hook`):
//! the command hook as a thin client of a running `hookrt serve`, or of the
//! folder's resident service (started on demand: `crate::place`). It POSTs
//! the agent's hook input to the agent's route (`/v1/<agent>`) and hands
//! back the answer, so agents whose hooks are commands only (Codex, Gemini
//! CLI, Cursor) share one service, its warm hooks and its journal with the
//! agents that speak HTTP. It loads no Wasmtime and compiles no pattern.
//!
//! Plain `http://` only (a `hookrt serve` on loopback or a private network;
//! hookrt serve speaks no TLS): an HTTP/1.1 request over one connection,
//! the bearer token from `$HOOKRT_TOKEN` when set, everything bounded by
//! the hook's deadline. Anything but a `200` JSON answer is an error, which
//! the command turns into the agent's refusal on a gate.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use hookrt::front::bridge::Bridge;
use serde_json::Value;

use crate::place::Place;

/// The environment variable holding the bearer token.
const TOKEN_ENV: &str = "HOOKRT_TOKEN";

/// The largest answer read.
const MAX_ANSWER_BYTES: u64 = 4 << 20;

/// `url` split into `host:port` and a path prefix; only `http://`.
fn split(url: &str) -> Result<(String, String), String> {
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(format!(
            "--http takes a plain http:// URL of a hookrt serve (got `{url}`)"
        ));
    };
    let (authority, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.is_empty() {
        return Err(format!("--http `{url}` names no host"));
    }
    let authority = if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let prefix = prefix.trim_end_matches('/');
    let prefix = if prefix.is_empty() {
        String::new()
    } else {
        format!("/{prefix}")
    };
    Ok((authority, prefix))
}

/// A query value, percent-encoded.
fn encoded(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Where the input goes: a `hookrt serve` at a URL, or the resident
/// service of the agent folder (`--service`, `crate::place`).
pub enum Target<'a> {
    /// `--http URL`.
    Http(&'a str),
    /// `--service`: the service's place, started when none listens.
    Service(&'a Place),
}

/// The answer the target gives `bridge`'s hook `input`, within `deadline`
/// (from `started`): `event` and `agent` go in the query when given.
pub fn forward(
    target: &Target<'_>,
    bridge: Bridge,
    event: Option<&str>,
    agent: Option<&str>,
    input: &str,
    deadline: Duration,
) -> Result<Option<Value>, String> {
    let answer = post(target, bridge, event, agent, input, deadline)?;
    // The route says "nothing" as `{}`; where the agent's command hook says
    // it by printing nothing, so does this one (Antigravity CLI denies a
    // call on `{}`).
    let silent = answer.as_object().is_some_and(|o| o.is_empty()) && bridge.no_opinion().is_none();
    Ok((!silent).then_some(answer))
}

/// The POST of [`forward`]: the route's JSON answer.
fn post(
    target: &Target<'_>,
    bridge: Bridge,
    event: Option<&str>,
    agent: Option<&str>,
    input: &str,
    deadline: Duration,
) -> Result<Value, String> {
    let started = Instant::now();
    // Leave the route room to answer a gate's refusal before we give up.
    let budget = deadline.mul_f64(0.8);
    let mut query = vec![format!("budget_ms={}", budget.as_millis())];
    if let Some(event) = event {
        query.push(format!("event={}", encoded(event)));
    }
    if let Some(agent) = agent {
        query.push(format!("agent={}", encoded(agent)));
    }
    let route = format!("/v1/{}?{}", bridge.name(), query.join("&"));
    let left = |what: &str| {
        deadline
            .checked_sub(started.elapsed())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("no time left to {what} (--deadline-ms)"))
    };
    match target {
        Target::Http(url) => {
            let (authority, prefix) = split(url)?;
            let address = authority
                .to_socket_addrs()
                .map_err(|e| format!("cannot resolve {authority}: {e}"))?
                .next()
                .ok_or_else(|| format!("{authority} resolves to no address"))?;
            let stream = TcpStream::connect_timeout(&address, left("connect")?)
                .map_err(|e| format!("cannot reach hookrt serve at {url}: {e}"))?;
            let _ = stream.set_nodelay(true);
            let token = std::env::var(TOKEN_ENV)
                .ok()
                .filter(|t| !t.is_empty())
                .map(|t| format!("Authorization: Bearer {t}\r\n"))
                .unwrap_or_default();
            let exchange = Exchange {
                host: &authority,
                path: &format!("{prefix}{route}"),
                token: &token,
                server: &format!("hookrt serve at {url}"),
            };
            exchange.run(stream, input, left("send")?)
        }
        Target::Service(place) => {
            let stream = place.connect_or_start(started + left("connect")?)?;
            let server = format!("the service on {}", place.socket.display());
            let exchange = Exchange {
                host: "localhost",
                path: &route,
                token: "",
                server: &server,
            };
            exchange.run(stream, input, left("send")?)
        }
    }
}

/// One request and its answer over a connected stream.
struct Exchange<'a> {
    host: &'a str,
    path: &'a str,
    /// The `Authorization` header line, or nothing.
    token: &'a str,
    /// Who answers, for messages.
    server: &'a str,
}

impl Exchange<'_> {
    /// Sends `input` and reads the JSON answer, both within `rest`.
    fn run<S: Read + Write + Timeouts>(
        &self,
        mut stream: S,
        input: &str,
        rest: Duration,
    ) -> Result<Value, String> {
        let server = self.server;
        stream
            .timeouts(rest)
            .map_err(|e| format!("cannot set timeouts: {e}"))?;
        let head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n",
            self.path,
            self.host,
            input.len(),
            self.token,
        );
        stream
            .write_all(head.as_bytes())
            .and_then(|()| stream.write_all(input.as_bytes()))
            .map_err(|e| format!("cannot send the input to {server}: {e}"))?;
        let mut reply = Vec::new();
        stream
            .take(MAX_ANSWER_BYTES)
            .read_to_end(&mut reply)
            .map_err(|e| format!("no answer from {server} in time: {e}"))?;
        let text = String::from_utf8_lossy(&reply);
        let (head, body) = text
            .split_once("\r\n\r\n")
            .ok_or_else(|| format!("{server} answered no HTTP response"))?;
        let status = head.split_whitespace().nth(1).unwrap_or("");
        if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            return Err(format!("{server} answered a chunked body: is it hookrt?"));
        }
        if status != "200" {
            return Err(format!("{server} answered {status}: {}", body.trim()));
        }
        serde_json::from_str(body).map_err(|e| format!("{server} answered no JSON: {e}"))
    }
}

/// A stream whose reads and writes time out.
trait Timeouts {
    fn timeouts(&self, after: Duration) -> std::io::Result<()>;
}

impl Timeouts for TcpStream {
    fn timeouts(&self, after: Duration) -> std::io::Result<()> {
        self.set_write_timeout(Some(after))?;
        self.set_read_timeout(Some(after))
    }
}

impl Timeouts for UnixStream {
    fn timeouts(&self, after: Duration) -> std::io::Result<()> {
        self.set_write_timeout(Some(after))?;
        self.set_read_timeout(Some(after))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_plain_http_with_an_optional_prefix() {
        assert_eq!(
            split("http://127.0.0.1:7700").unwrap(),
            ("127.0.0.1:7700".into(), String::new())
        );
        assert_eq!(
            split("http://hooks.internal/base/").unwrap(),
            ("hooks.internal:80".into(), "/base".into())
        );
        assert!(split("https://x").unwrap_err().contains("plain http://"));
        assert!(split("http://").is_err());
        assert_eq!(encoded("pre Tool&x"), "pre%20Tool%26x");
    }
}
