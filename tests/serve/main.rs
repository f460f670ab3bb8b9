//! `hookrt serve` as an agent server uses it: the release binary listening on
//! a free loopback port, spoken to over plain HTTP/1.1. Shares the build
//! cache with `tests/all` and `tests/cli`.

#[allow(
    dead_code,
    reason = "shared with tests/all; not every helper is used here"
)]
#[path = "../all/common.rs"]
mod common;

mod agents;
mod auth;
mod cascade;
mod claude_code;
mod claude_e2e;
mod claude_inputs;
mod claude_unreachable;
mod cline_e2e;
mod cluster;
mod codex_e2e;
mod copilot_e2e;
mod doors;
mod endpoints;
mod fleet_trust;
mod front_ends;
mod gemini;
mod inference;
mod jetstream;
mod mcp;
mod newcomer;
#[path = "../cli/notify_bus.rs"]
mod notify_bus;
mod one_folder;
mod openapi;
mod opencode_e2e;
mod openhands_e2e;
mod otel;
mod plugin_e2e;
mod ported_e2e;
mod pressure;
mod prometheus;
mod receipts;
#[path = "../cli/receiver.rs"]
mod receiver;
mod reload;
mod schema_check;
mod standin;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// A token the servers here accept.
pub const TOKEN: &str = "test-token-0123456789abcdef";

/// `hookrt` with the shared cache.
pub fn hookrt(args: &[&str]) -> Command {
    let mut c = common::hookrt_command();
    c.args(args)
        .env("NO_COLOR", "1")
        .env("HOOKRT_LOG", "error")
        .env_remove("HOOKRT_TOKENS");
    c
}

/// The folder `scripts/<script>` installs the pinned `what` into (once per
/// pin; the last line it prints), or a failure saying the tests need it.
pub fn installed_by(script: &str, what: &str) -> PathBuf {
    let out = Command::new(common::repo().join("scripts").join(script))
        .output()
        .unwrap_or_else(|e| panic!("scripts/{script} does not run: {e}"));
    assert!(
        out.status.success(),
        "these tests need scripts/{script} to install {what}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    PathBuf::from(stdout.lines().last().unwrap_or_default().trim())
}

/// A running `hookrt serve`; killed when dropped.
pub struct Server {
    pub child: Child,
    pub addr: String,
    rest: Option<std::thread::JoinHandle<String>>,
    _tokens: tempfile::TempDir,
}

impl Server {
    /// Serves `agent` with the test token (an `admin` one, bound to no
    /// agent) and `extra` arguments.
    pub fn start(agent: &Path, extra: &[&str]) -> Server {
        Server::with_tokens(agent, &format!("# test\n{TOKEN} admin\n"), extra)
    }

    /// Serves `agent` with a tokens file of `tokens` and `extra` arguments.
    pub fn with_tokens(agent: &Path, tokens_text: &str, extra: &[&str]) -> Server {
        let tokens = tempfile::tempdir().expect("temp dir");
        let file = tokens.path().join("tokens");
        std::fs::write(&file, tokens_text).expect("tokens file");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod 600");
        let mut args = vec![
            "serve",
            agent.to_str().expect("utf-8 path"),
            "--listen",
            "127.0.0.1:0",
        ];
        args.extend(["--tokens", file.to_str().expect("utf-8 path")]);
        args.extend(extra);
        let mut child = hookrt(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("hookrt serve starts");
        let stdout = child.stdout.take().expect("stdout piped");
        let mut first = String::new();
        let mut reader = BufReader::new(stdout);
        reader.read_line(&mut first).expect("read stdout");
        let addr = first
            .strip_prefix("listening on http://")
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("hookrt serve did not start; it printed {first:?}"))
            .to_owned();
        // Keep reading stdout so the server never blocks on a full pipe.
        let rest = std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = reader.read_to_string(&mut rest);
            rest
        });
        Server {
            child,
            addr,
            rest: Some(rest),
            _tokens: tokens,
        }
    }

    /// Sends SIGTERM and waits for the exit: whether it succeeded, and what
    /// it printed after its first line.
    pub fn terminate(mut self) -> (bool, String) {
        let status = sigterm(&mut self.child);
        let rest = self
            .rest
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        (status.success(), rest)
    }

    /// Sends a request with the test token.
    pub fn post(&self, path: &str, content_type: &str, body: &[u8]) -> Reply {
        let auth = format!("Bearer {TOKEN}");
        request(
            &self.addr,
            "POST",
            path,
            &[("Authorization", &auth), ("Content-Type", content_type)],
            body,
        )
    }

    /// GET with the test token.
    pub fn get(&self, path: &str) -> Reply {
        let auth = format!("Bearer {TOKEN}");
        request(&self.addr, "GET", path, &[("Authorization", &auth)], b"")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the server answered.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A POST whose head promises `length` bytes of body but sends only `body`,
/// then waits for the answer (the server's body timeout).
pub fn request_cut(
    addr: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    length: usize,
) -> Reply {
    let mut s = TcpStream::connect(addr).expect("connect to hookrt serve");
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let mut head = format!("POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {length}\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).expect("send head");
    s.write_all(body).expect("send part of the body");
    answer(s)
}

/// One HTTP/1.1 request on its own connection.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let mut s = TcpStream::connect(addr).expect("connect to hookrt serve");
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).expect("send head");
    // The server may answer (413) before reading the whole body.
    let _ = s.write_all(body);
    answer(s)
}

/// Reads the answer on `s` to its end.
fn answer(mut s: TcpStream) -> Reply {
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP answer: {text:?}"));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Reply {
        status,
        headers,
        body: body.to_owned(),
    }
}

/// The example agent.
pub fn agent() -> PathBuf {
    common::example("agent")
}

/// The example transcript's text.
pub fn transcript_text() -> String {
    std::fs::read_to_string(common::example("agent/transcript.jsonl")).expect("transcript")
}

/// Sends SIGTERM to `child` (a server or worker drains on it) and waits for
/// its exit.
pub(crate) fn sigterm(child: &mut std::process::Child) -> std::process::ExitStatus {
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill -TERM {pid}");
    child.wait().expect("wait for the child")
}
