//! The agents' hook routes: `POST /v1/claude-code` (Claude Code's `http`
//! hooks), `/v1/copilot` (Copilot CLI's), and `/v1/codex`, `/v1/gemini`,
//! `/v1/cursor` for the agents whose hooks are commands only (`hookrt hook
//! --agent NAME --http URL` forwards their input here, so a fleet of agents
//! shares one service and one journal). The agent POSTs the hook input it
//! would give a command hook on stdin; the route runs the event through the
//! service and answers the JSON `hookrt hook --agent NAME` would print
//! (`hookrt::front::bridge`), within a budget below the agent's own
//! timeout.
//!
//! The agents read only a 2xx JSON body: a non-2xx answer, a refused
//! connection or a timeout is a non-blocking error and the call runs. So
//! for a gate (the tool calls, permission requests, prompts, compactions,
//! tasks and config changes the agent lets hooks block) every refusal (a
//! bad token, a rate limit, an unreadable input, a full or stopping
//! service, hooks past the budget) is answered `200` with a deny that says
//! why: the route fails closed. Other events get the usual error status (a
//! non-blocking error the agent shows), or `200 {}` once their hooks ran
//! or the budget passed (what they would add came too late: nothing is the
//! safe answer, and a stop is let stop).
//!
//! The gate is known before the body is read when the hook entry's URL says
//! which event it serves (`?event=PreToolUse`, as `hookrt install` writes
//! it), so even a request refused for its token is answered as its gate
//! needs. Copilot's input does not name its event: its URL must.

use std::time::Duration;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hookrt::event::takes_context;
use hookrt::front::bridge::{Bridge, BridgeEvent};
use hookrt::{EmitError, EventClass, class_of};
use serde_json::json;

use crate::error::{ApiError, closes};
use crate::ingest::BodyType;
use crate::routes::{Params, Shared, param, unavailable};
use crate::tally::{explain, status_of};

/// `POST /v1/claude-code[?event=NAME][&agent=ID][&budget_ms=MS]`.
pub(crate) async fn claude_code(
    state: State<Shared>,
    query: Params,
    headers: HeaderMap,
    body: Body,
) -> Response {
    agent_hook(Bridge::ClaudeCode, state, query, headers, body).await
}

/// `POST /v1/copilot?event=NAME[&agent=ID][&budget_ms=MS]`.
pub(crate) async fn copilot(
    state: State<Shared>,
    query: Params,
    headers: HeaderMap,
    body: Body,
) -> Response {
    agent_hook(Bridge::Copilot, state, query, headers, body).await
}

/// `POST /v1/codex[?event=NAME][&agent=ID][&budget_ms=MS]`.
pub(crate) async fn codex(
    state: State<Shared>,
    query: Params,
    headers: HeaderMap,
    body: Body,
) -> Response {
    agent_hook(Bridge::Codex, state, query, headers, body).await
}

/// `POST /v1/gemini[?event=NAME][&agent=ID][&budget_ms=MS]`.
pub(crate) async fn gemini(
    state: State<Shared>,
    query: Params,
    headers: HeaderMap,
    body: Body,
) -> Response {
    agent_hook(Bridge::Gemini, state, query, headers, body).await
}

/// `POST /v1/cursor[?event=NAME][&agent=ID][&budget_ms=MS]`.
pub(crate) async fn cursor(
    state: State<Shared>,
    query: Params,
    headers: HeaderMap,
    body: Body,
) -> Response {
    agent_hook(Bridge::Cursor, state, query, headers, body).await
}

/// One agent's hook input over HTTP: the metrics' endpoint label is the
/// agent's name, and so is the agent name hooks see when the request
/// names none.
async fn agent_hook(
    bridge: Bridge,
    State(state): State<Shared>,
    Query(query): Params,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let endpoint = bridge.name();
    let param = param(&query, &headers);
    let signed = param("receipt").as_deref() == Some("true");
    // The gate the hook entry serves, before anything is read.
    let named = param("event");
    let mut gate = named.clone().filter(|e| bridge.is_gate(e));
    let refuse = |gate: Option<&str>, e: ApiError| -> Response {
        match gate {
            Some(name) => {
                state.metrics.decision(endpoint, "failed");
                let mut answer = axum::Json(bridge.refusal(name, &e.error)).into_response();
                // The deny is a 200 for the agent; the connection ends as
                // the refusal's own status would end it.
                if closes(e.status) {
                    answer
                        .headers_mut()
                        .insert(header::CONNECTION, HeaderValue::from_static("close"));
                }
                answer
            }
            None => e.into_response(),
        }
    };
    let access = match state.admit(&headers) {
        Ok(a) => a,
        Err(e) => return refuse(gate.as_deref(), e),
    };
    match state.body_type(&headers) {
        Ok(BodyType::Json) => {}
        Ok(_) => {
            let e = ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the agent's hook input is taken as application/json",
                "send it with Content-Type application/json",
            );
            return refuse(gate.as_deref(), e);
        }
        Err(e) => return refuse(gate.as_deref(), e),
    }
    let (body, mut charge) = match state.read(&headers, body).await {
        Ok(b) => b,
        Err(e) => return refuse(gate.as_deref(), e),
    };
    if let Err(e) = state.charge_parse(&mut charge, &body) {
        return refuse(gate.as_deref(), e);
    }
    let text = String::from_utf8_lossy(&body);
    if gate.is_none() {
        gate = bridge.gate_named(&text).map(str::to_owned);
    }
    let agent = param("agent").unwrap_or_else(|| bridge.name().to_owned());
    let BridgeEvent { name, envelope } = match bridge.read(&agent, &text, named.as_deref(), "http")
    {
        Ok(e) => e,
        Err(e) => {
            state.metrics.refuse("malformed");
            let e = ApiError::bad_request(
                e.to_string(),
                "send the agent's hook input as it is, and name the event with ?event= where the input does not (docs/agents.md)",
            )
            .with_code("malformed_input");
            return refuse(gate.as_deref(), e);
        }
    };
    // The input decides from here: a gate by its own name.
    let gate = bridge.is_gate(&name).then_some(name.as_str());
    if !access.may_send(&envelope.coordinates.agent) {
        return refuse(gate, access.refuse_agent(&envelope.coordinates.agent));
    }
    let guard = state.service.read().await;
    let Some(service) = guard.as_ref() else {
        return refuse(gate, unavailable());
    };
    let budget = match param("budget_ms") {
        None => state.decide_timeout,
        // Digits past u64: more than the server's timeout, which bounds it.
        Some(ms) if !ms.is_empty() && ms.bytes().all(|b| b.is_ascii_digit()) => {
            let ms = ms.parse::<u64>().unwrap_or(u64::MAX);
            Duration::from_millis(ms).min(state.decide_timeout)
        }
        Some(_) => {
            let e = ApiError::bad_request(
                "`budget_ms` is not a whole number of milliseconds",
                "give `budget_ms` as digits, e.g. `budget_ms=5000`, or leave it out",
            );
            return refuse(gate, e);
        }
    };
    // Each reading of an input is an event of its own (`bridge::hook_input`): an
    // id taken before is not Claude Code's doing (a gate is refused; the
    // rest are not delivered twice).
    let duplicate = || {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "this event's id was taken before; its decision is not made again",
            "look for something else posting hookrt events with the agent's ids (`claude-`, `copilot-`)",
        )
        .with_code("duplicate")
    };
    // The agent's trace, when its request carries one (docs/telemetry.md).
    state.tap(&envelope, &headers);
    let observed = class_of(&envelope.kind) == EventClass::Observe;
    if observed && !takes_context(&envelope.kind) {
        return match service.emit(envelope).await {
            Ok(_) | Err(EmitError::Conflict { .. }) => axum::Json(json!({})).into_response(),
            Err(e) => refuse(gate, refused(&e)),
        };
    }
    let envelope_for_receipt = envelope.clone();
    match tokio::time::timeout(budget, service.resolve(envelope)).await {
        Ok(Err(EmitError::Conflict { .. })) => refuse(gate, duplicate()),
        Ok(Ok(reply)) => {
            // An observe event no hook added context to resolves to nothing.
            if reply.resolution.is_none() && !observed {
                return refuse(gate, duplicate());
            }
            state.metrics.decision(endpoint, "resolved");
            let answer = bridge
                .answer(&name, reply.resolution.as_ref())
                .unwrap_or_else(|| json!({}));
            let mut response = axum::Json(answer).into_response();
            // A signed receipt rides in a header: the body is the agent's.
            if signed
                && let Some(resolution) = &reply.resolution
                && let Some(receipt) = state.signed_receipt(&envelope_for_receipt, resolution)
                && let Ok(value) = axum::http::HeaderValue::from_str(&receipt.to_string())
            {
                response.headers_mut().insert("hookrt-receipt", value);
            }
            response
        }
        Ok(Err(e)) => refuse(gate, refused(&e)),
        Err(_) => {
            state.metrics.decision(endpoint, "timed_out");
            if gate.is_none() {
                // Not a gate: the event is taken and its hooks go on; what
                // they would add (context, a continue) came too late, and
                // nothing is the safe answer (a stop is let stop).
                tracing::warn!(event = %name, "hooks did not answer within the budget ({} ms); answered nothing", budget.as_millis());
                return axum::Json(json!({})).into_response();
            }
            let e = ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "hooks did not decide within the budget ({} ms)",
                    budget.as_millis()
                ),
                "make the hooks faster, or raise --decide-timeout-ms and the hook entry's timeout",
            )
            .with_code("timed_out");
            refuse(gate, e)
        }
    }
}

/// The error of an event the service refused.
fn refused(e: &EmitError) -> ApiError {
    let (code, fix) = explain(e);
    let code = match e {
        EmitError::Invalid(_) => "invalid_envelope",
        _ => code,
    };
    ApiError::new(status_of(e), e.to_string(), fix).with_code(code)
}
