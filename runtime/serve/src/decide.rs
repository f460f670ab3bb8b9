//! `POST /v1/decide` and `/v1/edit`: one envelope, answered with what its
//! hooks decided, or failed closed in hookrt's JSON (the resolution that
//! refuses what the event asked, `hookrt::front::decide::refusing`). The
//! decision itself is `hookrt::front::decide::decide`, the one path the
//! agents' routes (`hook.rs`) take too.

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use hookrt::front::decide::{Decided, decide as decided_by_hooks, refusing};
use hookrt::{EmitError, Envelope, EventClass, Receipt, class_of};
use serde_json::json;

use crate::error::ApiError;
use crate::ingest::{BodyType, one_object};
use crate::routes::{AppState, Params, Shared, param, unavailable};
use crate::tally::{explain, status_of};

pub(crate) async fn decide(
    State(state): State<Shared>,
    Query(query): Params,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let signed = param(&query, &headers)("receipt").as_deref() == Some("true");
    resolve(state, headers, body, EventClass::Decision, signed).await
}

pub(crate) async fn edit(
    State(state): State<Shared>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    resolve(state, headers, body, EventClass::Edit, false).await
}

/// The one envelope a `/v1/decide` or `/v1/edit` body holds, of the class
/// the endpoint takes.
fn one_envelope(
    state: &AppState,
    body: &[u8],
    class: EventClass,
    endpoint: &str,
) -> Result<Envelope, ApiError> {
    let parsed = state.streams.one(body)?;
    let envelope: Envelope = parsed.map_err(|e| {
        state.metrics.refuse("malformed");
        ApiError::bad_request(
            e.to_string(),
            "fix the envelope (docs/envelope.md#validation)",
        )
        .with_code("malformed_envelope")
    })?;
    // `/v1/decide` takes decisions and gates: both are answered.
    let takes =
        |c: EventClass| c == class || (class == EventClass::Decision && c == EventClass::Gate);
    if !takes(class_of(&envelope.kind)) {
        let fix = match class_of(&envelope.kind) {
            EventClass::Decision | EventClass::Gate => {
                "POST decision and gate events (actions.requested, permission.requested, file.edit.requested, prompt.submitted, turn.stopping, ...) to /v1/decide"
            }
            EventClass::Edit => "POST step.completed and turn.completed to /v1/edit",
            EventClass::Observe => "POST observe events to /v1/events",
        };
        return Err(ApiError::bad_request(
            format!("`{}` is not a {endpoint} event", envelope.kind),
            fix,
        )
        .with_code("wrong_endpoint"));
    }
    Ok(envelope)
}

/// `/v1/decide` and `/v1/edit`: one event, answered with what its hooks
/// decided, or failed closed.
async fn resolve(
    state: Shared,
    headers: HeaderMap,
    body: Body,
    class: EventClass,
    signed: bool,
) -> Result<Response, ApiError> {
    let endpoint = if class == EventClass::Decision {
        "decide"
    } else {
        "edit"
    };
    let access = state.admit(&headers)?;
    if state.body_type(&headers)? != BodyType::Json {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("/v1/{endpoint} takes one envelope as application/json"),
            "send it with Content-Type application/json",
        ));
    }
    let (body, mut charge) = state.read(&headers, body).await?;
    state.charge_parse(&mut charge, one_object(&body)?.as_bytes())?;
    let envelope = one_envelope(&state, &body, class, endpoint)?;
    if !access.may_send(&envelope.coordinates.agent) {
        state.metrics.decision(endpoint, "failed");
        let refusal = access.refuse_agent(&envelope.coordinates.agent);
        let body = fail_closed_body(&envelope, refusal.code, &refusal.error, &refusal.fix);
        return Ok((refusal.status, axum::Json(body)).into_response());
    }
    let guard = state.hooks().await?;
    let service = guard.as_ref().ok_or_else(unavailable)?;
    let timeout = state.decide_timeout;
    state.tap(&envelope, &headers);
    let decided = decided_by_hooks(service, envelope.clone(), timeout).await;
    answered(&state, endpoint, &envelope, decided, signed)
}

/// The body of a `/v1/decide` or `/v1/edit` request whose event was
/// handed to the hooks: what they decided (with a signed receipt when
/// `signed`), or the refusal in hookrt's JSON.
fn answered(
    state: &AppState,
    endpoint: &str,
    envelope: &Envelope,
    decided: Decided,
    signed: bool,
) -> Result<Response, ApiError> {
    let failed = |status: StatusCode, result: &str, reason: String, receipt: Option<Receipt>| {
        state.metrics.decision(endpoint, result);
        let resolution = refusing(envelope, &reason);
        let body = json!({
            "receipt": receipt,
            "resolution": resolution,
            "failed_closed": true,
            "reason": reason,
        });
        Ok((status, axum::Json(body)).into_response())
    };
    match decided {
        Decided::Resolved {
            resolution: Some(resolution),
            receipt,
        } => {
            state.metrics.decision(endpoint, "resolved");
            let body = Resolved {
                failed_closed: false,
                receipt: &receipt,
                signed_receipt: signed.then(|| state.signed_receipt(envelope, &resolution)),
                resolution: &resolution,
            };
            Ok(axum::Json(body).into_response())
        }
        // `/v1/decide` and `/v1/edit` take no observe event: a resolution
        // of nothing is a duplicate's.
        Decided::Duplicate { receipt }
        | Decided::Resolved {
            resolution: None,
            receipt,
        } => failed(
            StatusCode::OK,
            "duplicate",
            format!(
                "event `{}` was already taken; its decision is not made again: send a new request under a new event id",
                envelope.id
            ),
            Some(receipt),
        ),
        Decided::Refused(EmitError::Invalid(e)) => {
            state.metrics.refuse("invalid");
            Err(ApiError::bad_request(
                e.to_string(),
                "fix the envelope (docs/envelope.md#validation)",
            )
            .with_code("invalid_envelope"))
        }
        Decided::Refused(e) => {
            state.metrics.refuse(explain(&e).0);
            state.metrics.decision(endpoint, "failed");
            let body = refused_body(envelope, &e);
            Ok((status_of(&e), axum::Json(body)).into_response())
        }
        Decided::TimedOut(timeout) => failed(
            StatusCode::OK,
            "timed_out",
            format!(
                "hooks did not decide within the server's decide timeout ({} ms); failing closed",
                timeout.as_millis()
            ),
            None,
        ),
    }
}

/// The body of a decision or edit its hooks resolved, written straight from
/// the reply (no JSON value built first): keys in the order the other
/// bodies' maps write them.
#[derive(serde::Serialize)]
struct Resolved<'a> {
    failed_closed: bool,
    receipt: &'a Receipt,
    resolution: &'a hookrt::Resolution,
    /// With `?receipt=true`: the signed receipt, `null` without a key.
    #[serde(skip_serializing_if = "Option::is_none")]
    signed_receipt: Option<Option<hookrt::journal::SignedReceipt>>,
}

/// The 503 (or 409) body of a decision or edit the service could not take: the
/// stable `code` (`shutting_down`, `journal`, ...), the error and its fix,
/// and the fail-closed resolution.
fn refused_body(envelope: &Envelope, e: &EmitError) -> serde_json::Value {
    let (code, fix) = explain(e);
    fail_closed_body(envelope, code, &e.to_string(), fix)
}

/// An error body (`code`, `error`, `fix`) with the fail-closed resolution
/// of `envelope`: every refusal of a decision or edit says what it refused.
fn fail_closed_body(envelope: &Envelope, code: &str, error: &str, fix: &str) -> serde_json::Value {
    let reason = format!("{error}; failing closed");
    json!({
        "code": code,
        "error": error,
        "fix": fix,
        "receipt": null,
        "resolution": refusing(envelope, &reason),
        "failed_closed": true,
        "reason": reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval() -> Envelope {
        Envelope::new(
            "evt_503",
            "actions.requested",
            hookrt::Coordinates::new("agent", "session", 1),
            json!({"actions": [{"call_id": "c1", "tool": "read_file", "input": {}}]}),
        )
        .expect("a valid envelope")
    }

    #[test]
    fn a_refused_decision_names_the_stable_code_not_the_message() {
        for (e, code) in [
            (EmitError::ShuttingDown("evt_503".into()), "shutting_down"),
            (
                EmitError::Journal {
                    id: "evt_503".into(),
                    message: "disk full".into(),
                },
                "journal",
            ),
        ] {
            let body = refused_body(&approval(), &e);
            assert_eq!(body["code"], code, "{body}");
            assert_eq!(body["error"], e.to_string());
            assert_eq!(body["failed_closed"], true);
            assert_eq!(body["reason"], format!("{e}; failing closed"));
            let verdict = &body["resolution"]["tool_approval"]["calls"][0]["verdict"]["answer"];
            assert_eq!(verdict, "deny", "{body}");
        }
    }
}
