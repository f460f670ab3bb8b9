//! `GET /metrics` read by a real Prometheus: Debian's `prometheus` package
//! at the version scripts/prometheus pins (installed by the tests, no root).
//! `promtool check metrics` lints the page, and a `prometheus` server scrapes
//! `hookrt serve` with the bearer token and answers PromQL on hookrt's
//! per-hook series.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;
use crate::endpoints::samples;
use crate::{Reply, Server, TOKEN, agent, request, transcript_text};

const NDJSON: &str = "application/x-ndjson";

/// The folder holding `prometheus` and `promtool`, installed by
/// scripts/prometheus (once per pin).
fn prometheus_dir() -> PathBuf {
    crate::installed_by("prometheus", "Debian's prometheus package")
}

/// A server of the example agent that has taken the example transcript,
/// once every delivery is counted on `/metrics`: the server, its page and
/// how many deliveries the `audit` hook had.
fn served_transcript() -> (Server, String, f64) {
    let rt = common::load(&agent());
    let audited = common::run_transcript(&rt)
        .iter()
        .filter(|d| d.hook == "audit")
        .count() as f64;
    assert!(audited > 0.0);
    let server = Server::start(&agent(), &[]);
    let reply = server.post("/v1/events", NDJSON, transcript_text().as_bytes());
    assert_eq!(reply.status, 200, "{}", reply.body);
    let key = r#"hookrt_deliveries_total{hook="audit",outcome="ok"}"#;
    let deadline = Instant::now() + Duration::from_secs(30);
    let page = loop {
        let page = server.get("/metrics");
        assert_eq!(page.status, 200, "{}", page.body);
        if samples(&page.body).get(key) == Some(&audited) || Instant::now() > deadline {
            break page.body;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(samples(&page).get(key), Some(&audited), "{page}");
    (server, page, audited)
}

/// `promtool check metrics` on `page` (it reads stdin).
fn promtool_check(promtool: &Path, page: &str) -> Output {
    let mut child = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool starts");
    child
        .stdin
        .take()
        .expect("stdin piped")
        .write_all(page.as_bytes())
        .expect("page written to promtool");
    child.wait_with_output().expect("promtool ends")
}

/// Each `# TYPE NAME TYPE` of an OpenMetrics page: name to type.
fn families(page: &str) -> BTreeMap<String, String> {
    page.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .map(|(name, kind)| (name.to_owned(), kind.trim().to_owned()))
        .collect()
}

/// The page in Prometheus's classic text format (0.0.4), as a client that
/// writes it names the same series: a counter family is named for its
/// `_total` samples, and there is no `# EOF`.
fn classic_text(page: &str) -> String {
    let counters: Vec<String> = families(page)
        .into_iter()
        .filter(|(_, kind)| kind == "counter")
        .map(|(name, _)| name)
        .collect();
    let mut out = String::new();
    for line in page.lines().filter(|l| *l != "# EOF") {
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|head| {
            let rest = line.strip_prefix(head)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .iter()
                .any(|c| c == name)
                .then(|| format!("{head}{name}_total {tail}"))
        });
        out.push_str(renamed.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

#[test]
fn promtool_checks_the_metrics_page() {
    let promtool = prometheus_dir().join("promtool");
    let (server, page, _) = served_transcript();
    assert!(page.ends_with("# EOF\n"), "not OpenMetrics text: {page}");
    for series in [
        r#"hookrt_deliveries_total{hook="policy","#,
        r#"hookrt_delivery_duration_seconds_count{hook="audit"}"#,
        r#"hookrt_delivery_fuel_count{hook="audit"}"#,
    ] {
        assert!(page.contains(series), "no {series} on /metrics:\n{page}");
    }
    let kinds = families(&page);

    // The page as served. promtool's `check metrics` parses Prometheus's
    // classic text format, not OpenMetrics: there a counter's HELP and TYPE
    // name its family (`hookrt_deliveries`) and its samples add `_total`, so
    // promtool takes each counter with samples for an untyped metric with no
    // help text. That is the only problem it may report (exit 3: lint).
    let out = promtool_check(&promtool, &page);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let code = out.status.code();
    assert!(
        code == Some(0) || code == Some(3),
        "promtool check metrics failed ({:?}):\n{said}\non the page:\n{page}",
        out.status
    );
    let mut misread = Vec::new();
    for line in said.lines().filter(|l| !l.trim().is_empty()) {
        let family = line
            .strip_suffix(" no help text")
            .and_then(|name| name.strip_suffix("_total"));
        match family {
            Some(family) if kinds.get(family).map(String::as_str) == Some("counter") => {
                assert!(
                    page.contains(&format!("# HELP {family} ")),
                    "{family} has no help text:\n{page}"
                );
                misread.push(family.to_owned());
            }
            _ => panic!(
                "promtool check metrics found a problem: {line}\n{said}\non the page:\n{page}"
            ),
        }
    }
    assert_eq!(
        code == Some(0),
        misread.is_empty(),
        "promtool's exit {code:?} with:\n{said}"
    );
    assert!(
        misread.iter().any(|f| f == "hookrt_deliveries"),
        "promtool read hookrt_deliveries_total as OpenMetrics? It said:\n{said}"
    );

    // The same series in the classic format: every name, counters' `_total`
    // included, passes promtool's lint with nothing to say.
    let classic = classic_text(&page);
    let out = promtool_check(&promtool, &classic);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && said.trim().is_empty(),
        "promtool check metrics ({:?}):\n{said}\non the page:\n{classic}",
        out.status
    );
    let (ok, _) = server.terminate();
    assert!(ok, "hookrt serve exits cleanly on SIGTERM");
}

/// A running `prometheus`; killed when dropped.
struct Prometheus {
    child: Child,
    addr: String,
    dir: tempfile::TempDir,
}

impl Prometheus {
    /// Scrapes `target` (host:port) every second at `/metrics` with the test
    /// token.
    fn start(bin: &Path, target: &str) -> Prometheus {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: hookrt\n    scrape_interval: 1s\n    scrape_timeout: 1s\n    \
                 metrics_path: /metrics\n    authorization:\n      type: Bearer\n      credentials: {TOKEN}\n    \
                 static_configs:\n      - targets: [\"{target}\"]\n"
            ),
        )
        .expect("prometheus.yml");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let addr = format!("127.0.0.1:{port}");
        let log = std::fs::File::create(dir.path().join("prometheus.log")).expect("log file");
        let child = Command::new(bin.join("prometheus"))
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log file"))
            .stderr(log)
            .spawn()
            .expect("prometheus starts");
        let mut p = Prometheus { child, addr, dir };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = p.child.try_wait().expect("prometheus status") {
                panic!("prometheus exited ({status}); its log:\n{}", p.log());
            }
            if TcpStream::connect(&p.addr).is_ok() && p.get("/-/ready").status == 200 {
                return p;
            }
            assert!(
                Instant::now() < deadline,
                "prometheus is not ready after 30 s; its log:\n{}",
                p.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn get(&self, path: &str) -> Reply {
        request(&self.addr, "GET", path, &[], b"")
    }

    /// An API answer's `data`, asserting `"status": "success"`.
    fn api(&self, path: &str) -> Value {
        let reply = self.get(path);
        assert_eq!(reply.status, 200, "GET {path}: {}", reply.body);
        let body = reply.json();
        assert_eq!(body["status"], "success", "GET {path}: {body}");
        body["data"].clone()
    }

    /// An instant query's result vector.
    fn query(&self, promql: &str) -> Vec<Value> {
        let data = self.api(&format!("/api/v1/query?query={}", percent_encode(promql)));
        assert_eq!(data["resultType"], "vector", "{promql}: {data}");
        data["result"].as_array().cloned().unwrap_or_default()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prometheus.log")).unwrap_or_default()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A query string's value, percent-encoded.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A vector's sample for `hook`: its value.
fn value_for(result: &[Value], hook: &str) -> Option<f64> {
    result
        .iter()
        .find(|s| s["metric"]["hook"] == hook)
        .and_then(|s| s["value"][1].as_str())
        .and_then(|v| v.parse().ok())
}

#[test]
fn a_real_prometheus_scrapes_the_metrics() {
    let bin = prometheus_dir();
    let (server, page, audited) = served_transcript();
    let prometheus = Prometheus::start(&bin, &server.addr);

    // The target is up: scraped with the bearer token (a 401 would leave it
    // down with the error in lastError).
    let deadline = Instant::now() + Duration::from_secs(30);
    let target = loop {
        let data = prometheus.api("/api/v1/targets?state=active");
        let target = data["activeTargets"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["labels"]["job"] == "hookrt"))
            .cloned();
        if let Some(t) = &target
            && t["health"] == "up"
        {
            break t.clone();
        }
        assert!(
            Instant::now() < deadline,
            "the hookrt target is not up after 30 s: {target:?}\nprometheus's log:\n{}",
            prometheus.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(
        target["scrapeUrl"],
        format!("http://{}/metrics", server.addr)
    );
    assert_eq!(target["lastError"], "", "{target}");

    // hookrt's per-hook series, as PromQL sees them: the same values as the
    // page (no events since), for hooks of the example agent.
    let page = samples(&page);
    let deliveries = prometheus.query("sum by (hook) (hookrt_deliveries_total{job=\"hookrt\"})");
    assert_eq!(
        value_for(&deliveries, "audit"),
        Some(audited),
        "{deliveries:?}"
    );
    for hook in ["policy", "protected-paths", "tool_timer"] {
        let on_page: f64 = page
            .iter()
            .filter(|(k, _)| k.starts_with(&format!("hookrt_deliveries_total{{hook=\"{hook}\",")))
            .map(|(_, v)| v)
            .sum();
        assert!(on_page > 0.0, "no deliveries of {hook} on /metrics");
        assert_eq!(
            value_for(&deliveries, hook),
            Some(on_page),
            "{hook}: {deliveries:?}"
        );
    }
    let durations = prometheus.query("hookrt_delivery_duration_seconds_count{hook=\"audit\"}");
    assert_eq!(
        value_for(&durations, "audit"),
        Some(audited),
        "{durations:?}"
    );
    let median = prometheus.query(
        "histogram_quantile(0.5, sum by (hook, le) (hookrt_delivery_duration_seconds_bucket))",
    );
    let audit_median = value_for(&median, "audit").expect("a median delivery time for audit");
    assert!(
        audit_median > 0.0 && audit_median < 1.0,
        "audit's median delivery time: {audit_median} s"
    );
    let hooks = prometheus.query("hookrt_hooks");
    assert_eq!(
        hooks.first().and_then(|s| s["value"][1].as_str()),
        page.get("hookrt_hooks").map(|v| v.to_string()).as_deref(),
        "{hooks:?}"
    );
    // The counter's type reached Prometheus (OpenMetrics names the family
    // without `_total`).
    let metadata = prometheus.api("/api/v1/metadata?metric=hookrt_deliveries");
    assert_eq!(
        metadata["hookrt_deliveries"][0]["type"], "counter",
        "{metadata}"
    );
    drop(prometheus);
    let (ok, _) = server.terminate();
    assert!(ok, "hookrt serve exits cleanly on SIGTERM");
}
