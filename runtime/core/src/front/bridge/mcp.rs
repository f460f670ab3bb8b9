//! MCP interceptors (SEP-2624, a draft of 2026-07-17, formerly SEP-1763):
//! a plane rather than an agent. hookrt's interceptor server (`hookrt-mcp`:
//! `hookrt mcp` over stdio, `hookrt serve`'s `/mcp`) hands each
//! `interceptor/invoke` to the hooks as one input of this protocol,
//! `{"hook", "interceptor", "phase", "sessionId", "payload", "config",
//! "context"}`: `hook` is [`VALIDATE`] (the validator `hookrt` on a
//! `tools/call` request), [`REWRITE`] (the mutator `hookrt-rewrite`) or
//! [`RESPONSE`] (the validator on a response); `sessionId` the invoker's
//! `context.sessionId`, else the MCP session's.
//!
//! The answers are the bodies of the invocations' results, which the
//! server completes: `{"valid": false, "severity": "error", "messages"}`
//! (with the `arguments` the hooks would run, when they let the call run
//! only rewritten), `{"modified": true, "arguments"}`, or `{"failed":
//! reason}` where the mutator must fail ("Interceptor execution failed").
//! Nothing to say is a valid call, an unmodified payload.
//!
//! In full: docs/agents.md, "MCP interceptors (`front/bridge/mcp.rs`)";
//! ADR 0011.

use serde_json::{Map, Value, json};

use super::protocol::{Mapped, Missing, OpenApi, Protocol, Reading, Silence};
use super::reply;
use crate::delivery::record::Resolution;

/// The validator's event on a `tools/call` request.
pub const VALIDATE: &str = "tools/call";
/// The mutator's event on a `tools/call` request.
pub const REWRITE: &str = "tools/call:rewrite";
/// The validator's event on a `tools/call` response.
pub const RESPONSE: &str = "tools/call:response";

/// Every event an invocation is handed over as, and its kind.
const MCP_EVENTS: [(&str, &str); 3] = [
    (VALIDATE, "actions.requested"),
    (REWRITE, "actions.requested"),
    // A result names no call (the invocation does not say which request it
    // answers): observed as it is, not as a call's result, which would
    // stand for a call no gate decided.
    (RESPONSE, "custom.mcp.tool_result"),
];

/// Both request events gate the call.
const MCP_GATES: [&str; 2] = [VALIDATE, REWRITE];

/// How an interceptor invocation reads.
pub(super) static PROTOCOL: Protocol = Protocol {
    agent: "mcp",
    label: "MCP interceptors",
    word: "mcp",
    events: &MCP_EVENTS,
    event_field: Some("hook"),
    session_fields: &["sessionId"],
    id_field: None,
    subagent_fields: None,
    kept: &["interceptor", "context"],
    dropped: &["config", "phase"],
    transcripts: None,
    map: mcp_data,
    turn_field: None,
    gates: &MCP_GATES,
    context_events: &[],
    answer: mcp_answer,
    refusal: mcp_refusal,
    silence: Silence::Nothing,
    // Every answer is a result body: a refusal too.
    refuses_in_json: &MCP_GATES,
    install: None,
    signature: None,
    openapi: OpenApi {
        operation_id: "mcpInterceptorHook",
        input_schema: "McpInterceptorHookInput",
    },
};

/// The `tools/call` params in an invocation's payload: the params
/// themselves (`{name, arguments}`, as the draft's conformance fixtures
/// send them) or the whole message (`{method, params}`, its example).
pub fn call_params(payload: &Value) -> &Value {
    match payload.get("method") {
        Some(_) => payload.get("params").unwrap_or(&Value::Null),
        None => payload,
    }
}

fn mcp_data(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing> {
    let missing = |field: &'static str| Missing {
        event: event.to_owned(),
        field,
    };
    let payload = fields.get("payload").ok_or_else(|| missing("payload"))?;
    // A call names no id the interceptor sees: the input's digest stands in.
    let call_id = id.stand_in("call");
    let step = (event != RESPONSE).then(|| call_id.clone());
    let data = match event {
        VALIDATE | REWRITE => {
            let params = call_params(payload);
            let tool = params.get("name").filter(|n| n.is_string());
            let tool = tool.cloned().ok_or_else(|| missing("payload.name"))?;
            let input = params
                .get("arguments")
                .cloned()
                .unwrap_or_else(|| json!({}));
            json!({"actions": [{"call_id": call_id, "tool": tool, "input": input}]})
        }
        RESPONSE => {
            // The `CallToolResult` (or the message holding it).
            let result = payload.get("result").unwrap_or(payload);
            let failed = result.get("isError") == Some(&Value::Bool(true));
            let status = if failed { "error" } else { "ok" };
            json!({"status": status, "output": result.get("content"),
                "structured": result.get("structuredContent")})
        }
        _ => Value::Object(fields.clone()),
    };
    Ok(Mapped {
        kind: kind.to_owned(),
        step,
        data,
    })
}

/// A validation's body that refuses the call with `why`.
fn invalid(why: &str) -> Value {
    json!({"valid": false, "severity": "error",
        "messages": [{"message": why, "severity": "error"}]})
}

/// The body of the invocation's result after event `name`; `None` when
/// there is nothing to say (a valid call, an unmodified payload).
fn mcp_answer(name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    let Some(Resolution::ToolApproval(t)) = resolution else {
        return None;
    };
    let call = t.calls.first()?;
    let refused = match reply::tool_decision(call) {
        Some(("deny", why)) => Some(why),
        // An interceptor asks no one.
        Some(("ask", question)) => Some(reply::cannot_ask(&question)),
        _ => None,
    };
    match (name, refused, &call.input) {
        (VALIDATE, Some(why), _) => Some(invalid(&why)),
        // A validator cannot change the call: the mutator, earlier in the
        // chain, does. A call the hooks let run only rewritten is not valid,
        // unless it already is as they would have it (the server compares
        // `arguments` with the call's, and drops them).
        (VALIDATE, None, Some(arguments)) => {
            let mut body = invalid(&reply::rewrite_refused(
                "a validator cannot change the call (the `hookrt-rewrite` mutation interceptor, earlier in the chain, can)",
            ));
            body["arguments"] = arguments.clone();
            Some(body)
        }
        // A mutator cannot refuse a call but by failing.
        (REWRITE, Some(why), _) => Some(json!({"failed": why})),
        (REWRITE, None, Some(arguments)) => Some(json!({"modified": true, "arguments": arguments})),
        _ => None,
    }
}

/// The answer that refuses gate `name`: the validator's invalid call, the
/// mutator's failure.
fn mcp_refusal(name: &str, reason: &str) -> Value {
    match name {
        REWRITE => json!({"failed": reply::refused(reason)}),
        _ => invalid(&reply::refused(reason)),
    }
}
