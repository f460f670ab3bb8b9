//! What hostile load cannot take from `hookrt serve`: its connection slots
//! (callers without a token never hold them, refusals end their
//! connection, idle connections close) and its memory (bodies in flight,
//! and the events parsed from them, stay within a budget).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::{Server, TOKEN, agent};

/// One answer read off a kept-alive connection: status, head and body;
/// `None` once the server closed it.
fn answer(reader: &mut BufReader<TcpStream>) -> Option<(u16, String, String)> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let length = head
        .lines()
        .find_map(|l| {
            let l = l.to_ascii_lowercase();
            l.strip_prefix("content-length:")
                .and_then(|v| v.trim().parse::<usize>().ok())
        })
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((status, head, String::from_utf8_lossy(&body).into_owned()))
}

/// A kept-alive connection: sends requests and reads their answers.
struct KeptAlive {
    addr: String,
    reader: BufReader<TcpStream>,
}

impl KeptAlive {
    fn open(addr: &str) -> KeptAlive {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        KeptAlive {
            addr: addr.to_owned(),
            reader: BufReader::new(s),
        }
    }

    /// Sends a request (no `Connection: close`) and reads its answer.
    fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Option<(u16, String, String)> {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        // One write: a body that comes apart from its head may not have
        // arrived when the answer is sent, and hyper then closes the
        // connection rather than wait to skip a body nobody reads.
        let mut request = head.into_bytes();
        request.extend_from_slice(body);
        self.reader.get_mut().write_all(&request).ok()?;
        answer(&mut self.reader)
    }

    /// Whether the server has closed the connection (read within `limit`).
    fn closed_within(&mut self, limit: Duration) -> bool {
        self.reader.get_ref().set_read_timeout(Some(limit)).unwrap();
        let mut byte = [0u8; 1];
        match self.reader.read(&mut byte) {
            Ok(0) => true,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
            Ok(_) => false,
        }
    }
}

/// `GET /healthz` on a new connection, failing the test unless it is
/// answered 200 within 2 s.
fn health_within_2_s(addr: &str, round: usize) {
    let started = Instant::now();
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut reader = BufReader::new(s);
    let head = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    reader.get_mut().write_all(head.as_bytes()).expect("send");
    let got = answer(&mut reader).map(|(status, _, _)| status);
    let took = started.elapsed();
    assert_eq!(got, Some(200), "round {round}: /healthz after {took:?}");
    assert!(
        took < Duration::from_secs(2),
        "round {round}: /healthz answered after {took:?}"
    );
}

/// Keeps `n` connections of `kind` open until `stop`: each re-opened as
/// soon as the server closes it.
fn hold(
    addr: &str,
    n: usize,
    kind: &'static str,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    let addr = addr.to_owned();
    std::thread::spawn(move || {
        let mut open: Vec<Option<KeptAlive>> = (0..n).map(|_| None).collect();
        while !stop.load(Ordering::SeqCst) {
            for slot in open.iter_mut() {
                let c = slot.get_or_insert_with(|| {
                    let mut c = KeptAlive::open(&addr);
                    c.reader
                        .get_ref()
                        .set_read_timeout(Some(Duration::from_millis(300)))
                        .unwrap();
                    if kind == "half a head" {
                        let head = format!("POST /v1/events HTTP/1.1\r\nHost: {addr}\r\n");
                        let _ = c.reader.get_mut().write_all(head.as_bytes());
                    }
                    c
                });
                let alive = match kind {
                    "health" => c.send("GET", "/healthz", &[], b"").is_some(),
                    "no token" => c
                        .send(
                            "POST",
                            "/v1/events",
                            &[("Content-Type", "application/json")],
                            b"{}",
                        )
                        .is_some_and(|(status, head, _)| {
                            status == 401
                                && !head.to_ascii_lowercase().contains("connection: close")
                        }),
                    _ => !c.closed_within(Duration::from_millis(50)),
                };
                if !alive {
                    *slot = None;
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    })
}

#[test]
fn sockets_without_a_token_never_hold_the_connection_cap_and_health_answers_within_2_s() {
    let cap = 16;
    let server = Server::start(&agent(), &["--max-connections", &cap.to_string()]);
    let addr = server.addr.clone();
    let auth = format!("Bearer {TOKEN}");
    // A client with a token, kept alive throughout.
    let mut mine = KeptAlive::open(&addr);
    let metrics = |c: &mut KeptAlive| c.send("GET", "/metrics", &[("Authorization", &auth)], b"");
    assert_eq!(metrics(&mut mine).map(|a| a.0), Some(200));
    // Every other slot taken by kept-alive health checks without a token,
    // asked again every 100 ms (nothing else closes them before the
    // header timeout); 16 more sockets send requests without a token, and
    // 16 more half a request head and nothing after. Each is opened again
    // as soon as the server closes it.
    let stop = Arc::new(AtomicBool::new(false));
    let holders = [
        hold(&addr, cap, "health", stop.clone()),
        hold(&addr, cap, "no token", stop.clone()),
        hold(&addr, cap, "half a head", stop.clone()),
    ];
    std::thread::sleep(Duration::from_millis(1500));
    for round in 0..5 {
        health_within_2_s(&addr, round);
        let started = Instant::now();
        assert_eq!(
            metrics(&mut mine).map(|a| a.0),
            Some(200),
            "round {round}: the client with a token keeps its connection"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        std::thread::sleep(Duration::from_millis(300));
    }
    stop.store(true, Ordering::SeqCst);
    for h in holders {
        h.join().expect("holder thread");
    }
}

#[test]
fn a_refused_request_ends_its_connection_whatever_the_route_answers() {
    let bound = "bound-token-0123456789abcdef";
    let tokens = format!("{TOKEN} admin\n{bound} agent=coder\n");
    let server = Server::with_tokens(
        &agent(),
        &tokens,
        &["--rate-limit", "0.01", "--rate-burst", "2"],
    );
    let addr = &server.addr;
    let bearer = |t: &str| format!("Bearer {t}");
    let json = ("Content-Type", "application/json");
    // (what, method, path, headers, status refused with)
    type Case<'a> = (&'a str, &'a str, &'a str, Vec<(&'a str, String)>, u16);
    let cases: [Case<'_>; 5] = [
        ("no token", "POST", "/v1/events", vec![], 401),
        (
            "a wrong token",
            "GET",
            "/metrics",
            vec![("Authorization", bearer("not-a-token-at-all-0000"))],
            401,
        ),
        (
            "a token that may not",
            "GET",
            "/metrics",
            vec![("Authorization", bearer(bound))],
            403,
        ),
        // A gate's refusal is a 200 deny for the agent; its connection ends all the same.
        (
            "a gate without a token",
            "POST",
            "/v1/claude-code?event=PreToolUse",
            vec![],
            200,
        ),
        (
            "past the rate limit",
            "GET",
            "/metrics",
            vec![("Authorization", bearer(TOKEN))],
            429,
        ),
    ];
    for (what, method, path, headers, status) in cases {
        let body: &[u8] = if method == "GET" { b"" } else { b"{}" };
        let mut c = KeptAlive::open(addr);
        let mut all: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        all.push(json);
        if status == 429 {
            // Use up the burst on this connection first.
            for _ in 0..2 {
                assert_eq!(
                    c.send(method, path, &all, body).map(|a| a.0),
                    Some(200),
                    "{what}"
                );
            }
        }
        let (got, head, text) = c.send(method, path, &all, body).expect(what);
        assert_eq!(got, status, "{what}: {text}");
        assert!(
            head.to_ascii_lowercase().contains("connection: close"),
            "{what}: {head}"
        );
        assert!(
            c.closed_within(Duration::from_secs(10)),
            "{what}: the connection stays open"
        );
    }
}

#[test]
fn a_silent_kept_alive_connection_is_closed_at_the_idle_timeout_not_the_header_timeout() {
    let server = Server::start(
        &agent(),
        &["--idle-timeout-ms", "300", "--header-timeout-ms", "60000"],
    );
    let auth = format!("Bearer {TOKEN}");
    let mut used = KeptAlive::open(&server.addr);
    let first = used.send("GET", "/metrics", &[("Authorization", &auth)], b"");
    assert_eq!(first.map(|a| a.0), Some(200));
    assert!(
        used.closed_within(Duration::from_secs(20)),
        "an idle connection after its answer"
    );
    let mut never = KeptAlive::open(&server.addr);
    assert!(
        never.closed_within(Duration::from_secs(20)),
        "a connection that never sent"
    );
}

/// The server's resident memory now and at its peak since `clear_refs`, in KiB.
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// A JSON array of `n` valid envelopes whose data is as dense as JSON gets
/// (`{"v":[0,0,0,...]}`), `bytes` long at most.
fn dense_body(tag: usize, n: usize, bytes: usize) -> Vec<u8> {
    let envelope = |i: usize, zeros: usize| {
        format!(
            r#"{{"schema_version":1,"id":"evt_dense_{tag}_{i:05}","kind":"message.completed","timestamp":"2026-11-30T09:00:00.000Z","coordinates":{{"agent":"coder","session":"ses_dense_{tag}","turn":"turn_1","step":null,"sequence":{i},"subagent":null}},"data":{{"v":[{}0]}}}}"#,
            "0,".repeat(zeros)
        )
    };
    // Room for the widest sequence number and the comma.
    let zeros = (bytes / n - envelope(0, 0).len() - 8) / 2;
    let mut body = b"[".to_vec();
    for i in 0..n {
        if i > 0 {
            body.push(b',');
        }
        body.extend(envelope(i, zeros).as_bytes());
    }
    body.push(b']');
    assert!(body.len() <= bytes, "{} bytes", body.len());
    body
}

/// POSTs `body` to `/v1/events` on its own connection: status, the
/// `Retry-After` header, and the body.
fn post_events(addr: &str, body: &[u8]) -> (u16, Option<u64>, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(600))).unwrap();
    let head = format!(
        "POST /v1/events HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("send the head");
    // Refused before it is read: the rest may not be taken.
    let _ = s.write_all(body);
    let mut reader = BufReader::new(s);
    let (status, head, text) = answer(&mut reader).expect("an answer");
    let retry = head.lines().find_map(|l| {
        l.to_ascii_lowercase()
            .strip_prefix("retry-after:")
            .and_then(|v| v.trim().parse().ok())
    });
    (status, retry, text)
}

/// A folder with the example agent's audit hook alone (it observes every
/// event): what is measured is the server's memory, and 80,000 events
/// through the example's eight hooks take minutes of both cores.
fn audit_alone() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("hooks")).expect("hooks/");
    std::fs::copy(
        agent().join("hooks/audit.rs"),
        dir.path().join("hooks/audit.rs"),
    )
    .expect("copy the audit hook");
    dir
}

#[test]
fn eight_concurrent_16_mib_bodies_of_dense_events_grow_the_server_by_less_than_256_mib() {
    let folder = audit_alone();
    let server = Server::start(folder.path(), &[]);
    let pid = server.child.id();
    let limit = 16 * 1024 * 1024;
    let bodies: Vec<Arc<Vec<u8>>> = (0..8)
        .map(|t| Arc::new(dense_body(t, 10_000, limit)))
        .collect();
    // Warm the server up (its first answers allocate what it keeps), then
    // start a new peak.
    let warm = dense_body(99, 100, 200_000);
    assert_eq!(post_events(&server.addr, &warm).0, 200);
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("reset the peak");
    let (before, _) = memory_kib(pid);
    let senders: Vec<_> = bodies
        .into_iter()
        .map(|body| {
            let addr = server.addr.clone();
            std::thread::spawn(move || {
                let mut refused = 0;
                loop {
                    let (status, retry, text) = post_events(&addr, &body);
                    if status == 503 {
                        let e: serde_json::Value = serde_json::from_str(&text).expect("JSON");
                        assert_eq!(e["code"], "server_busy", "{e}");
                        let wait = retry.expect("a 503 says when to come back (Retry-After)");
                        refused += 1;
                        std::thread::sleep(Duration::from_secs(wait));
                        continue;
                    }
                    assert_eq!(status, 200, "{}", &text[..text.len().min(300)]);
                    let answer: serde_json::Value = serde_json::from_str(&text).expect("JSON");
                    assert_eq!(answer["taken"], 10_000, "{}", answer["results"][0]);
                    return refused;
                }
            })
        })
        .collect();
    let refused: usize = senders.into_iter().map(|s| s.join().expect("sender")).sum();
    let (after, peak) = memory_kib(pid);
    let grew = peak.saturating_sub(before);
    eprintln!(
        "8 x 16 MiB dense bodies: resident {before} KiB before, peak {peak} KiB (+{grew} KiB), {after} KiB after; {refused} refusals (503, Retry-After) on the way"
    );
    assert!(
        grew < 256 * 1024,
        "the server's peak grew by {grew} KiB (from {before} KiB)"
    );
}
