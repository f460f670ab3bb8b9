//! Claude Code's `http` hook answered by `hookrt serve` (`POST
//! /v1/claude-code`), beside the same decision through the library
//! (`HookService::resolve`): three cached hooks (audit, policy, metrics), a
//! `PreToolUse` per request (each its own call), 1 and 8 clients at once,
//! each on a keep-alive connection as Claude Code's HTTP client keeps one.
//! Prints p50 and p99 latency per case. Goals (issue 28): the route's
//! median ≤ 0.5 ms and p99 ≤ 2 ms at 8 clients.
//! Run: `scripts/bench claude_http` (`HOOKRT_BENCH_REQUESTS`, default 2000
//! per client).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hookrt::{BuildOptions, HookService, Observation, Runtime, ServiceOptions};

mod support;
use support::{built_three_hooks, repo};

const TOKEN: &str = "bench-token-0123456789abcdef";

/// The server, killed when dropped (also when the bench panics).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The `PreToolUse` input of request `n` of client `client`: a call of its own.
fn input(template: &serde_json::Value, client: usize, n: usize) -> String {
    let mut v = template.clone();
    v["tool_use_id"] = format!("toolu_bench_{client}_{n}").into();
    v.to_string()
}

/// p50 and p99 of `samples`, in µs.
fn percentiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    (at(0.50).as_secs_f64() * 1e6, at(0.99).as_secs_f64() * 1e6)
}

/// One keep-alive HTTP/1.1 client posting `requests` inputs; the latencies.
fn client(addr: &str, template: &serde_json::Value, id: usize, requests: usize) -> Vec<Duration> {
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_nodelay(true).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    let mut out = Vec::with_capacity(requests);
    for n in 0..requests {
        let body = input(template, id, n);
        let started = Instant::now();
        write!(
            writer,
            "POST /v1/claude-code?event=PreToolUse HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut length = 0;
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.contains(" 200 "), "{status}");
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut answer = vec![0; length];
        reader.read_exact(&mut answer).unwrap();
        out.push(started.elapsed());
    }
    out
}

/// `clients` clients at once against the server at `addr`: every latency.
fn over_http(
    addr: &str,
    template: &serde_json::Value,
    clients: usize,
    requests: usize,
    round: usize,
) -> Vec<Duration> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|c| s.spawn(move || client(addr, template, round * 1000 + c, requests)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// The same decisions through the library: `clients` tasks resolving at once.
fn in_process(
    service: &HookService,
    template: &serde_json::Value,
    clients: usize,
    requests: usize,
    round: usize,
) -> Vec<Duration> {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    tokio.block_on(async {
        let tasks: Vec<_> = (0..clients)
            .map(|c| {
                let mut out = Vec::with_capacity(requests);
                async move {
                    for n in 0..requests {
                        let text = input(template, round * 1000 + c, n);
                        let started = Instant::now();
                        let bridge = hookrt::front::bridge::Bridge::named("claude-code")
                            .expect("a registered agent");
                        let e = bridge.read("claude-code", &text, None, "http").unwrap();
                        let reply = service.resolve(e.envelope).await.unwrap();
                        std::hint::black_box(bridge.answer(&e.name, reply.resolution.as_ref()));
                        out.push(started.elapsed());
                    }
                    out
                }
            })
            .collect();
        futures_util::future::join_all(tasks)
            .await
            .into_iter()
            .flatten()
            .collect()
    })
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let requests: usize = std::env::var("HOOKRT_BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let (agent, cache) = built_three_hooks();
    let bin = env!("CARGO_BIN_EXE_hookrt");
    let template: serde_json::Value = serde_json::from_slice(
        &std::fs::read(repo().join("tests/fixtures/claude/PreToolUse.json")).unwrap(),
    )
    .unwrap();

    // Outside the agent folder, gone with the bench.
    let secrets = tempfile::tempdir().unwrap();
    let tokens = secrets.path().join("tokens");
    std::fs::write(&tokens, format!("{TOKEN}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut server = Killed(
        Command::new(bin)
            .args([
                "serve",
                agent.path().to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
                "--tokens",
            ])
            .arg(&tokens)
            // Past the default 1,000 a second: a bench, not a session.
            .args(["--rate-limit", "1000000", "--rate-burst", "1000000"])
            .env("HOOKRT_CACHE_DIR", &cache)
            .env("HOOKRT_LOG", "error")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut first = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let addr = first
        .strip_prefix("listening on http://")
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("hookrt serve did not start: {first:?}"))
        .to_owned();

    let rt = Runtime::load_blocking(
        agent.path(),
        &BuildOptions {
            cache_dir: cache.clone(),
            ..BuildOptions::for_agent(agent.path())
        },
        &mut |_| {},
    )
    .unwrap();
    let service = HookService::start_blocking(
        rt,
        None,
        Box::new(|_: Observation<'_>| {}),
        ServiceOptions::default(),
    )
    .unwrap();

    println!("| clients | path | p50 | p99 |");
    println!("|---|---|---|---|");
    let mut round = 0;
    for clients in [1, 8] {
        // Warm both up, then measure them one after the other.
        round += 1;
        over_http(&addr, &template, clients, 100, round);
        in_process(&service, &template, clients, 100, round);
        round += 1;
        let http = percentiles(over_http(&addr, &template, clients, requests, round));
        round += 1;
        let lib = percentiles(in_process(&service, &template, clients, requests, round));
        println!(
            "| {clients} | POST /v1/claude-code | {:.0} µs | {:.0} µs |",
            http.0, http.1
        );
        println!(
            "| {clients} | HookService::resolve | {:.0} µs | {:.0} µs |",
            lib.0, lib.1
        );
        println!(
            "| {clients} | ratio (route / library) | {:.2} | {:.2} |",
            http.0 / lib.0,
            http.1 / lib.1
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average {}",
        load.split_whitespace().next().unwrap_or("?")
    );
}
