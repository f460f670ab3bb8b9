//! The sandbox's capability boundary: grants, refused imports, redaction,
//! metrics, and what the context tells a hook (never a channel).

use hookrt::Outcome;

use crate::common::{TempAgent, last_field, load, opts, transcript};

fn load_err(agent: &TempAgent) -> Vec<String> {
    match hookrt::Runtime::load_blocking(agent.path(), &opts(), &mut |_| {}) {
        Ok(_) => panic!("load should fail"),
        Err(p) => p.0.into_iter().map(|p| p.message).collect(),
    }
}

#[test]
fn a_hook_importing_wasi_filesystem_is_refused_at_load_naming_the_import() {
    let agent = TempAgent::new().hook("testing/hooks/fs_reader.rs", "fs_reader.rs");
    let errs = load_err(&agent);
    assert_eq!(errs.len(), 1);
    for import in [
        "wasi:filesystem/types@0.2.6",
        "wasi:filesystem/preopens@0.2.6",
    ] {
        assert!(
            errs[0].contains(&format!("imports `{import}`: hookrt grants no filesystem access; remove the code that uses it")),
            "{}",
            errs[0]
        );
    }
}

#[test]
fn unknown_grants_are_refused() {
    let agent = TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .config("[hooks.witness]\ngrants = [\"log\", \"fs\"]\n");
    let problems: Vec<String> = hookrt::check(agent.path())
        .expect_err("refused")
        .0
        .into_iter()
        .map(|p| p.message)
        .collect();
    assert_eq!(
        problems,
        ["[hooks.\"witness\"] grants unknown capability `fs`"]
    );
}

#[test]
fn metrics_need_their_grant_and_are_aggregated_per_hook() {
    let refused = TempAgent::new().hook(
        "agent/hooks/observability/metrics.rs",
        "observability/metrics.rs",
    );
    assert!(
        load_err(&refused)[0]
            .starts_with("imports `hookrt:hook/metrics@0.4.0`, which is not granted")
    );

    let agent = TempAgent::new()
        .hook(
            "agent/hooks/observability/metrics.rs",
            "observability/metrics.rs",
        )
        .config("[hooks.\"observability/metrics\"]\ngrants = [\"log\", \"metrics\"]\n");
    let rt = load(agent.path());
    let events = transcript();
    for e in &events {
        rt.dispatch(e).unwrap();
    }
    let snapshot = rt.metrics().snapshot();
    let total: f64 = snapshot
        .iter()
        .filter(|((hook, name, _), _)| hook == "observability/metrics" && name == "events_total")
        .map(|(_, v)| v)
        .sum();
    assert_eq!(total as usize, events.len());
    let results = snapshot
        .iter()
        .find(|((_, name, labels), _)| {
            name == "events_total" && labels == &[("kind".to_string(), "action.result".to_string())]
        })
        .map(|(_, v)| *v);
    assert_eq!(
        results,
        Some(events.iter().filter(|e| e.kind == "action.result").count() as f64)
    );
}

#[test]
fn secrets_in_a_hooks_log_lines_are_masked_before_they_leave_the_runtime() {
    let agent = TempAgent::new().hook("testing/hooks/secret_logger.rs", "secret_logger.rs");
    let d = load(agent.path())
        .dispatch(&transcript()[0])
        .unwrap()
        .deliveries
        .remove(0);
    assert_eq!(d.outcome, Outcome::Ok);
    assert_eq!(
        d.logs[0].message,
        "calling api with key [redacted:api-key] and token [redacted:bearer-token] for [redacted:email]"
    );
    assert_eq!(
        last_field(&d, "authorization").as_deref(),
        Some("[redacted:bearer-token]")
    );
}

#[test]
fn configured_redaction_patterns_apply_too() {
    let agent = TempAgent::new()
        .hook("testing/hooks/secret_logger.rs", "secret_logger.rs")
        .config("[redaction.patterns]\napi-call = \"calling api\"\n");
    let d = load(agent.path())
        .dispatch(&transcript()[0])
        .unwrap()
        .deliveries
        .remove(0);
    assert!(
        d.logs[0]
            .message
            .starts_with("[redacted:api-call] with key [redacted:api-key]"),
        "{}",
        d.logs[0].message
    );
}

#[test]
fn the_context_names_agent_session_scope_and_transport_never_a_channel() {
    let agent = TempAgent::new().hook("testing/hooks/scope_reporter.rs", "scope_reporter.rs");
    let mut rt = load(agent.path());
    rt.set_transport(hookrt::Transport {
        kind: "nats".into(),
        detail: Some("hookrt.events.coder".into()),
    });
    let e = &transcript()[3];
    let d = rt.dispatch(e).unwrap().deliveries.remove(0);
    let field = |k: &str| last_field(&d, k).unwrap();
    assert_eq!(
        (
            field("scope"),
            field("agent"),
            field("session"),
            field("transport")
        ),
        (
            "primary".into(),
            "coder".into(),
            "ses_7f3a".into(),
            "nats".into()
        )
    );
    assert_eq!(
        field("data_len").parse::<usize>().unwrap(),
        e.data.to_string().len()
    );
}

/// A one-request-at-a-time HTTP server on a loopback port, for `count` requests.
fn serve(count: usize) -> (u16, std::thread::JoinHandle<()>) {
    serve_with(
        count,
        b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello".to_vec(),
    )
}

fn serve_with(count: usize, response: Vec<u8>) -> (u16, std::thread::JoinHandle<()>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        for stream in listener.incoming().take(count) {
            let mut s = stream.unwrap();
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(&response);
        }
    });
    (port, handle)
}

#[test]
fn an_http_hook_reaches_an_allowed_host_and_is_refused_for_another() {
    let (port, server) = serve(1);
    let agent = TempAgent::new().hook("testing/hooks/http-probe", "probe").config(&format!(
        "[hooks.probe]\ngrants = [\"log\", \"http\"]\nhttp_allow = [\"http://127.0.0.1:{port}\"]\n\
         config = {{ urls = [\"http://127.0.0.1:{port}/ok\", \"http://localhost:{port}/other-host\"] }}\n"
    ));
    let d = load(agent.path())
        .dispatch(&transcript()[0])
        .unwrap()
        .deliveries
        .remove(0);
    assert_eq!(d.outcome, Outcome::Ok, "{:?}", d.error);
    let field = |line: usize, key: &str| {
        d.logs[line]
            .fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(
        (field(0, "status").as_deref(), field(0, "body").as_deref()),
        (Some("200"), Some("hello")),
        "{:?}",
        d.logs
    );
    assert_eq!(
        field(1, "error").as_deref(),
        Some("ErrorCode::HttpRequestDenied"),
        "{:?}",
        d.logs
    );
    server.join().unwrap();
}

#[test]
fn http_needs_its_grant_and_an_allow_list() {
    let agent = TempAgent::new()
        .hook("testing/hooks/http-probe", "probe")
        .config("[hooks.probe]\nconfig = { urls = [] }\n");
    assert!(
        load_err(&agent)[0].starts_with("imports `wasi:http/"),
        "{:?}",
        load_err(&agent)
    );
    let agent = TempAgent::new()
        .hook("testing/hooks/http-probe", "probe")
        .config("[hooks.probe]\ngrants = [\"log\", \"http\"]\n");
    let problems: Vec<String> = hookrt::check(agent.path())
        .expect_err("refused")
        .0
        .into_iter()
        .map(|p| p.message)
        .collect();
    assert_eq!(
        problems,
        ["[hooks.\"probe\"] grants `http` but has no `http_allow` list"]
    );
}

#[test]
fn a_hook_flooding_across_deliveries_is_cut_at_its_per_minute_cap() {
    let agent = TempAgent::new().hook("hostile/hooks/log_flood.rs", "flood.rs").config(
        "[hooks.flood]\noutput_bytes = 4096\nlog_bytes_per_minute = 6000\nfuel = 2_000_000_000\ndeadline_ms = 5000\n",
    );
    let rt = load(agent.path());
    let mut kept = 0;
    for (i, e) in transcript().iter().take(3).enumerate() {
        let d = rt.dispatch(e).unwrap().deliveries.remove(0);
        assert_eq!(d.outcome, Outcome::Ok);
        assert!(d.output_truncated);
        let marker = &d.logs.last().unwrap().message;
        if i > 0 {
            assert_eq!(
                marker,
                "[hookrt] output cut at the hook's 6000-byte log_bytes_per_minute limit"
            );
        }
        kept += d
            .logs
            .iter()
            .filter(|l| !l.message.starts_with("[hookrt]"))
            .map(|l| {
                l.message.len()
                    + l.fields
                        .iter()
                        .map(|(k, v)| k.len() + v.len())
                        .sum::<usize>()
            })
            .sum::<usize>();
        kept += d.console.len();
    }
    assert!(kept <= 6000, "kept {kept} bytes over three deliveries");
    assert!(
        kept > 4096,
        "the first delivery's full budget and part of the second's were kept"
    );
}

#[test]
fn a_streamed_http_body_is_cut_at_the_response_cap() {
    // 1.5 MiB in chunks, without a content-length.
    let mut response =
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n".to_vec();
    for _ in 0..24 {
        response.extend_from_slice(format!("{:x}\r\n", 65536).as_bytes());
        response.extend(std::iter::repeat_n(b'x', 65536));
        response.extend_from_slice(b"\r\n");
    }
    response.extend_from_slice(b"0\r\n\r\n");
    let (port, server) = serve_with(1, response);
    let agent = TempAgent::new().hook("testing/hooks/http-probe", "probe").config(&format!(
        "[hooks.probe]\ngrants = [\"log\", \"http\"]\nhttp_allow = [\"http://127.0.0.1:{port}\"]\nfuel = 10_000_000_000\ndeadline_ms = 30000\n\
         config = {{ urls = [\"http://127.0.0.1:{port}/big\"] }}\n"
    ));
    let d = load(agent.path())
        .dispatch(&transcript()[0])
        .unwrap()
        .deliveries
        .remove(0);
    assert_eq!(d.outcome, Outcome::Ok, "{:?}", d.error);
    let len: usize = last_field(&d, "body_len")
        .expect("fetched")
        .parse()
        .unwrap();
    assert!(
        len <= hookrt::sandbox::MAX_RESPONSE_BYTES as usize,
        "read {len} bytes past the cap"
    );
    assert!(len > 0);
    server.join().unwrap();
}
