//! What guards the server: tokens, body limits, the rate limit, and the
//! refusal to serve without authentication anywhere but loopback.

use crate::{Server, TOKEN, agent, hookrt, request};

#[test]
fn a_missing_or_wrong_token_is_401_and_health_is_open() {
    let server = Server::start(&agent(), &[]);
    let line = crate::transcript_text().lines().next().unwrap().to_owned();
    for path in ["/v1/events", "/v1/decide", "/v1/edit"] {
        let none = request(
            &server.addr,
            "POST",
            path,
            &[("Content-Type", "application/json")],
            line.as_bytes(),
        );
        assert_eq!(none.status, 401, "{path}: {}", none.body);
        let e = none.json();
        assert_eq!(e["error"], "missing bearer token");
        assert!(e["fix"].as_str().unwrap().contains("Authorization: Bearer"));
        let wrong = request(
            &server.addr,
            "POST",
            path,
            &[("Authorization", "Bearer not-the-token-at-all")],
            line.as_bytes(),
        );
        assert_eq!(wrong.status, 401, "{path}");
        assert_eq!(wrong.json()["error"], "unknown bearer token");
    }
    let basic = request(
        &server.addr,
        "GET",
        "/metrics",
        &[("Authorization", "Basic dXNlcjpwYXNz")],
        b"",
    );
    assert_eq!(basic.status, 401);
    assert_eq!(
        request(&server.addr, "GET", "/metrics", &[], b"").status,
        401
    );
    let prefix = &TOKEN[..TOKEN.len() - 1];
    let almost = request(
        &server.addr,
        "GET",
        "/metrics",
        &[("Authorization", &format!("Bearer {prefix}"))],
        b"",
    );
    assert_eq!(almost.status, 401, "a prefix of a token is not the token");
    // Health checks need no token.
    let health = request(&server.addr, "GET", "/healthz", &[], b"");
    assert_eq!(
        (health.status, health.json()["status"].as_str()),
        (200, Some("ok"))
    );
    let ready = request(&server.addr, "GET", "/readyz", &[], b"");
    assert_eq!(ready.status, 200, "{}", ready.body);
    assert_eq!(ready.json()["ready"], true);
    assert!(ready.json()["hooks"].as_u64().unwrap() > 0);
    // The right token passes.
    assert_eq!(server.get("/metrics").status, 200);
    let unknown = server.get("/v2/nothing");
    assert_eq!(unknown.status, 404);
    assert!(unknown.json()["fix"].is_string());
}

#[test]
fn a_body_over_the_limit_is_413_with_a_json_error() {
    let server = Server::start(&agent(), &["--max-body-bytes", "1000"]);
    let big = vec![b' '; 5000];
    let reply = server.post("/v1/events", "application/x-ndjson", &big);
    assert_eq!(reply.status, 413, "{}", reply.body);
    let e = reply.json();
    assert!(e["error"].as_str().unwrap().contains("1000 bytes"), "{e}");
    assert!(e["fix"].as_str().unwrap().contains("--max-body-bytes"));
    // Under the limit the same server takes events.
    let line = crate::transcript_text().lines().next().unwrap().to_owned();
    assert_eq!(
        server
            .post("/v1/events", "application/json", line.as_bytes())
            .status,
        200
    );
}

#[test]
fn past_the_burst_a_token_gets_429_with_retry_after() {
    let server = Server::start(&agent(), &["--rate-limit", "0.01", "--rate-burst", "2"]);
    assert_eq!(server.get("/metrics").status, 200);
    assert_eq!(server.get("/metrics").status, 200);
    let third = server.get("/metrics");
    assert_eq!(third.status, 429, "{}", third.body);
    assert!(third.header("retry-after").unwrap().parse::<u64>().unwrap() >= 1);
    assert!(
        third.json()["error"]
            .as_str()
            .unwrap()
            .contains("rate limit")
    );
    // Health checks are not rate limited.
    assert_eq!(
        request(&server.addr, "GET", "/healthz", &[], b"").status,
        200
    );
}

#[test]
fn without_tokens_the_server_refuses_to_start_and_insecure_mode_is_loopback_only() {
    let dir = agent();
    let dir = dir.to_str().unwrap();
    let out = hookrt(&["serve", dir, "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no bearer tokens configured"), "{err}");
    assert!(err.contains("--insecure-no-auth"), "{err}");
    let out = hookrt(&["serve", dir, "--listen", "0.0.0.0:0", "--insecure-no-auth"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("only on a loopback address"), "{err}");
    // A tokens file others can read is refused, naming the fix.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("tokens");
    std::fs::write(&file, "test-token-0123456789abcdef\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let open = hookrt(&[
        "serve",
        dir,
        "--listen",
        "127.0.0.1:0",
        "--tokens",
        file.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(!open.status.success());
    let err = String::from_utf8_lossy(&open.stderr);
    assert!(err.contains("chmod 600"), "{err}");
    let short = hookrt(&["serve", dir, "--listen", "127.0.0.1:0"])
        .env("HOOKRT_TOKENS", "short")
        .output()
        .unwrap();
    assert!(!short.status.success());
    assert!(String::from_utf8_lossy(&short.stderr).contains("at least 16"));
}
