//! The agents' hook routes, `POST /v1/<agent>` for each agent of the
//! registry (`Bridge::ALL`): Claude Code's and Copilot CLI's `http` hooks
//! post there, and so do the command hooks of the agents whose hooks are
//! commands only (`hookrt hook --agent NAME --http URL` forwards their
//! input here, so a fleet of agents shares one service and one journal).
//! The agent POSTs the hook input it would give a command hook on stdin;
//! the route runs the event through the one decide path
//! (`hookrt::front::decide`) and answers the JSON `hookrt hook --agent
//! NAME` would print (`hookrt::front::bridge`), within a budget below the
//! agent's own timeout.
//!
//! The agents read only a 2xx JSON body (anything else lets the call run),
//! so on a gate every refusal (a bad token, a rate limit, an unreadable
//! input, a full or stopping service, hooks past the budget) is answered
//! `200` with a deny that says why; other events get the usual error status
//! or `200 {}`. The gate is known before the body is read when the URL names
//! the event (`?event=PreToolUse`, as `hookrt install` writes it): Copilot's
//! input does not name its event, so its URL must (docs/serve.md).

use std::time::Duration;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hookrt::event::takes_context;
use hookrt::front::bridge::{Bridge, BridgeEvent};
use hookrt::front::decide::{Decided, Told, Undecided, decide};
use hookrt::front::record::{self, Recorded};
use hookrt::{EmitError, Envelope, EventClass, class_of};
use serde_json::json;

use crate::auth::Access;
use crate::error::{ApiError, closes};
use crate::ingest::BodyType;
use crate::routes::{AppState, Params, Shared, param, unavailable};
use crate::tally::{explain, status_of};

/// One agent's route answering one request.
struct Door<'a> {
    state: &'a AppState,
    bridge: Bridge,
    /// A signed source's `?on_failure=source`: a refusal is its error
    /// status, so the source's own failure handling decides (Anthropic's
    /// "Block the request" or "Allow the request"), not a deny.
    to_source: bool,
}

/// `POST /v1/<agent>[?event=NAME][&agent=ID][&budget_ms=MS][&receipt=true]`
/// (and, for a signed source, `[&on_failure=source]`):
/// one agent's hook input over HTTP. The metrics' endpoint label is the
/// agent's name, and so is the agent name hooks see when the request names
/// none.
pub(crate) async fn agent_hook(
    bridge: Bridge,
    State(state): State<Shared>,
    Query(query): Params,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let param = param(&query, &headers);
    let signed = param("receipt").as_deref() == Some("true");
    let door = Door {
        state: &state,
        bridge,
        to_source: bridge.protocol().signature.is_some()
            && param("on_failure").as_deref() == Some("source"),
    };
    let named = param("event");
    let agent = param("agent");
    let (access, event) = match door.read(&headers, body, named.as_deref(), agent).await {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    let BridgeEvent { name, envelope } = event;
    // The input decides from here: a gate by its own name.
    let gate = bridge.is_gate(&name).then_some(name.as_str());
    if !access.may_send(&envelope.coordinates.agent) {
        return door.refuse(gate, access.refuse_agent(&envelope.coordinates.agent));
    }
    let guard = match state.hooks().await {
        Ok(guard) => guard,
        Err(e) => return door.refuse(gate, e),
    };
    let Some(service) = guard.as_ref() else {
        return door.refuse(gate, unavailable());
    };
    let budget = match state.budget_of(param("budget_ms")) {
        Ok(b) => b,
        Err(e) => return door.refuse(gate, e),
    };
    // The agent's trace, when its request carries one (docs/telemetry.md).
    state.tap(&envelope, &headers);
    let observed = class_of(&envelope.kind) == EventClass::Observe;
    if observed && !takes_context(&envelope.kind) {
        return match service.emit(envelope).await {
            Ok(_) | Err(EmitError::Conflict { .. }) => axum::Json(door.silence()).into_response(),
            Err(e) => door.refuse(gate, refused(&e)),
        };
    }
    let receipt_of = signed.then(|| envelope.clone());
    let decided = decide(service, envelope, budget).await;
    door.answer(gate, &name, decided, receipt_of.as_ref())
}

impl Door<'_> {
    /// The request admitted, its body read and parsed as the agent's hook
    /// input; else the refusal, as the gate the entry names (`named`) or
    /// the raw input names needs it.
    async fn read(
        &self,
        headers: &HeaderMap,
        body: Body,
        named: Option<&str>,
        agent: Option<String>,
    ) -> Result<(Access, BridgeEvent), Response> {
        let (bridge, state) = (self.bridge, self.state);
        // A signed source proves itself with its body's signature, read
        // below; the others with a token, before the body is read.
        let signed = bridge.protocol().signature.is_some();
        // The gate the hook entry serves, before anything is read. A signed
        // source's frames are gates (but for a type a later protocol may
        // add), each refused with the same verdict: refused before it is
        // read, a frame is refused as a gate.
        let gate = bridge
            .gate_served(named, None)
            .or_else(|| bridge.gates().first().copied().filter(|_| signed));
        let refuse = |e: ApiError| self.refuse(gate, e);
        // A token is checked (and its bucket charged) before the body is
        // read; a signature after, so a forged request spends nothing of
        // the signed source's rate limit.
        let tokened = (!signed)
            .then(|| state.admit(headers))
            .transpose()
            .map_err(refuse)?;
        match state.body_type(headers).map_err(refuse)? {
            BodyType::Json => {}
            _ => {
                return Err(refuse(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "the agent's hook input is taken as application/json",
                    "send it with Content-Type application/json",
                )));
            }
        }
        let (body, mut charge) = state.read(headers, body).await.map_err(refuse)?;
        let sent = match signed {
            true => Some(state.signed(headers, &body).map_err(refuse)?),
            false => None,
        };
        let access = match tokened {
            Some(access) => access,
            None => state.admit_signed().map_err(refuse)?,
        };
        state.charge_parse(&mut charge, &body).map_err(refuse)?;
        let text = String::from_utf8_lossy(&body);
        let gate = bridge
            .gate_served(named, Some(&text))
            .or(gate.filter(|_| signed));
        if let Some((path, redactor)) = &state.record {
            let name = agent.as_deref();
            let recorded = Recorded::new(bridge, name, named, "http", &text, redactor);
            if let Err(e) = record::append(path, &recorded) {
                tracing::warn!(error = %e, "recording an agent's input failed; it is decided all the same");
            }
        }
        let agent = agent.unwrap_or_else(|| bridge.name().to_owned());
        let read = match sent {
            // When the source says it sent it: its retry is the same event.
            Some(sent) => bridge.read_sent_at(&agent, &text, named, "http", sent),
            None => bridge.read(&agent, &text, named, "http"),
        };
        match read {
            Ok(event) => Ok((access, event)),
            Err(e) => {
                state.metrics.refuse("malformed");
                let e = ApiError::bad_request(
                    e.to_string(),
                    "send the agent's hook input as it is, and name the event with ?event= where the input does not (docs/agents.md)",
                )
                .with_code("malformed_input");
                Err(self.refuse(gate, e))
            }
        }
    }

    /// What the agent is answered when there is nothing to say: its own
    /// no-opinion form, else `{}`.
    fn silence(&self) -> serde_json::Value {
        self.bridge.no_opinion().unwrap_or_else(|| json!({}))
    }

    /// A gate's refusal in the agent's words (a 200 the agent blocks on),
    /// or, for any other event, the error.
    fn refuse(&self, gate: Option<&str>, e: ApiError) -> Response {
        let Some(name) = gate.filter(|_| !self.to_source) else {
            return e.into_response();
        };
        self.state.metrics.decision(self.bridge.name(), "failed");
        let mut answer = axum::Json(self.bridge.refusal(name, &e.error)).into_response();
        // The deny is a 200 for the agent; the connection ends as the
        // refusal's own status would end it.
        if closes(e.status) {
            answer
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        answer
    }

    /// What the agent reads back after event `name`: its hooks' answer,
    /// with a signed receipt of `receipt_of` when asked, or a refusal.
    fn answer(
        &self,
        gate: Option<&str>,
        name: &str,
        decided: Decided,
        receipt_of: Option<&Envelope>,
    ) -> Response {
        let endpoint = self.bridge.name();
        match decided.told(self.bridge, name) {
            Ok(Told {
                answer, resolution, ..
            }) => {
                self.state.metrics.decision(endpoint, "resolved");
                let mut response =
                    axum::Json(answer.unwrap_or_else(|| self.silence())).into_response();
                // A signed receipt rides in a header: the body is the agent's.
                if let Some(envelope) = receipt_of
                    && let Some(resolution) = &resolution
                    && let Some(receipt) = self.state.signed_receipt(envelope, resolution)
                    && let Ok(value) = HeaderValue::from_str(&receipt.to_string())
                {
                    response.headers_mut().insert("hookrt-receipt", value);
                }
                response
            }
            Err(Undecided::Duplicate) => self.refuse(gate, duplicate()),
            Err(Undecided::Refused(e)) => self.refuse(gate, refused(&e)),
            Err(Undecided::TimedOut(budget)) => {
                self.state.metrics.decision(endpoint, "timed_out");
                if gate.is_none() {
                    // Not a gate: the event is taken and its hooks go on;
                    // what they would add (context, a continue) came too
                    // late, and nothing is the safe answer (a stop is let
                    // stop).
                    tracing::warn!(event = %name, "hooks did not answer within the budget ({} ms); answered nothing", budget.as_millis());
                    return axum::Json(self.silence()).into_response();
                }
                self.refuse(gate, timed_out(budget))
            }
        }
    }
}

impl AppState {
    /// How long an agent's route waits for hooks: `budget_ms` when given,
    /// at most the server's decide timeout (the default).
    fn budget_of(&self, budget_ms: Option<String>) -> Result<Duration, ApiError> {
        match budget_ms {
            None => Ok(self.decide_timeout),
            // Digits past u64: more than the server's timeout, which bounds it.
            Some(ms) if !ms.is_empty() && ms.bytes().all(|b| b.is_ascii_digit()) => {
                let ms = ms.parse::<u64>().unwrap_or(u64::MAX);
                Ok(Duration::from_millis(ms).min(self.decide_timeout))
            }
            Some(_) => Err(ApiError::bad_request(
                "`budget_ms` is not a whole number of milliseconds",
                "give `budget_ms` as digits, e.g. `budget_ms=5000`, or leave it out",
            )),
        }
    }
}

/// The error of an event whose id was taken before.
fn duplicate() -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "this event's id was taken before; its decision is not made again",
        "look for something else posting hookrt events with the agent's ids (`claude-`, `copilot-`)",
    )
    .with_code("duplicate")
}

/// The error of a gate its hooks did not decide within `budget`.
fn timed_out(budget: Duration) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "hooks did not decide within the budget ({} ms)",
            budget.as_millis()
        ),
        "make the hooks faster, or raise --decide-timeout-ms and the hook entry's timeout",
    )
    .with_code("timed_out")
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
