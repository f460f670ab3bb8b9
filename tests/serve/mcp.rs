//! hookrt's MCP interceptors (SEP-2624, a draft) driven by a real MCP
//! client, the official Rust SDK's (rmcp), as a host or gateway drives its
//! interceptors: over a child's stdio (`hookrt mcp DIR`) and over
//! streamable HTTP (`hookrt serve`'s `/mcp`, behind its tokens). The folder's
//! policy refuses `rm -rf` as an invalid call, lets `ls` through, a
//! rewriting hook's rewrite comes back from the mutator, a call the hooks
//! let run only rewritten is not valid as it is, and every invocation is an
//! event of the `mcp` plane in the journal.

use std::path::Path;

use rmcp::ErrorData;
use rmcp::ServiceExt;
use rmcp::model::{ClientRequest, CustomRequest, CustomResult, ServerResult};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};

use crate::claude_code::answering_agent;
use crate::common::succeeded;
use crate::{Server, TOKEN, agent, hookrt, request};

type Client = RunningService<RoleClient, ()>;

/// The extension key the interceptors are advertised under.
const EXTENSION: &str = "io.modelcontextprotocol/interceptors";

fn tokio() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// `method` with `params`: the result, or the server's JSON-RPC error.
async fn ask(client: &Client, method: &str, params: Value) -> Result<Value, ErrorData> {
    let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
    match client.peer().send_request(request).await {
        Ok(ServerResult::CustomResult(CustomResult(v))) => Ok(v),
        // An empty object comes back as rmcp's empty result.
        Ok(other) => Ok(serde_json::to_value(other).unwrap()),
        Err(ServiceError::McpError(e)) => Err(e),
        Err(e) => panic!("{method}: {e}"),
    }
}

/// An invocation of `interceptor` on a `tools/call` request running
/// `command` in the shell tool `run_command`.
fn call(interceptor: &str, command: &str) -> Value {
    json!({"name": interceptor, "event": "tools/call", "phase": "request",
        "payload": {"name": "run_command", "arguments": {"command": command}},
        "context": {"timestamp": "2026-12-07T12:00:00Z", "principal": {"type": "user", "id": "alice"}},
        "timeoutMs": 10000})
}

/// What every transport shows with the example agent's policy: the
/// extension advertised, both interceptors listed, `rm -rf` invalid, `ls`
/// valid (unless `rewritten`: hooks that rewrite every command let it run
/// only rewritten), a response seen, and the draft's errors.
async fn the_policy_decides(client: &Client, rewritten: bool) {
    let info = client.peer().peer_info().expect("initialized");
    let caps = serde_json::to_value(&info.capabilities).unwrap();
    assert_eq!(
        caps["extensions"][EXTENSION]["supportedEvents"],
        json!(["tools/call"]),
        "{caps}"
    );
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("hookrt")
    );
    let listed = ask(client, "interceptors/list", json!({})).await.unwrap();
    let names: Vec<(&str, &str)> = listed["interceptors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["name"].as_str().unwrap(), i["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [("hookrt", "validation"), ("hookrt-rewrite", "mutation")]
    );
    let none = ask(client, "interceptors/list", json!({"event": "prompts/get"})).await;
    assert_eq!(none.unwrap(), json!({"interceptors": []}));

    let denied = ask(
        client,
        "interceptor/invoke",
        call("hookrt", "rm -rf build/"),
    )
    .await
    .unwrap();
    assert_eq!(
        (&denied["interceptor"], &denied["type"], &denied["phase"]),
        (&json!("hookrt"), &json!("validation"), &json!("request"))
    );
    assert_eq!(
        (&denied["valid"], &denied["severity"]),
        (&json!(false), &json!("error"))
    );
    let why = denied["messages"][0]["message"].as_str().unwrap();
    assert!(why.contains("recursive forced delete"), "{denied}");
    // The draft's other spelling of the method answers the same.
    let ls = ask(client, "interceptors/invoke", call("hookrt", "ls -la"))
        .await
        .unwrap();
    assert_eq!(ls["valid"], !rewritten, "{ls}");
    assert_eq!(ls.get("messages").is_some(), rewritten, "{ls}");
    let seen = ask(
        client,
        "interceptor/invoke",
        json!({"name": "hookrt", "event": "tools/call", "phase": "response",
            "payload": {"content": [{"type": "text", "text": "done"}], "isError": false}}),
    )
    .await
    .unwrap();
    assert_eq!(
        (&seen["valid"], &seen["phase"]),
        (&json!(true), &json!("response"))
    );

    let unknown = ask(client, "interceptor/invoke", call("nope", "ls"))
        .await
        .unwrap_err();
    assert_eq!(
        (unknown.code.0, unknown.message.as_ref()),
        (-32602, "Interceptor 'nope' not found")
    );
    let unhooked = ask(
        client,
        "interceptor/invoke",
        json!({"name": "hookrt", "event": "resources/read", "phase": "request", "payload": {}}),
    )
    .await
    .unwrap_err();
    assert_eq!(unhooked.code.0, -32602, "{unhooked:?}");
    // A call the interceptor cannot read is refused, not let through.
    let unreadable = ask(
        client,
        "interceptor/invoke",
        json!({"name": "hookrt", "event": "tools/call", "phase": "request", "payload": {"arguments": {}}}),
    )
    .await
    .unwrap();
    assert_eq!(unreadable["valid"], false, "{unreadable}");
    let other = ask(client, "tools/list", json!({})).await.unwrap_err();
    assert_eq!(other.code.0, -32601, "{other:?}");
}

/// The events the journal at `path` holds: agent, kind, bridge event and
/// transport, in order.
fn journaled(path: &Path) -> Vec<(String, String, String, String)> {
    let db = rusqlite::Connection::open(path).unwrap();
    let mut rows = db
        .prepare("SELECT agent, envelope FROM events ORDER BY seq")
        .unwrap();
    rows.query_map([], |r| {
        let envelope: String = r.get(1)?;
        let e: Value = serde_json::from_str(&envelope).unwrap();
        Ok((
            r.get(0)?,
            e["kind"].as_str().unwrap_or_default().to_owned(),
            e["data"]["bridge"]["event"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            e["data"]["bridge"]["transport"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn an_mcp_client_over_stdio_is_answered_by_the_folders_hooks_and_each_invocation_is_journaled() {
    let dir = agent();
    succeeded(&mut hookrt(&["build", dir.to_str().unwrap()]));
    let scratch = tempfile::tempdir().unwrap();
    let journal = scratch.path().join("journal.db");
    let command = hookrt(&[
        "mcp",
        dir.to_str().unwrap(),
        "--journal",
        journal.to_str().unwrap(),
    ]);
    tokio().block_on(async {
        let child = TokioChildProcess::new(tokio::process::Command::from(command)).unwrap();
        let client = ().serve(child).await.expect("hookrt mcp initializes");
        the_policy_decides(&client, false).await;
        client.cancel().await.unwrap();
    });
    // `--audit`: both described in `audit` mode, a shadow rollout; the
    // verdict is the same, the invoker only records it.
    let audit = hookrt(&["mcp", dir.to_str().unwrap(), "--audit"]);
    tokio().block_on(async {
        let child = TokioChildProcess::new(tokio::process::Command::from(audit)).unwrap();
        let client = ().serve(child).await.expect("hookrt mcp --audit initializes");
        let listed = ask(&client, "interceptors/list", json!({})).await.unwrap();
        for i in listed["interceptors"].as_array().unwrap() {
            assert_eq!(i["mode"], "audit", "{i}");
        }
        let denied = ask(
            &client,
            "interceptor/invoke",
            call("hookrt", "rm -rf build/"),
        )
        .await
        .unwrap();
        assert_eq!(denied["valid"], false, "{denied}");
        client.cancel().await.unwrap();
    });
    let events = journaled(&journal);
    let mcp: Vec<_> = events.iter().filter(|e| e.0 == "mcp").collect();
    // rm -rf, ls and the response: each an event (the unreadable call, the
    // unknown interceptor and the unhooked event are refused unread).
    assert_eq!(mcp.len(), 3, "{events:#?}");
    assert_eq!(
        (mcp[0].1.as_str(), mcp[0].2.as_str(), mcp[0].3.as_str()),
        ("actions.requested", "tools/call", "stdio")
    );
    // A result names no call: observed as it is, not as a call's result.
    assert_eq!(
        (mcp[2].1.as_str(), mcp[2].2.as_str()),
        ("custom.mcp.tool_result", "tools/call:response")
    );
    // The proof of coverage knows the plane: its calls, which gate decided.
    let out = hookrt(&["audit", "coverage", journal.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let session = report["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["agent"] == "mcp")
        .unwrap_or_else(|| panic!("no MCP session: {report}"));
    let calls = session["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{session}");
    assert_eq!(
        (
            &calls[0]["tool"],
            &calls[0]["verdict"],
            &calls[0]["decided_by"]
        ),
        (&json!("run_command"), &json!("deny"), &json!("policy")),
        "{session}"
    );
}

#[test]
fn an_mcp_client_over_streamable_http_needs_the_servers_token_and_its_rewrites_come_back() {
    let folder = answering_agent();
    succeeded(&mut hookrt(&["build", folder.path().to_str().unwrap()]));
    let bound = "bound-token-0123456789abcdef";
    let server = Server::with_tokens(
        folder.path(),
        &format!("{TOKEN} admin\n{bound} agent=someone-else\n"),
        &["--decide-timeout-ms", "30000", "--body-timeout-ms", "300"],
    );
    let url = format!("http://{}/mcp", server.addr);
    // No token, a token bound to other agents: refused before MCP is spoken.
    let initialize = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let accept = ("Accept", "application/json, text/event-stream");
    let json = ("Content-Type", "application/json");
    let anonymous = request(&server.addr, "POST", "/mcp", &[accept, json], initialize);
    assert_eq!(anonymous.status, 401, "{}", anonymous.body);
    let auth = format!("Bearer {bound}");
    let other = request(
        &server.addr,
        "POST",
        "/mcp",
        &[accept, json, ("Authorization", &auth)],
        initialize,
    );
    assert_eq!(other.status, 403, "{}", other.body);
    assert!(other.body.contains("agent `mcp`"), "{}", other.body);
    // A body that stops coming is cut at the server's body timeout, as on
    // every route (the MCP server would wait for it).
    let auth = format!("Bearer {TOKEN}");
    let cut = crate::request_cut(
        &server.addr,
        "/mcp",
        &[accept, json, ("Authorization", &auth)],
        b"{\"jsonrpc\":",
        100,
    );
    assert_eq!(cut.status, 408, "{}", cut.body);
    tokio().block_on(async {
        let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).auth_header(TOKEN);
        let client =
            ().serve(StreamableHttpClientTransport::from_config(config))
                .await
                .expect("the MCP client initializes over streamable HTTP");
        the_policy_decides(&client, true).await;
        // The rewriting hook's rewrite comes back from the mutator, in the
        // payload's own shape.
        let mut rewrite = call("hookrt-rewrite", "ls");
        rewrite["payload"] = json!({"method": "tools/call",
            "params": {"name": "run_command", "arguments": {"command": "ls"}}});
        let rewritten = ask(&client, "interceptor/invoke", rewrite).await.unwrap();
        assert_eq!(rewritten["modified"], true, "{rewritten}");
        assert_eq!(
            rewritten["payload"]["params"]["arguments"]["command"],
            "ls --dry-run"
        );
        assert_eq!(rewritten["payload"]["params"]["name"], "run_command");
        // The validator refuses a call the hooks let run only rewritten.
        let as_is = ask(&client, "interceptor/invoke", call("hookrt", "ls"))
            .await
            .unwrap();
        assert_eq!(as_is["valid"], false, "{as_is}");
        assert!(
            as_is["messages"][0]["message"]
                .as_str()
                .unwrap()
                .contains("allowed this only rewritten"),
            "{as_is}"
        );
        // The mutator cannot refuse but by failing: the draft's error.
        let failed = ask(
            &client,
            "interceptor/invoke",
            call("hookrt-rewrite", "rm -rf /"),
        )
        .await
        .unwrap_err();
        assert_eq!(
            (failed.code.0, failed.message.as_ref()),
            (-32603, "Interceptor execution failed")
        );
        let reason = failed.data.unwrap()["reason"].as_str().unwrap().to_owned();
        assert!(reason.contains("recursive forced delete"), "{reason}");
        client.cancel().await.unwrap();
    });
    let (clean, _) = server.terminate();
    assert!(clean);
}
