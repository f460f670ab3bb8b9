//! `hookrt serve` against the embedded library, in one run: events per second
//! through the server from a loopback HTTP/1.1 client on 1, 8 and 64
//! keep-alive connections (one or 100 events a request), next to the same
//! events through `HookService` in the same process; and the latency of `/v1/decide` (p50, p99) for 1 client and for
//! 8 asking at once, next to as many threads on `HookService::resolve_blocking`.
//!
//! The throughput rows run the throughput bench's three observers; the
//! latency rows the example agent's policy hooks on the transcript's
//! decisions. Every run ends when every event was delivered.
//!
//! Run: `scripts/bench serve` (a plain binary printing a table, well under
//! two minutes; see docs/performance.md#serve). `HOOKRT_BENCH_EVENTS`
//! changes the events per run (default 6,000), `HOOKRT_BENCH_ASKS` the
//! decisions a latency row (default 2,000); `HOOKRT_BENCH_ONLY=decide` runs
//! the latency rows alone, `events` ten pairs of one event a request on 8
//! connections (each pair's ratio printed), `served-decide` the server's
//! latency row for one client alone (what `scripts/flamegraph serve`
//! samples); `HOOKRT_BENCH_HOOKS=none` answers the decisions with no hook
//! (the server's own cost). Beside each latency row, `GET /healthz` on the
//! same connections: the HTTP round trip alone.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use hookrt::{Envelope, HookService, Observation};
use hookrt_serve::{ServeOptions, Tokens};

/// Rounds per figure; the median is printed.
const ROUNDS: usize = 3;

/// Turns the server and the library take in a latency row.
const LATENCY_ROUNDS: usize = 10;

// The library benches' helpers: the repository, the shared hook cache, the
// three-observer agent and the transcript (this crate is runtime/serve, as
// deep as runtime/core, and both benches share target/tmp).
#[path = "../../core/benches/support/mod.rs"]
mod support;

use support::{load, policy_hooks, three_observers, transcript};

/// `n` events of the transcript's mix with ids unique to `tag`.
fn events(base: &[Envelope], tag: &str, n: usize) -> Vec<Envelope> {
    (0..n)
        .map(|i| {
            let mut e = base[i % base.len()].clone();
            e.id = format!("{tag}-{i}");
            e.coordinates.sequence = i as u64;
            e.idempotency_key.clear();
            e
        })
        .collect()
}

/// A decision event under a fresh id (answered after everything before it).
fn decision(base: &[Envelope], id: String) -> Envelope {
    ask(&decisions(base), 0, id)
}

/// The transcript's decisions: its tool approvals and its file edit.
fn decisions(base: &[Envelope]) -> Vec<Envelope> {
    base.iter()
        .filter(|e| matches!(e.kind.as_str(), "actions.requested" | "file.edit.requested"))
        .cloned()
        .collect()
}

/// The `i`th of `decisions`, in turn, under id `id`.
fn ask(decisions: &[Envelope], i: usize, id: String) -> Envelope {
    let mut e = decisions[i % decisions.len()].clone();
    e.id = id;
    e.idempotency_key.clear();
    e
}

/// One keep-alive HTTP/1.1 connection.
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Connection {
    fn open(addr: SocketAddr) -> Connection {
        let s = TcpStream::connect(addr).unwrap();
        s.set_nodelay(true).unwrap();
        Connection {
            reader: BufReader::new(s.try_clone().unwrap()),
            writer: s,
        }
    }

    /// POSTs `body` to `path`; the status.
    fn post(&mut self, path: &str, body: &[u8]) -> u16 {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        // Head and body in one write, as HTTP clients send a small request
        // (two would be two segments, and the server woken for each).
        let mut request = head.into_bytes();
        request.extend_from_slice(body);
        self.writer.write_all(&request).unwrap();
        self.answer()
    }

    /// GETs `path`; the status.
    fn get(&mut self, path: &str) -> u16 {
        let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        self.writer.write_all(request.as_bytes()).unwrap();
        self.answer()
    }

    /// Reads a response; its status.
    fn answer(&mut self) -> u16 {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        let mut length = 0;
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).unwrap();
        status
    }
}

/// A server on a free loopback port, stopped when dropped.
struct Server {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    tokio: tokio::runtime::Runtime,
}

impl Server {
    fn start(agent: &Path) -> Server {
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut options = ServeOptions::new("127.0.0.1:0".parse().unwrap(), Tokens::default());
        options.insecure_no_auth = true;
        options.rate_limit = 0.0;
        options.decide_timeout = Duration::from_secs(120);
        options.build = Some(support::opts(agent));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (listening, addr) = std::sync::mpsc::channel();
        let runtime = load(agent);
        tokio.spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            hookrt_serve::serve(runtime, options, shutdown, move |a| {
                let _ = listening.send(a.tcp().expect("a TCP address"));
            })
            .await
            .unwrap();
        });
        let addr = addr.recv().unwrap();
        Server {
            addr,
            stop: Some(stop),
            tokio,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // Let the server drain before its threads go.
        std::thread::sleep(Duration::from_millis(200));
        let _ = &self.tokio;
    }
}

/// Events per second through `HookService`: submit all, every receipt, flush.
fn embedded(agent: &Path, events: Vec<Envelope>) -> f64 {
    let service = HookService::start_blocking(
        load(agent),
        None,
        Box::new(|_: Observation<'_>| {}),
        hookrt::ServiceOptions::default(),
    )
    .unwrap();
    let n = events.len();
    let started = Instant::now();
    let pending: Vec<_> = events.into_iter().map(|e| service.submit(e)).collect();
    for p in pending {
        p.wait().unwrap();
    }
    service.flush_blocking();
    let rate = n as f64 / started.elapsed().as_secs_f64();
    service.shutdown_blocking(Duration::from_secs(30));
    rate
}

/// Events per second through the server on `connections` connections, one
/// event per request, until a final decision is answered.
fn served(
    server: &Server,
    events: Vec<Envelope>,
    last: Envelope,
    connections: usize,
    per_request: usize,
) -> f64 {
    let n = events.len();
    // One envelope per request, or a JSON array of `per_request` of them.
    let bodies: Vec<Vec<u8>> = if per_request == 1 {
        events
            .iter()
            .map(|e| serde_json::to_vec(e).unwrap())
            .collect()
    } else {
        events
            .chunks(per_request)
            .map(|c| serde_json::to_vec(c).unwrap())
            .collect()
    };
    let mut shares: Vec<Vec<Vec<u8>>> = vec![Vec::new(); connections];
    for (i, b) in bodies.into_iter().enumerate() {
        shares[i % connections].push(b);
    }
    let mut conns: Vec<Connection> = (0..connections)
        .map(|_| Connection::open(server.addr))
        .collect();
    let started = Instant::now();
    std::thread::scope(|s| {
        for (conn, share) in conns.iter_mut().zip(&shares) {
            s.spawn(move || {
                for body in share {
                    assert_eq!(conn.post("/v1/events", body), 200);
                }
            });
        }
    });
    let status =
        Connection::open(server.addr).post("/v1/decide", &serde_json::to_vec(&last).unwrap());
    assert_eq!(status, 200);
    n as f64 / started.elapsed().as_secs_f64()
}

/// `asks` latencies from `clients` threads asking at once, each asking its
/// share one at a time: `client(c)` sets client `c` up (a connection) and
/// returns what times its `i`th ask.
fn latencies<F, A>(clients: usize, asks: usize, client: F) -> Vec<Duration>
where
    F: Fn(usize) -> A + Sync,
    A: FnMut(usize) -> Duration,
{
    let per = asks / clients;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                let client = &client;
                s.spawn(move || {
                    let mut ask = client(c);
                    (0..per).map(&mut ask).collect::<Vec<Duration>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

/// A number from the environment, else `default`.
fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter is not supported.
    let only = std::env::var("HOOKRT_BENCH_ONLY").unwrap_or_default();
    let base = transcript();
    let n = env_number("HOOKRT_BENCH_EVENTS", 6000);
    if only.is_empty() {
        throughput(
            &base,
            n,
            &[(1, 1), (8, 1), (64, 1), (1, 100), (8, 100)],
            ROUNDS,
        );
    }
    if only == "events" {
        // The check: one event a request on 8 connections, ten pairs.
        throughput(&base, n, &[(8, 1)], 10);
        return;
    }
    // `served-decide`: the server's row for one client alone (a flame
    // graph of the server's path without the library's beside it).
    let library = only != "served-decide";
    latency(&base, env_number("HOOKRT_BENCH_ASKS", 2000), library);
}

/// The events-per-second rows, each `(connections, events a request)` of
/// `cases` `rounds` pairs: the server against the embedded library.
fn throughput(base: &[Envelope], n: usize, cases: &[(usize, usize)], rounds: usize) {
    let agent = three_observers();
    let server = Server::start(agent.path());
    // Warm both paths (instances, pools, connections).
    embedded(agent.path(), events(base, "warm-e", 500));
    served(
        &server,
        events(base, "warm-s", 500),
        decision(base, "warm-d".into()),
        8,
        1,
    );

    println!(
        "hookrt serve vs embedded HookService: {n} events of the transcript's mix, 3 observe hooks, accepted, 1 worker; {rounds} rounds, each an embedded run right before the server run, medians"
    );
    println!();
    println!(
        "| path | connections | events/s | embedded events/s, same rounds | server / embedded |"
    );
    println!("|---|---|---|---|---|");
    let mut round = 0;
    let mut tag = |what: &str| {
        round += 1;
        format!("{what}{round}")
    };
    // On a shared machine the rate drifts between runs minutes apart: each
    // server run is paired with an embedded run just before it, and the
    // ratio is taken per pair.
    for &(connections, per_request) in cases {
        let pairs: Vec<(f64, f64)> = (0..rounds)
            .map(|_| {
                let library = embedded(agent.path(), events(base, &tag("e"), n));
                let t = tag("s");
                let rate = served(
                    &server,
                    events(base, &t, n),
                    decision(base, format!("{t}-end")),
                    connections,
                    per_request,
                );
                (rate, library)
            })
            .collect();
        let rate = median(pairs.iter().map(|p| p.0).collect());
        let library = median(pairs.iter().map(|p| p.1).collect());
        let each: Vec<f64> = pairs.iter().map(|p| p.0 / p.1).collect();
        let ratio = median(each.clone());
        let what = if per_request == 1 {
            "one event".to_owned()
        } else {
            format!("{per_request} events (a JSON array)")
        };
        println!(
            "| `hookrt serve`, {what} per `POST /v1/events` | {connections} | {rate:.0} | {library:.0} | {:.0} % |",
            100.0 * ratio
        );
        // More pairs than the table's: each one's ratio (the events check).
        if rounds > ROUNDS {
            let ratios: Vec<String> = each.iter().map(|r| format!("{:.0} %", 100.0 * r)).collect();
            let met = each.iter().filter(|r| **r >= 0.8).count();
            println!();
            println!(
                "Each pair: {}; at least 80 % in {met} of {rounds}",
                ratios.join(", ")
            );
        }
    }
    println!();
}

/// Decision latency with the example agent's policy hooks: one at a time on
/// each of 1 and 8 connections (8 clients asking at once), against 1 and 8
/// threads calling the library.
fn latency(base: &[Envelope], asks: usize, library: bool) {
    let hooks = std::env::var("HOOKRT_BENCH_HOOKS").unwrap_or_default();
    let agent = if hooks == "none" {
        // What the server's own path costs: the same asks, answered by no hook.
        let empty = tempfile::tempdir().unwrap();
        std::fs::create_dir(empty.path().join("hooks")).unwrap();
        empty
    } else {
        policy_hooks()
    };
    let server = Server::start(agent.path());
    let decisions = decisions(base);
    let service = HookService::start_blocking(
        load(agent.path()),
        None,
        Box::new(|_: Observation<'_>| {}),
        hookrt::ServiceOptions::default(),
    )
    .unwrap();
    // Warm both paths (instances, pools, the connection's first request).
    let mut conn = Connection::open(server.addr);
    for i in 0..50 {
        let body = serde_json::to_vec(&ask(&decisions, i, format!("warm-{i}"))).unwrap();
        assert_eq!(conn.post("/v1/decide", &body), 200);
        service
            .resolve_blocking(ask(&decisions, i, format!("lib-warm-{i}")))
            .unwrap();
    }
    // The paths take turns, a tenth of the asks at a time, so that a
    // machine busier for a while slows them alike.
    let mut rows = Vec::new();
    let clients = if library { &[1, 8][..] } else { &[1][..] };
    for &clients in clients {
        let (mut http, mut lib, mut bare) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..LATENCY_ROUNDS {
            let share = asks / LATENCY_ROUNDS;
            http.extend(latencies(clients, share, |client| {
                let mut conn = Connection::open(server.addr);
                let decisions = &decisions;
                move |i| {
                    let id = format!("lat-{clients}-{round}-{client}-{i}");
                    let body = serde_json::to_vec(&ask(decisions, i, id)).unwrap();
                    let t = Instant::now();
                    assert_eq!(conn.post("/v1/decide", &body), 200);
                    t.elapsed()
                }
            }));
            if !library {
                continue;
            }
            // The same round trip with no hook and no body: what HTTP costs.
            bare.extend(latencies(clients, share, |_| {
                let mut conn = Connection::open(server.addr);
                move |_| {
                    let t = Instant::now();
                    assert_eq!(conn.get("/healthz"), 200);
                    t.elapsed()
                }
            }));
            lib.extend(latencies(clients, share, |client| {
                let service = &service;
                let decisions = &decisions;
                move |i| {
                    let id = format!("lib-lat-{clients}-{round}-{client}-{i}");
                    let t = Instant::now();
                    service.resolve_blocking(ask(decisions, i, id)).unwrap();
                    t.elapsed()
                }
            }));
        }
        http.sort();
        lib.sort();
        bare.sort();
        rows.push((clients, http, lib, bare));
    }
    service.shutdown_blocking(Duration::from_secs(30));
    let through = if hooks == "none" {
        "answered by no hook (HOOKRT_BENCH_HOOKS=none)"
    } else {
        "through the example agent's policy hooks (`policy`, `protected-paths`)"
    };
    println!(
        "Decision latency: {asks} of the transcript's decisions a row (its tool approvals and its file edit, in turn), one at a time per client, {through}:"
    );
    println!();
    println!("| path | clients | p50 | p99 |");
    println!("|---|---|---|---|");
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    for (clients, http, library, bare) in &rows {
        for (what, all) in [
            ("`POST /v1/decide` (loopback, keep-alive)", http),
            ("`HookService::resolve_blocking`", library),
            ("`GET /healthz` (the round trip, no hook)", bare),
        ] {
            if all.is_empty() {
                continue;
            }
            println!(
                "| {what} | {clients} | {:.0} µs | {:.0} µs |",
                us(percentile(all, 0.5)),
                us(percentile(all, 0.99))
            );
        }
    }
    drop(server);
}
