//! One hook folder, every agent: the example agent's policy decides the
//! same dangerous call (`rm -rf build/`) the same way whichever of the
//! ten agents asks, Anthropic's inference hook (a tool-call frame, signed)
//! or an MCP host's `tools/call` (through hookrt's MCP interceptors), over
//! each one's way in (Claude Code's and Copilot CLI's `http` hooks;
//! Codex's, Gemini CLI's, Cursor's, Cline's, OpenHands' and Antigravity
//! CLI's command hooks, and hookrt's OpenCode and Kilo CLI plugin's input,
//! each once on its own and once forwarding to the same `hookrt serve`;
//! the inference hook's frame once through `hookrt hook`, once POSTed to
//! its route; the MCP invocation's input once through `hookrt hook`, once
//! invoked by a real MCP client on `/mcp`), and the service's journal holds
//! one trail across them: each event with the agent and the event it came
//! from, each delivery of it, each resolution.

use std::path::Path;

use hookrt::front::bridge::Bridge;
use serde_json::{Value, json};

use crate::agents::hook_answer;
use crate::common::{agent_fixture, answer_reason, succeeded, tool_gate, with_stdin};
use crate::{agent, hookrt};

/// The tool gate of `bridge`, its fixture with `rm -rf build/` as the
/// command, and the gate (which reads its deny).
fn dangerous(bridge: Bridge) -> (&'static str, Value, crate::common::ToolGate) {
    let gate = tool_gate(bridge);
    let mut input = gate.input("rm -rf build/");
    // The session tells the agents' events apart in the journal.
    for key in [
        "session_id",
        "sessionId",
        "conversation_id",
        "sessionID",
        "taskId",
        "conversationId",
    ] {
        if input.get(key).is_some() {
            input[key] = format!("one-folder-{}", bridge.name()).into();
        }
    }
    (gate.event, input, gate)
}

/// `hookrt hook --agent` on `input`: its answer (there is one: a deny).
fn command(bridge: Bridge, event: &str, input: &Value, extra: &[&str], dir: &Path) -> Value {
    hook_answer(bridge, dir, event, input, extra)
        .unwrap_or_else(|| panic!("{} {event}: no answer", bridge.name()))
}

/// The validator's result for the call in the MCP plane's `input`, invoked
/// by rmcp's client over streamable HTTP on `hookrt serve` at `addr`.
fn invoke_over_mcp(addr: &str, input: &Value) -> Value {
    use rmcp::ServiceExt;
    use rmcp::model::{ClientRequest, CustomRequest, CustomResult, ServerResult};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let params = json!({"name": "hookrt", "event": "tools/call", "phase": "request",
        "payload": input["payload"], "context": {"sessionId": input["sessionId"]}});
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio.block_on(async {
        let config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"))
            .auth_header(crate::TOKEN);
        let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
        let request = CustomRequest::new("interceptor/invoke", Some(params));
        let reply = client
            .peer()
            .send_request(ClientRequest::CustomRequest(request))
            .await;
        client.cancel().await.unwrap();
        match reply {
            Ok(ServerResult::CustomResult(CustomResult(v))) => v,
            other => panic!("mcp: {other:?}"),
        }
    })
}

#[test]
fn one_folder_denies_the_same_call_for_every_agent_and_keeps_one_trail() {
    let dir = agent();
    succeeded(&mut hookrt(&["build", dir.to_str().unwrap()]));
    let journal_dir = tempfile::tempdir().unwrap();
    let journal = journal_dir.path().join("journal.db");
    // The example agent, checking inference frames' signatures too.
    let server = crate::inference::signed_server(journal_dir.path(), &journal);
    let url = format!("http://{}", server.addr);
    let mut reasons = Vec::new();
    for bridge in Bridge::ALL {
        let (event, input, gate) = dangerous(bridge);
        // On its own: a process per event.
        let alone = command(bridge, event, &input, &[], &dir);
        // Through the service: the agent's http hook, or its command hook
        // forwarding to the agent's route.
        let served = match bridge.name() {
            "claude-code" | "copilot" => {
                let reply = server.post(
                    &format!("/v1/{}?event={event}", bridge.name()),
                    "application/json",
                    input.to_string().as_bytes(),
                );
                assert_eq!(reply.status, 200, "{}: {}", bridge.name(), reply.body);
                reply.json()
            }
            // Anthropic's inference hook: its frame, signed as Anthropic
            // signs it.
            "anthropic-inference" => {
                let sent = crate::inference::now();
                let reply = crate::inference::post_frame(
                    &server.addr,
                    &input,
                    crate::inference::SECRET,
                    sent,
                );
                assert_eq!(reply.status, 200, "{}: {}", bridge.name(), reply.body);
                reply.json()
            }
            // An MCP host's `tools/call`, invoked by a real MCP client on
            // the server's `/mcp`.
            "mcp" => invoke_over_mcp(&server.addr, &input),
            _ => command(bridge, event, &input, &["--http", &url], &dir),
        };
        for answer in [&alone, &served] {
            assert!(gate.denies(answer), "{}: {answer}", bridge.name());
        }
        assert_eq!(
            answer_reason(&alone),
            answer_reason(&served),
            "{}",
            bridge.name()
        );
        reasons.push(answer_reason(&alone));
    }
    // The same reason, word for word, for every agent.
    assert!(
        reasons[0].contains("recursive forced delete"),
        "{reasons:?}"
    );
    assert!(reasons.iter().all(|r| r == &reasons[0]), "{reasons:?}");
    let (clean, _) = server.terminate();
    assert!(clean);

    // The trail: one event per agent, where it came from, the policy's
    // delivery, the deny it resolved to.
    let db = rusqlite::Connection::open(&journal).unwrap();
    let mut rows = db
        .prepare(
            "SELECT e.agent, e.envelope, r.resolution FROM events e \
             LEFT JOIN resolutions r ON r.event_seq = e.seq ORDER BY e.seq",
        )
        .unwrap();
    let trail: Vec<(String, Value, Option<Value>)> = rows
        .query_map([], |r| {
            let envelope: String = r.get(1)?;
            let resolution: Option<String> = r.get(2)?;
            Ok((
                r.get(0)?,
                serde_json::from_str(&envelope).unwrap(),
                resolution.map(|t| serde_json::from_str(&t).unwrap()),
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(trail.len(), Bridge::ALL.len(), "{trail:#?}");
    for ((agent, envelope, resolution), bridge) in trail.iter().zip(Bridge::ALL) {
        let (event, _, _) = dangerous(bridge);
        assert_eq!(agent, bridge.name());
        assert_eq!(envelope["kind"], "actions.requested");
        assert_eq!(
            envelope["coordinates"]["session"],
            format!("one-folder-{}", bridge.name())
        );
        assert_eq!(
            envelope["data"]["bridge"],
            json!({"agent": bridge.name(), "event": event, "transport": "http"})
        );
        let resolution = resolution.as_ref().expect("a resolution");
        assert_eq!(
            resolution.pointer("/tool_approval/calls/0/decided_by"),
            Some(&json!("policy")),
            "{resolution}"
        );
    }
    let policy_deliveries: i64 = db
        .query_row(
            "SELECT count(*) FROM deliveries WHERE hook = 'policy' AND state = 'done'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(policy_deliveries, Bridge::ALL.len() as i64);
}

#[test]
fn a_forwarding_hook_fails_closed_on_a_gate_when_the_service_is_gone() {
    let dir = agent();
    succeeded(&mut hookrt(&["build", dir.to_str().unwrap()]));
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    for bridge in [
        Bridge::named("codex").unwrap(),
        Bridge::named("gemini").unwrap(),
        Bridge::named("cursor").unwrap(),
    ] {
        let (event, input, _) = dangerous(bridge);
        let out = with_stdin(
            hookrt(&[
                "hook",
                "--agent",
                bridge.name(),
                dir.to_str().unwrap(),
                "--http",
                &url,
            ]),
            &input.to_string(),
        );
        assert_eq!(out.status.code(), Some(2), "{} {event}", bridge.name());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("cannot reach hookrt serve"), "{err}");
    }
    // Not a gate: the agent shows the error and goes on.
    let mut stop: Value = serde_json::from_str(&agent_fixture("codex", "Stop")).unwrap();
    stop["session_id"] = "s".into();
    let out = with_stdin(
        hookrt(&[
            "hook",
            "--agent",
            "codex",
            dir.to_str().unwrap(),
            "--http",
            &url,
        ]),
        &stop.to_string(),
    );
    assert_eq!(out.status.code(), Some(1));
}

/// A command hook forwarding to `hookrt serve` answers what it answers on
/// its own, silence included: where an agent reads nothing as "no
/// opinion" the forward prints nothing for the route's `{}` (Antigravity
/// CLI denies a call on `{}`), and where it reads `{}` (Gemini CLI) `{}`.
#[test]
fn a_forwarding_hook_answers_a_call_no_hook_minds_as_the_command_does() {
    let dir = agent();
    succeeded(&mut hookrt(&["build", dir.to_str().unwrap()]));
    let server = crate::Server::start(&dir, &[]);
    let url = format!("http://{}", server.addr);
    let forwarding = Bridge::ALL
        .into_iter()
        .filter(|b| b.protocol().signature.is_none());
    for bridge in forwarding {
        let gate = tool_gate(bridge);
        let input = gate.input("ls -la");
        let alone = hook_answer(bridge, &dir, gate.event, &input, &[]);
        let forwarded = hook_answer(bridge, &dir, gate.event, &input, &["--http", &url]);
        assert_eq!(alone, forwarded, "{}", bridge.name());
    }
}
