//! OpenTelemetry export (docs/telemetry.md) against a real OTLP/HTTP
//! receiver on loopback: every request it takes is decoded with the
//! `opentelemetry-proto` types, as a collector would.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value::Value as Any};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{Value, json};

use crate::common::{example, succeeded};
use crate::{agent, hookrt, request, sigterm};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";
/// The tool call's input: no span may carry it.
const COMMAND: &str = "cargo test parse_config 2>&1 | tail -40";

/// One request the receiver took: path, content type, decoded body.
struct Export {
    path: String,
    content_type: String,
    request: ExportTraceServiceRequest,
}

/// An OTLP/HTTP receiver on a free loopback port: every `POST` is answered
/// 200 with an empty `ExportTraceServiceResponse` and sent on the channel.
fn receiver() -> (String, Receiver<Export>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the receiver");
    let addr = listener.local_addr().expect("its address").to_string();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let tx = tx.clone();
            std::thread::spawn(move || serve_connection(conn, &tx));
        }
    });
    (addr, rx)
}

/// Answers the requests of one kept-alive connection until it closes.
fn serve_connection(conn: TcpStream, tx: &std::sync::mpsc::Sender<Export>) {
    let mut out = conn.try_clone().expect("clone the connection");
    let mut reader = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        let (mut length, mut chunked, mut content_type) = (0usize, false, String::new());
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).expect("a header line");
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').expect("name: value");
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse().expect("a length"),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "content-type" => content_type = value.to_owned(),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                let mut size = String::new();
                reader.read_line(&mut size).expect("a chunk size");
                let size = usize::from_str_radix(size.trim(), 16).expect("hex size");
                let mut chunk = vec![0; size + 2];
                reader.read_exact(&mut chunk).expect("a chunk");
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            body.resize(length, 0);
            reader.read_exact(&mut body).expect("the body");
        }
        let request = ExportTraceServiceRequest::decode(body.as_slice())
            .unwrap_or_else(|e| panic!("not an ExportTraceServiceRequest ({e})"));
        // An empty ExportTraceServiceResponse is zero bytes.
        let answer =
            "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
        out.write_all(answer.as_bytes()).expect("answer");
        let _ = tx.send(Export {
            path,
            content_type,
            request,
        });
    }
}

/// `hookrt serve` on the example agent without tokens, with `env`; its
/// address. The OTEL_* variables of the test's own environment are not
/// passed on.
fn serve(env: &[(&str, &str)]) -> (Child, String) {
    let dir = agent();
    succeeded(&mut hookrt(&["build", dir.to_str().unwrap()]));
    let mut command = hookrt(&[
        "serve",
        dir.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--insecure-no-auth",
    ]);
    for (name, _) in std::env::vars() {
        if name.starts_with("OTEL_") || name == "TRACEPARENT" {
            command.env_remove(name);
        }
    }
    command.envs(env.iter().copied());
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("hookrt serve starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("read stdout");
    let addr = first
        .strip_prefix("listening on http://")
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("hookrt serve did not start; it printed {first:?}"))
        .to_owned();
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    (child, addr)
}

/// The example transcript's first tool call, as event `id`.
fn decision(id: &str) -> Value {
    let text = std::fs::read_to_string(example("agent/transcript.jsonl")).expect("transcript");
    let mut event: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line"))
        .find(|e| e["kind"] == "actions.requested")
        .expect("a tool call in the transcript");
    event["id"] = json!(id);
    assert!(event.to_string().contains(COMMAND), "{event}");
    event
}

/// POSTs the decision to `/v1/decide` with `headers`.
fn decide(addr: &str, event: &Value, headers: &[(&str, &str)]) {
    let mut all = vec![("Content-Type", "application/json")];
    all.extend_from_slice(headers);
    let reply = request(
        addr,
        "POST",
        "/v1/decide",
        &all,
        event.to_string().as_bytes(),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["failed_closed"], false, "{}", reply.body);
}

/// Every span the receiver took until `quiet` passed without a request.
fn drain(rx: &Receiver<Export>, quiet: Duration) -> (Vec<Export>, Vec<Span>) {
    let exports: Vec<Export> = std::iter::from_fn(|| rx.recv_timeout(quiet).ok()).collect();
    let spans = exports
        .iter()
        .flat_map(|e| &e.request.resource_spans)
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| s.spans.clone())
        .collect();
    (exports, spans)
}

fn attr<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Any> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
}

fn text<'a>(span: &'a Span, key: &str) -> &'a str {
    match attr(&span.attributes, key) {
        Some(Any::StringValue(s)) => s,
        other => panic!("{}: {key} is {other:?}", span.name),
    }
}

fn int(span: &Span, key: &str) -> i64 {
    match attr(&span.attributes, key) {
        Some(Any::IntValue(i)) => *i,
        other => panic!("{}: {key} is {other:?}", span.name),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_decision_s_spans_reach_an_otlp_receiver_joined_to_the_agent_s_trace() {
    let (receiver_addr, rx) = receiver();
    let endpoint = format!("http://{receiver_addr}");
    let (mut child, addr) = serve(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
    ]);
    let traceparent = format!("00-{TRACE_ID}-{PARENT_ID}-01");
    decide(
        &addr,
        &decision("evt_otel_1"),
        &[("traceparent", &traceparent)],
    );
    assert!(sigterm(&mut child).success(), "hookrt serve exits cleanly");
    let (exports, spans) = drain(&rx, Duration::from_secs(2));

    assert!(!exports.is_empty(), "the receiver got no request");
    for e in &exports {
        assert_eq!(e.path, "/v1/traces");
        assert_eq!(e.content_type, "application/x-protobuf");
        for r in &e.request.resource_spans {
            let resource = r.resource.as_ref().expect("a resource");
            let name = attr(&resource.attributes, "service.name");
            assert_eq!(name, Some(&Any::StringValue("hookrt".into())));
        }
    }
    let events: Vec<&Span> = spans.iter().filter(|s| s.name == "hookrt.event").collect();
    assert_eq!(events.len(), 1, "one event span: {spans:#?}");
    let event = events[0];
    assert_eq!(hex(&event.trace_id), TRACE_ID, "the agent's trace");
    assert_eq!(hex(&event.parent_span_id), PARENT_ID, "the agent's span");
    assert_eq!(text(event, "hookrt.event.id"), "evt_otel_1");
    assert_eq!(text(event, "hookrt.event.kind"), "actions.requested");
    assert_eq!(text(event, "hookrt.agent"), "coder");
    assert_eq!(text(event, "hookrt.session"), "ses_7f3a");
    assert!(
        ["allow", "ask", "deny", "abstain"].contains(&text(event, "hookrt.verdict")),
        "{event:#?}"
    );

    let deliveries: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == "hookrt.delivery")
        .collect();
    let hooks: BTreeSet<&str> = deliveries.iter().map(|d| text(d, "hookrt.hook")).collect();
    for hook in ["policy", "audit"] {
        assert!(
            hooks.contains(hook),
            "no delivery span of {hook}: {hooks:?}"
        );
    }
    for d in &deliveries {
        assert_eq!(d.trace_id, event.trace_id, "{d:#?}");
        assert_eq!(
            d.parent_span_id, event.span_id,
            "a child of the event's span"
        );
        assert_eq!(text(d, "hookrt.event.id"), "evt_otel_1");
        assert_eq!(text(d, "hookrt.event.kind"), "actions.requested");
        // The kind, `*`, or a watch (`observe:actions.requested`).
        let handler = text(d, "hookrt.handler");
        assert!(
            handler == "*" || handler.ends_with("actions.requested"),
            "{d:#?}"
        );
        assert_eq!(text(d, "hookrt.outcome"), "ok", "{d:#?}");
        assert_eq!(int(d, "hookrt.attempt"), 1);
        assert!(int(d, "hookrt.fuel") > 0, "{d:#?}");
        assert!(d.start_time_unix_nano <= d.end_time_unix_nano);
        assert!(
            event.start_time_unix_nano <= d.start_time_unix_nano,
            "{d:#?}"
        );
    }

    // Nothing of the event's data: not the command, not the path read.
    let rendered = format!(
        "{:?}",
        exports.iter().map(|e| &e.request).collect::<Vec<_>>()
    );
    for secret in [COMMAND, "parse_config", "src/config.rs"] {
        assert!(!rendered.contains(secret), "a span carries `{secret}`");
    }
}

#[test]
fn with_the_sdk_disabled_or_no_exporter_nothing_is_sent() {
    let (receiver_addr, rx) = receiver();
    let endpoint = format!("http://{receiver_addr}");
    let traceparent = format!("00-{TRACE_ID}-{PARENT_ID}-01");
    for (i, off) in [
        ("OTEL_SDK_DISABLED", "true"),
        ("OTEL_TRACES_EXPORTER", "none"),
    ]
    .into_iter()
    .enumerate()
    {
        let (mut child, addr) = serve(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            off,
        ]);
        let id = format!("evt_otel_off_{i}");
        decide(&addr, &decision(&id), &[("traceparent", &traceparent)]);
        assert!(sigterm(&mut child).success(), "hookrt serve exits cleanly");
    }
    let (exports, _) = drain(&rx, Duration::from_millis(500));
    assert_eq!(exports.len(), 0, "the receiver got a request");
}

#[test]
fn hookrt_run_joins_the_trace_named_by_traceparent() {
    let (receiver_addr, rx) = receiver();
    let dir = agent();
    succeeded(&mut hookrt(&["build", dir.to_str().unwrap()]));
    let events = example("agent/transcript.jsonl");
    let mut command = hookrt(&[
        "run",
        dir.to_str().unwrap(),
        "--events",
        events.to_str().unwrap(),
    ]);
    for (name, _) in std::env::vars() {
        if name.starts_with("OTEL_") {
            command.env_remove(name);
        }
    }
    command
        .env(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            format!("http://{receiver_addr}/v1/traces"),
        )
        .env("OTEL_SERVICE_NAME", "hookrt-run")
        .env("TRACEPARENT", format!("00-{TRACE_ID}-{PARENT_ID}-01"));
    let out = succeeded(&mut command);
    assert!(!out.stdout.is_empty());
    let (exports, spans) = drain(&rx, Duration::from_secs(1));
    assert!(!exports.is_empty(), "the receiver got no request");
    let lines = std::fs::read_to_string(&events).unwrap().lines().count();
    let events: Vec<&Span> = spans.iter().filter(|s| s.name == "hookrt.event").collect();
    assert!(
        events.len() > lines / 2,
        "{} event spans for {lines} lines",
        events.len()
    );
    for e in &events {
        assert_eq!(hex(&e.trace_id), TRACE_ID);
        assert_eq!(hex(&e.parent_span_id), PARENT_ID);
    }
    let resource = exports[0].request.resource_spans[0]
        .resource
        .as_ref()
        .unwrap();
    let name = attr(&resource.attributes, "service.name");
    assert_eq!(name, Some(&Any::StringValue("hookrt-run".into())));
}
