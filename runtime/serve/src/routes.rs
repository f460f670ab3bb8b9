//! The HTTP endpoints' handlers and the state they share: `POST /v1/events`,
//! `/v1/admin/reload`, `GET /healthz`, `/readyz`, `/metrics` (`/v1/decide`
//! and `/v1/edit` are `decide.rs`, the agents' routes `hook.rs`; the router
//! over all of them, `router.rs`).
//!
//! Every endpoint but the two health checks needs a bearer token (unless the
//! server runs with `--insecure-no-auth`) and takes one request from the
//! token's rate-limit bucket. Bodies are read up to the server's limit
//! (413 past it) within the server-wide budget of bodies in flight
//! (`budget.rs`: 503 `server_busy` past it, the body unread), and what they
//! parse to is charged to it before it is parsed (`cost.rs`). Errors are
//! JSON `{ "code", "error", "fix" }`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hookrt::journal::Journal;
use hookrt::{Durability, EmitError, Envelope, HookService, PendingReceipt};
use serde_json::json;
use tokio::sync::RwLock;

use crate::auth::{Access, RateLimiter, Tokens, too_many};
use crate::budget::{Budget, Charge, PARSE_WINDOW};
use crate::cost;
use crate::error::{ApiError, BoxError};
use crate::ingest::{BodyType, Format, Forward, Streams, Tap, Text, body_type};
use crate::metrics::ServerMetrics;
use crate::parsing::Parsing;
use crate::reload::Reloader;
use crate::tally::Tally;

/// Receipts waited for at once within one request.
const RECEIPT_WINDOW: usize = 1024;

/// What every handler shares.
pub(crate) struct AppState {
    /// The service; `None` once shutdown has taken it.
    pub service: RwLock<Option<HookService>>,
    /// Ordinals and Eve streams across requests.
    pub streams: Streams,
    /// The exported metrics.
    pub metrics: Arc<ServerMetrics>,
    /// Accepted bearer tokens; `None` serves without authentication.
    pub tokens: Option<Tokens>,
    /// Per-token rate limits.
    pub limiter: RateLimiter,
    /// A read connection to the journal, for readiness and journal gauges.
    pub journal: Option<Mutex<Journal>>,
    /// Loads the agent folder again for hot reloads.
    pub reloader: Reloader,
    /// With `--signing-key`: what a signed receipt names, and the key
    /// (`?receipt=true` on `/v1/decide` and the agents' routes).
    pub receipts: Option<Arc<std::sync::RwLock<hookrt::journal::TrailContext>>>,
    /// How long `/v1/decide` and `/v1/edit` wait for hooks.
    pub decide_timeout: Duration,
    /// The largest body read.
    pub max_body_bytes: usize,
    /// How long a body may take to arrive.
    pub body_timeout: Duration,
    /// What bodies in flight, and the events parsed from them, may hold.
    pub budget: Arc<Budget>,
    /// What receipts say.
    pub durability: Durability,
    /// Set when shutdown began: not ready any more.
    pub stopping: AtomicBool,
    /// Events go there instead of the local service (`--nats`).
    pub forward: Option<Arc<dyn Forward>>,
    /// Told of each event taken, with the request's `traceparent`.
    pub tap: Option<Arc<dyn Tap>>,
    /// Where the agent routes record their inputs, and what masks them
    /// (the folder's redaction patterns when serve started).
    pub record: Option<(std::path::PathBuf, hookrt::sandbox::Redactor)>,
    /// What signed sources' requests are checked with (`webhooks.rs`).
    pub webhook_secrets: Option<crate::webhooks::WebhookSecrets>,
}

pub(crate) type Shared = Arc<AppState>;
pub(crate) type Params = Query<HashMap<String, String>>;

impl AppState {
    /// Checks the request's token, takes one request from its bucket, and
    /// says what the caller may do.
    pub(crate) fn admit(&self, headers: &HeaderMap) -> Result<Access, ApiError> {
        let (key, access) = match &self.tokens {
            Some(tokens) => {
                let key = tokens.check(headers)?;
                (key, tokens.access(key))
            }
            None => {
                crate::auth::loopback_only(headers)?;
                (0, Access::all())
            }
        };
        self.limiter.take(key).map_err(|wait| {
            self.metrics.rate_limited.inc();
            too_many(wait)
        })?;
        Ok(access)
    }

    /// Takes one request from the bucket of signed sources' requests, once
    /// their signature held ([`AppState::signed`]): they may send their own
    /// events, nothing else.
    pub(crate) fn admit_signed(&self) -> Result<Access, ApiError> {
        let key = self.tokens.as_ref().map_or(1, |t| t.len());
        self.limiter.take(key).map_err(|wait| {
            self.metrics.rate_limited.inc();
            too_many(wait)
        })?;
        Ok(Access {
            agents: None,
            admin: false,
        })
    }

    /// When `headers` sign `body` with a configured webhook secret, when
    /// the source says it sent it (after the Unix epoch), else the 401
    /// saying why.
    pub(crate) fn signed(&self, headers: &HeaderMap, body: &[u8]) -> Result<Duration, ApiError> {
        let Some(secrets) = &self.webhook_secrets else {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "this server has no webhook secret: a signed source's route refuses every request",
                "start hookrt serve with --webhook-secrets FILE holding the source's `whsec_` secret (docs/serve.md#signed-sources)",
            )
            .with_code("bad_signature"));
        };
        secrets.verify(headers, body).map(Duration::from_secs)
    }

    /// What the request's Content-Type says its body is: JSON or NDJSON,
    /// else 415; a server without tokens also needs one to be given.
    pub(crate) fn body_type(&self, headers: &HeaderMap) -> Result<BodyType, ApiError> {
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap_or("(not text)"));
        body_type(content_type, self.tokens.is_none())
    }

    /// Whether `headers` authenticate their request: a valid token, or,
    /// on a server without tokens, a loopback `Host` and no `Origin`.
    pub(crate) fn authenticates(&self, headers: &HeaderMap) -> bool {
        match &self.tokens {
            Some(tokens) => tokens.check(headers).is_ok(),
            None => crate::auth::loopback_only(headers).is_ok(),
        }
    }

    /// The body, up to the server's limit, within its timeout, and its
    /// charge to the budget: its declared length is taken before a byte is
    /// read (a body without one is charged as it comes), and a request the
    /// budget has no room for is refused at once (503 `server_busy`).
    pub(crate) async fn read(
        &self,
        headers: &HeaderMap,
        body: Body,
    ) -> Result<(Bytes, Charge), ApiError> {
        use http_body_util::BodyExt;
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if declared.is_some_and(|n| n > self.max_body_bytes) {
            return Err(self.too_large());
        }
        let declared = declared.unwrap_or(0);
        let mut charge = self.budget.try_charge(declared)?;
        let read = async {
            let mut body = body;
            let mut bytes = Vec::with_capacity(declared);
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| {
                    ApiError::bad_request(
                        format!("cannot read the body: {e}"),
                        "send the request again",
                    )
                    .with_code("unreadable_body")
                })?;
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let len = bytes.len() + data.len();
                if len > self.max_body_bytes {
                    return Err(self.too_large());
                }
                if len > charge.bytes() {
                    charge.try_grow(len - charge.bytes())?;
                }
                bytes.extend_from_slice(&data);
            }
            Ok(Bytes::from(bytes))
        };
        let Ok(read) = tokio::time::timeout(self.body_timeout, read).await else {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the body did not arrive within {} ms",
                    self.body_timeout.as_millis()
                ),
                "send the whole body at once, or raise the server's --body-timeout-ms",
            )
            .with_code("body_timeout"));
        };
        Ok((read?, charge))
    }

    fn too_large(&self) -> ApiError {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the body is larger than this server's limit of {} bytes",
                self.max_body_bytes
            ),
            "send the events in several smaller requests, or raise the server's --max-body-bytes",
        )
    }

    /// Charges what `text`, parsed as one event, would cost: 413
    /// `too_dense` past what one event may cost, 503 `server_busy` when the
    /// budget has no room.
    pub(crate) fn charge_parse(&self, charge: &mut Charge, text: &[u8]) -> Result<(), ApiError> {
        let cost = cost::parsed(text);
        if cost > PARSE_WINDOW {
            return Err(too_dense(cost));
        }
        charge.try_grow(cost)
    }

    /// The service an event goes to (`None` once shutdown took it), once
    /// the folder's changes are followed where the server follows them
    /// (`Reloader::follow`): a changed folder that does not load refuses
    /// the event.
    pub(crate) async fn hooks(
        &self,
    ) -> Result<tokio::sync::RwLockReadGuard<'_, Option<HookService>>, ApiError> {
        let guard = self.service.read().await;
        if let Some(service) = guard.as_ref() {
            self.reloader.follow(service, &self.metrics).await?;
        }
        Ok(guard)
    }

    /// Tells the tap, if any, that `envelope` is taken under `headers`' W3C
    /// `traceparent`.
    pub(crate) fn tap(&self, envelope: &Envelope, headers: &HeaderMap) {
        if let Some(tap) = &self.tap {
            let traceparent = headers.get("traceparent").and_then(|v| v.to_str().ok());
            tap.taken(envelope, traceparent);
        }
    }

    /// Journal status (pending deliveries, dead letters), read off the async threads.
    async fn journal_status(
        self: &Arc<Self>,
    ) -> Option<Result<hookrt::journal::JournalStatus, BoxError>> {
        self.journal.as_ref()?;
        let state = self.clone();
        let status = tokio::task::spawn_blocking(move || {
            let journal = state.journal.as_ref()?;
            let j = journal.lock().unwrap_or_else(|p| p.into_inner());
            Some(j.status().map_err(BoxError::from))
        })
        .await;
        status.unwrap_or_else(|e| Some(Err(e.into())))
    }
}

/// The 413 of a body that, parsed as one event, would cost `cost` bytes.
fn too_dense(cost: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "this event would take about {} KiB once parsed, above the {} KiB one event may (its JSON holds too many values for its size)",
            cost / 1024,
            PARSE_WINDOW / 1024
        ),
        "send fewer, larger values (a long string instead of many small numbers or objects), or split the data over several events",
    )
    .with_code("too_dense")
}

pub(crate) fn unavailable() -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "hookrt is shutting down",
        "send the request again to the restarted server",
    )
    .with_code("shutting_down")
}

pub(crate) async fn healthz() -> Response {
    axum::Json(json!({ "status": "ok" })).into_response()
}

pub(crate) async fn readyz(State(state): State<Shared>) -> Response {
    let stopping = state.stopping.load(Ordering::SeqCst);
    let journal = match state.journal_status().await {
        None => json!(null),
        Some(Ok(_)) => json!("open"),
        // Unauthenticated: say that, not where the journal is or why.
        Some(Err(e)) => {
            tracing::warn!(target: "hookrt", "readiness: the journal does not answer: {e}");
            json!({ "error": "the journal does not answer (the server's log says why)" })
        }
    };
    let ready = !stopping && !journal.is_object();
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let hooks = state.metrics.hooks.get();
    let body = json!({ "ready": ready, "hooks": hooks, "journal": journal, "stopping": stopping });
    (status, axum::Json(body)).into_response()
}

pub(crate) async fn metrics(
    State(state): State<Shared>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    state.admit(&headers)?.administer("read the metrics")?;
    if let Some(Ok(status)) = state.journal_status().await {
        state.metrics.journal_pending.set(status.pending);
        state.metrics.dead_letters.set(status.dead);
    }
    let text = state.metrics.encode();
    let content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    Ok(([(header::CONTENT_TYPE, content_type)], text).into_response())
}

/// Looks up a parameter in the query, then in an `X-Hookrt-<Name>` header.
pub(crate) fn param<'a>(
    query: &'a HashMap<String, String>,
    headers: &'a HeaderMap,
) -> impl Fn(&str) -> Option<String> + 'a {
    move |name: &str| {
        query.get(name).cloned().or_else(|| {
            headers
                .get(format!("x-hookrt-{name}"))
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        })
    }
}

pub(crate) async fn events(
    State(state): State<Shared>,
    Query(query): Params,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let access = state.admit(&headers)?;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let format = Format::choose(
        content_type,
        &param(&query, &headers),
        state.tokens.is_none(),
    )?;
    if let Format::Eve { agent, .. } = &format
        && !access.may_send(agent)
    {
        return Err(access.refuse_agent(agent));
    }
    let (body, _body_charge) = state.read(&headers, body).await?;
    let texts = state.streams.texts(&format, &body)?;
    let mut parsing = Parsing::start(&state.budget, &state.metrics, &body)?;
    if let Some(forward) = &state.forward {
        return forwarded(&state, &access, forward.as_ref(), &format, texts, parsing).await;
    }
    let guard = state.hooks().await?;
    let service = guard.as_ref().ok_or_else(unavailable)?;
    let mut tally = Tally::new(&texts);
    let mut pending: Vec<(usize, PendingReceipt)> = Vec::new();
    for item in texts {
        let i = item.index;
        let parsed = match item.text {
            Ok(text) => match parsing.room_for(text, &mut tally, &mut pending).await {
                Ok(()) => state.streams.item(&format, text),
                Err(cost) => {
                    tally.too_dense(&state.metrics, i, cost, PARSE_WINDOW);
                    continue;
                }
            },
            Err(e) => Err(e),
        };
        let envelope = match parsed {
            Ok(e) if access.may_send(&e.coordinates.agent) => e,
            Ok(e) => {
                tally.forbidden(
                    &state.metrics,
                    i,
                    &access.refuse_agent(&e.coordinates.agent),
                );
                continue;
            }
            Err(error) => {
                tally.malformed(&state.metrics, i, &error);
                continue;
            }
        };
        state.metrics.queue_depth.inc();
        state.tap(&envelope, &headers);
        let p = match service.try_submit(envelope) {
            Ok(p) => p,
            Err(envelope) => {
                // The service's queue is full: wait for what was sent, then for room.
                tally.settle(&mut pending, &state.metrics).await;
                let r = service.emit(envelope).await;
                state.metrics.queue_depth.dec();
                tally.record(&state.metrics, i, r);
                continue;
            }
        };
        pending.push((i, p));
        if pending.len() >= RECEIPT_WINDOW {
            tally.settle(&mut pending, &state.metrics).await;
        }
    }
    tally.settle(&mut pending, &state.metrics).await;
    Ok(tally.answer(state.durability.as_str()))
}

/// `POST /v1/events` with `--nats`: each event published in order, its
/// receipt `persisted` once the stream acked it.
async fn forwarded(
    state: &AppState,
    access: &Access,
    forward: &dyn Forward,
    format: &Format,
    texts: Vec<Text<'_>>,
    mut parsing: Parsing<'_>,
) -> Result<Response, ApiError> {
    let mut tally = Tally::new(&texts);
    for item in texts {
        let i = item.index;
        let parsed = match item.text {
            // Each is published before the next is parsed: nothing pending.
            Ok(text) => match parsing.room_for(text, &mut tally, &mut Vec::new()).await {
                Ok(()) => state.streams.item(format, text),
                Err(cost) => {
                    tally.too_dense(&state.metrics, i, cost, PARSE_WINDOW);
                    continue;
                }
            },
            Err(e) => Err(e),
        };
        match parsed {
            Ok(e) if !access.may_send(&e.coordinates.agent) => {
                tally.forbidden(
                    &state.metrics,
                    i,
                    &access.refuse_agent(&e.coordinates.agent),
                );
            }
            Ok(envelope) => {
                let id = envelope.id.clone();
                let r =
                    forward
                        .forward(envelope)
                        .await
                        .map_err(|e| match e.downcast::<EmitError>() {
                            Ok(refused) => *refused,
                            Err(e) => EmitError::Journal {
                                id,
                                message: e.to_string(),
                            },
                        });
                tally.record(&state.metrics, i, r);
            }
            Err(error) => tally.malformed(&state.metrics, i, &error),
        }
    }
    Ok(tally.answer("persisted"))
}

impl AppState {
    /// A signed receipt of `envelope`'s `resolution` when the server has a
    /// signing key (`None` without one).
    pub(crate) fn signed_receipt(
        &self,
        envelope: &Envelope,
        resolution: &impl serde::Serialize,
    ) -> Option<hookrt::journal::SignedReceipt> {
        let context = self.receipts.as_ref()?;
        let context = match context.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        // The text the journal stores, whose digest its trail holds.
        let resolution = serde_json::to_string(resolution).ok()?;
        hookrt::journal::sign_receipt(
            &context,
            &envelope.id,
            &envelope.coordinates.agent,
            &envelope.digest(),
            &resolution,
        )
    }
}

/// `POST /v1/admin/reload`: load the agent folder again and swap it in.
pub(crate) async fn reload(
    State(state): State<Shared>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    state.admit(&headers)?.administer("reload the hooks")?;
    if headers.contains_key(header::CONTENT_TYPE) {
        state.body_type(&headers)?;
    }
    let guard = state.service.read().await;
    let service = guard.as_ref().ok_or_else(unavailable)?;
    match state.reloader.reload(service, &state.metrics).await {
        Ok(r) => {
            let body = json!({ "reloaded": true, "previous": r.previous, "hooks": r.hooks });
            Ok(axum::Json(body).into_response())
        }
        Err(failure) => {
            let dir = state.reloader.agent_dir();
            let error = failure.to_api_error(dir);
            let mut body = error.body();
            body["problems"] = failure.problems(dir);
            Ok((error.status, axum::Json(body)).into_response())
        }
    }
}
