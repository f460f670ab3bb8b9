//! Deadlines bind a hook that waits inside a host call (a sleep, an HTTP
//! exchange), where epoch interruption never fires.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use hookrt::Outcome;

use crate::common::{TempAgent, load, transcript};
use crate::journal::start;

/// The sleeper under `[hooks.sleeper]` `settings` with a 200 ms deadline:
/// it ends `timeout` in under a second, never having woken up.
fn sleeper_times_out(settings: &str) -> hookrt::Delivery {
    let agent = TempAgent::new()
        .hook("testing/hooks/sleeper.rs", "sleeper.rs")
        .config(&format!("[hooks.sleeper]\n{settings}deadline_ms = 200\n"));
    let rt = load(agent.path());
    let start = Instant::now();
    let d = rt.dispatch(&transcript()[0]).unwrap().deliveries.remove(0);
    let took = start.elapsed();
    assert_eq!(d.outcome, Outcome::Timeout, "{:?}", d.error);
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(d.logs.iter().all(|l| l.message != "woke up"));
    d
}

#[test]
fn a_hook_sleeping_past_its_deadline_ends_timeout_in_under_a_second() {
    sleeper_times_out("");
}

#[test]
fn service_shutdown_returns_while_a_hook_sleeps() {
    // A deadline far away: only the cancel flag can end the sleep.
    let agent = TempAgent::new()
        .hook("testing/hooks/sleeper.rs", "sleeper.rs")
        .config("[hooks.sleeper]\ndeadline_ms = 600_000\n");
    let (service, seen) = start(agent.path(), None);
    service.submit(transcript()[0].clone()).wait().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let begin = Instant::now();
    let stats = service.shutdown_blocking(Duration::from_millis(20));
    let took = begin.elapsed();
    assert!(took < Duration::from_secs(1), "shutdown took {took:?}");
    assert_eq!(stats.left_unacked, 1);
    assert!(
        seen.lock().unwrap().is_empty(),
        "a cancelled delivery is not an outcome"
    );
}

/// A TCP peer on loopback that accepts connections and never writes a byte.
fn silent_peer() -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let (conn, _) = listener.accept().unwrap();
        std::thread::sleep(Duration::from_secs(3));
        drop(conn);
    });
    (port, handle)
}

fn probe(allow: &str, url: &str, deadline_ms: u64) -> TempAgent {
    TempAgent::new()
        .hook("testing/hooks/http-probe", "probe")
        .config(&format!(
            "[hooks.probe]\ngrants = [\"log\", \"http\"]\nhttp_allow = [\"{allow}\"]\n\
         deadline_ms = {deadline_ms}\nconfig = {{ urls = [\"{url}\"] }}\n"
        ))
}

#[test]
fn an_https_host_that_never_finishes_its_tls_handshake_ends_timeout() {
    let (port, _peer) = silent_peer();
    let agent = probe(
        &format!("https://127.0.0.1:{port}"),
        &format!("https://127.0.0.1:{port}/"),
        200,
    );
    let rt = load(agent.path());
    let start = Instant::now();
    let d = rt.dispatch(&transcript()[0]).unwrap().deliveries.remove(0);
    let took = start.elapsed();
    assert_eq!(d.outcome, Outcome::Timeout, "{:?} {:?}", d.error, d.logs);
    assert!(took < Duration::from_secs(1), "took {took:?}");
}

/// A plain-HTTP peer that sends a response head promising 10,000 bytes, then
/// drips one byte every 50 ms: a hook reading the body would wait ~8 min.
fn dripping_peer() -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut conn, _) = listener.accept().unwrap();
        let mut request = [0u8; 4096];
        let _ = conn.read(&mut request);
        let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 10000\r\n\r\n");
        for _ in 0..60 {
            if conn.write_all(b"x").is_err() {
                return; // the host hung up: the delivery ended
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    (port, handle)
}

#[test]
fn a_slow_drip_http_response_ends_timeout_at_the_deadline() {
    let (port, peer) = dripping_peer();
    let agent = probe(
        &format!("http://127.0.0.1:{port}"),
        &format!("http://127.0.0.1:{port}/"),
        300,
    );
    let rt = load(agent.path());
    let start = Instant::now();
    let d = rt.dispatch(&transcript()[0]).unwrap().deliveries.remove(0);
    let took = start.elapsed();
    assert_eq!(d.outcome, Outcome::Timeout, "{:?} {:?}", d.error, d.logs);
    assert!(took < Duration::from_secs(1), "took {took:?}");
    // The host dropped the connection: the peer's next writes fail well
    // before its 60 drips (3 s) are done.
    let waited = Instant::now();
    peer.join().unwrap();
    assert!(
        waited.elapsed() < Duration::from_millis(2900),
        "the connection was kept open"
    );
}

#[test]
fn an_epoch_only_hook_sleeping_in_a_host_call_still_ends_timeout() {
    let d = sleeper_times_out("metering = \"epoch\"\n");
    assert_eq!(d.fuel_used, 0, "an epoch-only hook counts no fuel");
}
