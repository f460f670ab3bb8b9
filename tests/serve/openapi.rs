//! The server against its OpenAPI document (docs/openapi.json): the same
//! routes both ways, and real answers of a running server valid against the
//! document's response schemas (checked by `schema_check.rs`).

use std::collections::BTreeSet;

use hookrt::front::bridge::Bridge;
use serde_json::{Value, json};

use crate::common::TempAgent;
use crate::schema_check::{check, document};
use crate::{Reply, Server, TOKEN, agent, request, transcript_text};

#[test]
fn every_agents_route_is_documented_as_its_protocol_says() {
    let doc = document();
    for bridge in Bridge::ALL {
        let fragment = &bridge.protocol().openapi;
        let op = &doc["paths"][bridge.route()]["post"];
        assert_eq!(op["operationId"], fragment.operation_id, "{bridge:?}");
        let schema = &op["requestBody"]["content"]["application/json"]["schema"]["$ref"];
        let want = format!("#/components/schemas/{}", fragment.input_schema);
        assert_eq!(schema.as_str(), Some(want.as_str()), "{bridge:?}");
        assert!(
            doc["components"]["schemas"][fragment.input_schema].is_object(),
            "{bridge:?}: docs/openapi.json has no schema {}",
            fragment.input_schema
        );
    }
}

/// Every `(METHOD, path)` the document describes.
fn documented(doc: &Value) -> BTreeSet<(String, String)> {
    doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, ops)| {
            ops.as_object()
                .unwrap()
                .keys()
                .map(move |m| (m.to_uppercase(), path.clone()))
        })
        .collect()
}

#[test]
fn the_document_describes_every_route_and_no_other() {
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    let routes: BTreeSet<(String, String)> = hookrt_serve::routes()
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(documented(&doc), routes);
    // Only the health checks are open, in the document and on the server.
    let server = Server::start(&agent(), &[]);
    for (method, path) in &routes {
        let op = &doc["paths"][path][method.to_lowercase()];
        let open = op["security"] == json!([]);
        // A signed source's route refuses with a 200 deny: its caller reads
        // an error status as "let it through".
        let signed = Bridge::ALL
            .iter()
            .any(|b| b.route() == *path && b.protocol().signature.is_some());
        let reply = request(&server.addr, method, path, &[], b"");
        let expected = if open || signed { 200 } else { 401 };
        assert_eq!(reply.status, expected, "{method} {path}: {}", reply.body);
        assert!(
            op["responses"][expected.to_string()].is_object(),
            "{method} {path} documents {expected}"
        );
    }
    let nowhere = request(&server.addr, "GET", "/v2/nowhere", &[], b"");
    assert_eq!(nowhere.status, 404);
    check(
        &doc,
        &json!({"$ref": "#/components/schemas/Error"}),
        &nowhere.json(),
        "404",
    )
    .unwrap();
    assert_eq!(nowhere.json()["code"], "not_found");
}

/// What the test saw: `(METHOD, path, status)` checked against the document.
struct Seen {
    doc: Value,
    checked: BTreeSet<(String, String, u16)>,
}

impl Seen {
    /// Validates `reply` to `method path` against the document's response.
    fn check(&mut self, method: &str, path: &str, reply: &Reply) {
        let route = path.split('?').next().unwrap();
        let op = &self.doc["paths"][route][method.to_lowercase()];
        let response = &op["responses"][reply.status.to_string()];
        assert!(
            response.is_object(),
            "{method} {route} answered {}, which the document does not list: {}",
            reply.status,
            reply.body
        );
        let content = response["content"].as_object().expect("content");
        let kind = reply.header("content-type").unwrap_or_default();
        if let Some(media) = content.get("application/json") {
            assert!(
                kind.starts_with("application/json"),
                "{method} {route}: {kind}"
            );
            if let Err(e) = check(&self.doc, &media["schema"], &reply.json(), route) {
                panic!("{method} {route} {}: {e}", reply.status);
            }
        } else {
            let (media, _) = content.iter().next().unwrap();
            assert!(kind.starts_with(media.as_str()), "{method} {route}: {kind}");
        }
        self.checked
            .insert((method.to_owned(), route.to_owned(), reply.status));
    }
}

fn post(server: &Server, path: &str, content_type: &str, body: &[u8]) -> Reply {
    server.post(path, content_type, body)
}

#[test]
fn real_answers_are_valid_against_the_documented_schemas() {
    const JSON: &str = "application/json";
    const NDJSON: &str = "application/x-ndjson";
    let mut seen = Seen {
        doc: document(),
        checked: BTreeSet::new(),
    };
    let text = transcript_text();
    let line = |kind: &str| {
        text.lines()
            .find(|l| l.contains(&format!("\"kind\":\"{kind}\"")))
            .unwrap()
            .to_owned()
    };
    let server = Server::start(&agent(), &["--max-body-bytes", "100000"]);
    seen.check("GET", "/healthz", &server.get("/healthz"));
    seen.check("GET", "/readyz", &server.get("/readyz"));
    seen.check("GET", "/metrics", &server.get("/metrics"));
    seen.check(
        "POST",
        "/v1/events",
        &post(&server, "/v1/events", NDJSON, text.as_bytes()),
    );
    let invalid = json!({"schema_version": 1, "id": "x1", "kind": "no.such.kind", "timestamp": "2026-11-30T09:00:00.000Z",
        "coordinates": {"agent": "a", "session": "s", "sequence": 0}, "data": {}});
    seen.check(
        "POST",
        "/v1/events",
        &post(&server, "/v1/events", JSON, invalid.to_string().as_bytes()),
    );
    seen.check(
        "POST",
        "/v1/events",
        &post(&server, "/v1/events", JSON, b"{nope"),
    );
    seen.check(
        "POST",
        "/v1/events",
        &post(&server, "/v1/events", "text/plain", b"hello"),
    );
    seen.check(
        "POST",
        "/v1/events",
        &post(&server, "/v1/events", NDJSON, &vec![b' '; 200_000]),
    );
    for kind in ["actions.requested", "file.edit.requested"] {
        let fresh = line(kind).replace("\"id\":\"", "\"id\":\"fresh-");
        seen.check(
            "POST",
            "/v1/decide",
            &post(&server, "/v1/decide", JSON, fresh.as_bytes()),
        );
    }
    // Already taken: failed closed.
    seen.check(
        "POST",
        "/v1/decide",
        &post(
            &server,
            "/v1/decide",
            JSON,
            line("actions.requested").as_bytes(),
        ),
    );
    seen.check(
        "POST",
        "/v1/decide",
        &post(
            &server,
            "/v1/decide",
            JSON,
            line("session.started").as_bytes(),
        ),
    );
    let step = line("step.completed").replace("\"id\":\"", "\"id\":\"fresh-");
    seen.check(
        "POST",
        "/v1/edit",
        &post(&server, "/v1/edit", JSON, step.as_bytes()),
    );
    seen.check(
        "POST",
        "/v1/edit",
        &post(&server, "/v1/edit", JSON, b"[1, 2]"),
    );
    seen.check(
        "POST",
        "/v1/edit",
        &post(&server, "/v1/edit", JSON, &vec![b' '; 200_000]),
    );
    seen.check(
        "POST",
        "/v1/decide",
        &post(&server, "/v1/decide", JSON, &vec![b' '; 200_000]),
    );
    seen.check(
        "POST",
        "/v1/admin/reload",
        &post(&server, "/v1/admin/reload", JSON, b""),
    );
    // Anthropic's inference hook: unsigned, a deny saying so.
    let frame = crate::common::agent_fixture("anthropic-inference", "tool_call");
    let unsigned = post(&server, "/v1/anthropic-inference", JSON, frame.as_bytes());
    assert_eq!(unsigned.json()["action"], "deny", "{}", unsigned.body);
    seen.check("POST", "/v1/anthropic-inference", &unsigned);
    // Left to Anthropic's failure handling: the error status itself.
    let to_source = post(
        &server,
        "/v1/anthropic-inference?on_failure=source",
        JSON,
        frame.as_bytes(),
    );
    assert_eq!(
        to_source.json()["code"],
        "bad_signature",
        "{}",
        to_source.body
    );
    seen.check("POST", "/v1/anthropic-inference", &to_source);
    // Claude Code's hook inputs: a gate's deny, nothing to say, a broken
    // input, the same input twice (two events), too big, not JSON.
    let claude = crate::common::claude_fixture;
    let rm = claude("PreToolUse").replace("npm test", "rm -rf /");
    for (body, content_type) in [
        (rm.as_str(), JSON),
        (&claude("Notification"), JSON),
        (
            r#"{"hook_event_name":"PostToolUse","session_id":"s"}"#,
            JSON,
        ),
        (&claude("Stop"), JSON),
        (&claude("Stop"), JSON),
        (&claude("Notification"), "text/plain"),
    ] {
        let reply = post(&server, "/v1/claude-code", content_type, body.as_bytes());
        seen.check("POST", "/v1/claude-code", &reply);
    }
    seen.check(
        "POST",
        "/v1/claude-code",
        &post(&server, "/v1/claude-code", JSON, &vec![b' '; 200_000]),
    );
    // The other agents' hook inputs, the same way: a gate's refusal,
    // nothing to say, a broken input, the same input twice, not JSON, too big.
    for (route, gate, other, broken) in other_agents() {
        for ((query, body), content_type) in [
            (&gate, JSON),
            (&other, JSON),
            (&broken, JSON),
            (&other, JSON),
            (&other, "text/plain"),
        ] {
            let path = format!("{route}{query}");
            let reply = post(&server, &path, content_type, body.as_bytes());
            seen.check("POST", route, &reply);
        }
        let path = format!("{route}{}", other.0);
        seen.check(
            "POST",
            route,
            &post(&server, &path, JSON, &vec![b' '; 200_000]),
        );
    }
    for (method, path) in &hookrt_serve::routes() {
        let reply = request(
            &server.addr,
            method,
            path,
            &[("Authorization", "Bearer wrong-token-0123456789")],
            b"",
        );
        if reply.status == 401 {
            seen.check(method, path, &reply);
        }
    }
    drop(server);

    // A folder that does not load, and a token past its rate limit.
    let broken = TempAgent::new().hook("hostile/hooks/witness.rs", "witness.rs");
    let server = Server::start(
        broken.path(),
        &["--rate-limit", "0.001", "--rate-burst", "1"],
    );
    std::fs::write(broken.path().join("hooks/broken.wasm"), b"not a component").unwrap();
    seen.check(
        "POST",
        "/v1/admin/reload",
        &post(&server, "/v1/admin/reload", JSON, b""),
    );
    for (method, path) in &hookrt_serve::routes() {
        let auth = format!("Bearer {TOKEN}");
        let reply = request(&server.addr, method, path, &[("Authorization", &auth)], b"");
        if reply.status == 429 {
            assert!(reply.header("retry-after").is_some());
            seen.check(method, path, &reply);
        }
    }

    // The doors: a token bound to another agent and without `admin`, a
    // claimed id, a body that stops, a Content-Type that is not JSON.
    let bound = "bound-token-0123456789abcdef";
    let server = Server::with_tokens(
        &agent(),
        &format!("{TOKEN} admin\n{bound} agent=someone-else\n"),
        &["--body-timeout-ms", "300", "--decide-timeout-ms", "30000"],
    );
    let as_bound = |method: &str, path: &str, content_type: &str, body: &[u8]| {
        let auth = format!("Bearer {bound}");
        request(
            &server.addr,
            method,
            path,
            &[("Authorization", &auth), ("Content-Type", content_type)],
            body,
        )
    };
    let decide_line = line("actions.requested").replace("\"id\":\"", "\"id\":\"door-");
    let edit_line = line("step.completed").replace("\"id\":\"", "\"id\":\"door-");
    seen.check("GET", "/metrics", &as_bound("GET", "/metrics", JSON, b""));
    seen.check(
        "POST",
        "/v1/admin/reload",
        &as_bound("POST", "/v1/admin/reload", JSON, b""),
    );
    for (path, body) in [
        ("/v1/decide", &decide_line),
        ("/v1/edit", &edit_line),
        ("/v1/events", &decide_line),
    ] {
        seen.check("POST", path, &as_bound("POST", path, JSON, body.as_bytes()));
        // Taken, then claimed by an event that says something else.
        assert_eq!(post(&server, path, JSON, body.as_bytes()).status, 200);
        let claim = body.replace("\"sequence\":", "\"sequence\":1000");
        seen.check("POST", path, &post(&server, path, JSON, claim.as_bytes()));
        let auth = format!("Bearer {TOKEN}");
        let cut = crate::request_cut(
            &server.addr,
            path,
            &[("Authorization", &auth), ("Content-Type", JSON)],
            b"{\"id\":",
            100,
        );
        seen.check("POST", path, &cut);
    }
    let notification = crate::common::claude_fixture("Notification");
    seen.check(
        "POST",
        "/v1/claude-code",
        &as_bound("POST", "/v1/claude-code", JSON, notification.as_bytes()),
    );
    let auth = format!("Bearer {TOKEN}");
    let cut = crate::request_cut(
        &server.addr,
        "/v1/claude-code",
        &[("Authorization", &auth), ("Content-Type", JSON)],
        b"{\"hook_event_name\":",
        100,
    );
    seen.check("POST", "/v1/claude-code", &cut);
    for (route, _, (query, other), _) in other_agents() {
        let path = format!("{route}{query}");
        seen.check(
            "POST",
            route,
            &as_bound("POST", &path, JSON, other.as_bytes()),
        );
        let cut = crate::request_cut(
            &server.addr,
            &path,
            &[("Authorization", &auth), ("Content-Type", JSON)],
            b"{\"hook_event_name\":",
            100,
        );
        seen.check("POST", route, &cut);
    }
    for path in ["/v1/decide", "/v1/edit", "/v1/admin/reload"] {
        seen.check(
            "POST",
            path,
            &post(&server, path, "text/plain", decide_line.as_bytes()),
        );
    }
    drop(server);

    // Every documented answer was seen, but for the ones a test cannot bring about
    // without stopping the server mid-request.
    let documented: BTreeSet<(String, String, u16)> = seen.doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, ops)| {
            ops.as_object().unwrap().iter().flat_map(move |(m, op)| {
                op["responses"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(move |s| (m.to_uppercase(), path.clone(), s.parse().unwrap()))
            })
        })
        .collect();
    let unseen: Vec<String> = documented
        .difference(&seen.checked)
        .map(|(m, p, s)| format!("{m} {p} {s}"))
        .collect();
    // 503 (not ready, or the service gone) is documented on every route
    // that runs hooks, and no test here stops the service.
    let unready: BTreeSet<String> = [
        "POST /v1/admin/reload",
        "POST /v1/decide",
        "POST /v1/edit",
        "POST /v1/events",
        "GET /readyz",
    ]
    .map(String::from)
    .into_iter()
    .chain(Bridge::ALL.map(|b| format!("POST {}", b.route())))
    .map(|route| format!("{route} 503"))
    .collect();
    assert_eq!(unseen, unready.into_iter().collect::<Vec<_>>());
}

/// One input to an agent's route: its query (Copilot's input does not
/// name its event) and its body.
type Sent = (&'static str, String);

/// The other agents' routes, for the answers above: the route, a gate's
/// input made a dangerous call, an event that is no gate, and a broken
/// input of an event that is no gate.
fn other_agents() -> Vec<(&'static str, Sent, Sent, Sent)> {
    let fixture = crate::common::agent_fixture;
    let rm = |agent: &str, event: &str| {
        let mut v: Value = serde_json::from_str(&fixture(agent, event)).unwrap();
        for path in [
            "/tool_input/command",
            "/toolArgs/command",
            "/command",
            "/args/command",
            "/tool_call/input/commands/0",
            "/toolCall/args/CommandLine",
            "/payload/arguments/command",
        ] {
            if let Some(c) = v.pointer_mut(path) {
                *c = "rm -rf /".into();
            }
        }
        v.to_string()
    };
    vec![
        (
            "/v1/codex",
            ("", rm("codex", "PreToolUse")),
            ("", fixture("codex", "Stop")),
            (
                "",
                r#"{"hook_event_name":"PostToolUse","session_id":"s"}"#.into(),
            ),
        ),
        (
            "/v1/gemini",
            ("", rm("gemini", "BeforeTool")),
            ("", fixture("gemini", "SessionEnd")),
            (
                "",
                r#"{"hook_event_name":"AfterTool","session_id":"s"}"#.into(),
            ),
        ),
        (
            "/v1/cursor",
            ("", rm("cursor", "beforeShellExecution")),
            ("", fixture("cursor", "stop")),
            (
                "",
                r#"{"hook_event_name":"postToolUse","conversation_id":"s"}"#.into(),
            ),
        ),
        (
            "/v1/copilot",
            ("?event=preToolUse", rm("copilot", "preToolUse")),
            ("?event=sessionEnd", fixture("copilot", "sessionEnd")),
            ("?event=postToolUse", r#"{"sessionId":"s"}"#.into()),
        ),
        (
            "/v1/opencode",
            ("", rm("opencode", "tool.execute.before")),
            ("", fixture("opencode", "session.idle")),
            (
                "",
                r#"{"hook":"tool.execute.after","sessionID":"s"}"#.into(),
            ),
        ),
        (
            "/v1/openhands",
            ("", rm("openhands", "PreToolUse")),
            ("", fixture("openhands", "SessionEnd")),
            (
                "",
                r#"{"event_type":"PostToolUse","session_id":"s"}"#.into(),
            ),
        ),
        (
            "/v1/goose",
            ("", rm("goose", "PreToolUse")),
            ("", fixture("goose", "SessionEnd")),
            ("", r#"{"event":"PostToolUse","session_id":"s"}"#.into()),
        ),
        (
            "/v1/cline",
            ("?event=PreToolUse", rm("cline", "PreToolUse")),
            ("?event=TaskComplete", fixture("cline", "TaskComplete")),
            ("?event=PostToolUse", r#"{"taskId":"s"}"#.into()),
        ),
        (
            "/v1/antigravity",
            ("?event=PreToolUse", rm("antigravity", "PreToolUse")),
            ("?event=Stop", fixture("antigravity", "Stop")),
            ("?event=PostToolUse", r#"{"stepIdx":3}"#.into()),
        ),
        (
            "/v1/mcp",
            ("", rm("mcp", "tools/call")),
            ("", fixture("mcp", "tools/call:response")),
            (
                "",
                r#"{"hook":"tools/call:response","sessionId":"s"}"#.into(),
            ),
        ),
        (
            "/v1/kilo",
            ("", rm("opencode", "tool.execute.before")),
            ("", fixture("opencode", "session.created")),
            (
                "",
                r#"{"hook":"tool.execute.after","sessionID":"s"}"#.into(),
            ),
        ),
    ]
}
