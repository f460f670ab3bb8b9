//! One batch's results: each event's receipt or error, in the body's order,
//! and the counts the answer's status is chosen by.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hookrt::front::input::LineError;
use hookrt::{EmitError, PendingReceipt, Receipt};
use serde::Serialize;

use crate::error::ApiError;
use crate::ingest::Text;
use crate::metrics::ServerMetrics;

/// What a caller can do about an emit error, and the metric reason.
pub(crate) fn explain(e: &EmitError) -> (&'static str, &'static str) {
    match e {
        EmitError::Invalid(_) => (
            "invalid",
            "fix the event (docs/envelope.md#validation); sending it again unchanged fails again",
        ),
        EmitError::Overloaded(_) => (
            "overloaded",
            "send it again after earlier events are receipted",
        ),
        EmitError::ShuttingDown(_) => ("shutting_down", "send it again to the restarted server"),
        EmitError::Journal { .. } => ("journal", "send it again; its id makes a repeat harmless"),
        EmitError::Conflict { .. } => (
            "id_conflict",
            "give this event its own id: an event id names one event of its agent, and a repeat must say exactly what the first said (docs/serve.md#event-ids)",
        ),
    }
}

/// The status of a request whose one event the service refused: 400 for an
/// invalid event, 409 for an id taken by another, 503 for the rest (the
/// service could not take it now).
pub(crate) fn status_of(e: &EmitError) -> StatusCode {
    match e {
        EmitError::Invalid(_) => StatusCode::BAD_REQUEST,
        EmitError::Conflict { .. } => StatusCode::CONFLICT,
        _ => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// Each item's result in a batch, and the counts.
pub(crate) struct Tally {
    /// One result per item, in the body's order.
    results: Vec<ItemResult>,
    /// Events taken.
    pub taken: usize,
    /// Events the service refused (not the event's fault).
    pub service_errors: usize,
    /// Events refused because their id was taken by another event.
    pub conflicts: usize,
    /// Events refused because the caller may not send their agent's events.
    pub forbidden: usize,
    /// Events refused, for any reason.
    refusals: usize,
}

/// One item's result, written straight to the answer (no JSON value built
/// first); keys in the order the other bodies' maps write them.
#[derive(Serialize)]
struct ItemResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
    index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    receipt: Option<Receipt>,
}

/// A batch's answer: its durability, the counts and each item's result.
#[derive(Serialize)]
struct Answer<'a> {
    durability: &'a str,
    refused: usize,
    results: &'a [ItemResult],
    taken: usize,
}

/// Refused items whose result carries the error and its fix; past them a
/// result has its `code` alone (the body's `refused` counts them all).
pub(crate) const DETAILED_ERRORS: usize = 100;

impl Tally {
    /// A tally of `items`, each result naming its item (index, line).
    pub(crate) fn new(items: &[Text<'_>]) -> Tally {
        let result = |item: &Text<'_>| ItemResult {
            code: None,
            error: None,
            fix: None,
            index: item.index,
            line: item.line,
            ok: false,
            receipt: None,
        };
        Tally {
            results: items.iter().map(result).collect(),
            taken: 0,
            service_errors: 0,
            conflicts: 0,
            forbidden: 0,
            refusals: 0,
        }
    }

    /// Records one event's receipt or error.
    pub(crate) fn record(
        &mut self,
        metrics: &ServerMetrics,
        i: usize,
        r: Result<Receipt, EmitError>,
    ) {
        let result = &mut self.results[i];
        match r {
            Ok(receipt) => {
                metrics.event(&receipt).inc();
                self.taken += 1;
                result.ok = true;
                result.receipt = Some(receipt);
            }
            Err(e) => {
                let (reason, fix) = explain(&e);
                match e {
                    EmitError::Invalid(_) => {}
                    EmitError::Conflict { .. } => self.conflicts += 1,
                    _ => self.service_errors += 1,
                }
                self.refused(metrics, i, reason, &|| e.to_string(), fix);
            }
        }
    }

    /// Item `i` is no envelope: refused as `malformed`, the others taken.
    pub(crate) fn malformed(&mut self, metrics: &ServerMetrics, i: usize, error: &LineError) {
        self.refused(
            metrics,
            i,
            "malformed",
            &|| error.to_string(),
            "fix this event and send it again; the others were taken (docs/envelope.md)",
        );
    }

    /// Item `i` would cost `cost` bytes parsed, more than one event may:
    /// refused as `too_dense` before it is parsed, the others taken.
    pub(crate) fn too_dense(
        &mut self,
        metrics: &ServerMetrics,
        i: usize,
        cost: usize,
        most: usize,
    ) {
        self.refused(
            metrics,
            i,
            "too_dense",
            &|| {
                format!(
                    "this event would take about {} KiB once parsed, above the {} KiB one event may (its JSON holds too many values for its size)",
                    cost / 1024,
                    most / 1024
                )
            },
            "send fewer, larger values (a long string instead of many small numbers or objects), or split the data over several events",
        );
    }

    /// Item `i` was refused with `code`: counted, and its result says so;
    /// the first [`DETAILED_ERRORS`] refused items also carry the error and
    /// its fix (written only then), the rest their code alone.
    fn refused(
        &mut self,
        metrics: &ServerMetrics,
        i: usize,
        code: &'static str,
        error: &dyn Fn() -> String,
        fix: &str,
    ) {
        metrics.refuse(code);
        self.refusals += 1;
        let r = &mut self.results[i];
        r.ok = false;
        r.code = Some(code);
        if self.refusals <= DETAILED_ERRORS {
            r.error = Some(error());
            r.fix = Some(fix.to_owned());
        }
    }

    /// The answer: the status, and a body with `durability`, the counts and
    /// each item's result.
    pub(crate) fn answer(&self, durability: &str) -> Response {
        let body = Answer {
            durability,
            refused: self.results.len() - self.taken,
            results: &self.results,
            taken: self.taken,
        };
        (self.status(), axum::Json(body)).into_response()
    }

    /// The answer's status: 200 when anything was taken (each item says
    /// how it went), else why nothing was: the service (503), only ids
    /// taken by other events (409), only events of agents the caller may not send (403), or the events themselves (400).
    fn status(&self) -> StatusCode {
        let refused = self.results.len() - self.taken;
        match (self.taken, refused) {
            (_, 0) => StatusCode::OK,
            (0, _) if self.service_errors > 0 => StatusCode::SERVICE_UNAVAILABLE,
            (0, n) if self.forbidden == n => StatusCode::FORBIDDEN,
            (0, n) if self.conflicts == n => StatusCode::CONFLICT,
            (0, _) => StatusCode::BAD_REQUEST,
            _ => StatusCode::OK,
        }
    }

    /// Item `i` is an event this caller may not send (`refusal`, a 403).
    pub(crate) fn forbidden(&mut self, metrics: &ServerMetrics, i: usize, refusal: &ApiError) {
        self.forbidden += 1;
        self.refused(
            metrics,
            i,
            refusal.code,
            &|| refusal.error.clone(),
            &refusal.fix,
        );
    }

    /// Waits for every pending receipt, in order.
    pub(crate) async fn settle(
        &mut self,
        pending: &mut Vec<(usize, PendingReceipt)>,
        metrics: &ServerMetrics,
    ) {
        for (i, p) in pending.drain(..) {
            let r = p.receipt().await;
            metrics.queue_depth.dec();
            self.record(metrics, i, r);
        }
    }
}
