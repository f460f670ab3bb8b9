//! The spans: one `hookrt.event` per event, with a `hookrt.delivery` child
//! per delivery, made from what the service's observer is told.
//!
//! Only fixed attributes are set: ids, kinds, hook and handler names,
//! outcome, attempt, fuel, the verdict's name and who decided. Never the
//! event's data, a hook's logs or console, an error message or a verdict's
//! reason: whatever a redactor would mask cannot reach a span.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use hookrt::{Delivery, Observation, Resolution};
use opentelemetry::trace::{Span, SpanKind, Status, TraceContextExt, Tracer, TracerProvider as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

use crate::parents::TraceParents;

/// The instrumentation scope of hookrt's spans.
pub const SCOPE: &str = "hookrt";

/// The spans being made, on the service's observer.
pub(crate) struct Spans {
    tracer: SdkTracer,
    parents: TraceParents,
    /// Events whose span is open: id → a context holding it.
    open: HashMap<String, Context>,
}

impl Spans {
    pub(crate) fn new(provider: &SdkTracerProvider, parents: TraceParents) -> Spans {
        Spans {
            tracer: provider.tracer(SCOPE),
            parents,
            open: HashMap::new(),
        }
    }

    /// Makes the spans of one observation.
    pub(crate) fn observe(&mut self, observation: Observation<'_>) {
        match observation {
            Observation::Delivery(d) => self.delivery(d),
            Observation::Resolved {
                event_id,
                kind,
                resolution,
            } => {
                let now = SystemTime::now();
                let cx = self.event(event_id, kind, now);
                let span = cx.span();
                span.set_attribute(KeyValue::new("hookrt.verdict", verdict(resolution)));
                if let Some(hook) = decided_by(resolution) {
                    span.set_attribute(KeyValue::new("hookrt.decided_by", hook.to_owned()));
                }
                span.end_with_timestamp(now);
                self.open.remove(event_id);
            }
            // Every delivery of the batch is told: the events' spans end.
            Observation::EndOfBatch => {
                let now = SystemTime::now();
                for (_, cx) in self.open.drain() {
                    cx.span().end_with_timestamp(now);
                }
            }
            // The cascade event is delivered in turn, and gets its own span.
            Observation::Cascaded(_) => {}
        }
    }

    fn delivery(&mut self, d: &Delivery) {
        let end = SystemTime::now();
        let start = end
            .checked_sub(Duration::from_micros(d.duration_us))
            .unwrap_or(end);
        let cx = self.event(&d.event_id, &d.kind, start);
        let mut span = self
            .tracer
            .span_builder("hookrt.delivery")
            .with_kind(SpanKind::Internal)
            .with_start_time(start)
            .with_attributes([
                KeyValue::new("hookrt.event.id", d.event_id.clone()),
                KeyValue::new("hookrt.event.kind", d.kind.clone()),
                KeyValue::new("hookrt.hook", d.hook.clone()),
                KeyValue::new("hookrt.handler", d.handler.clone()),
                KeyValue::new("hookrt.outcome", d.outcome.as_str().to_owned()),
                KeyValue::new("hookrt.attempt", i64::from(d.attempt)),
                KeyValue::new(
                    "hookrt.fuel",
                    i64::try_from(d.fuel_used).unwrap_or(i64::MAX),
                ),
            ])
            .start_with_context(&self.tracer, &cx);
        if d.outcome.as_str() != "ok" {
            // The outcome's name, not the error: that is the hook's text.
            span.set_status(Status::error(d.outcome.as_str().to_owned()));
        }
        span.end_with_timestamp(end);
    }

    /// The context holding the span of event `id`, opened now (from `start`,
    /// or when the event was taken) if it is not open.
    fn event(&mut self, id: &str, kind: &str, start: SystemTime) -> Context {
        if let Some(cx) = self.open.get(id) {
            return cx.clone();
        }
        let origin = self.parents.take(id);
        let mut attributes = vec![
            KeyValue::new("hookrt.event.id", id.to_owned()),
            KeyValue::new("hookrt.event.kind", kind.to_owned()),
        ];
        let mut parent = Context::new();
        let mut start = start;
        if let Some(o) = origin {
            attributes.push(KeyValue::new("hookrt.agent", o.agent));
            attributes.push(KeyValue::new("hookrt.session", o.session));
            if let Some(p) = o.prompt_id {
                attributes.push(KeyValue::new("claude.prompt_id", p));
            }
            if let Some(remote) = o.parent {
                parent = parent.with_remote_span_context(remote);
            }
            start = start.min(o.taken);
        }
        let span = self
            .tracer
            .span_builder("hookrt.event")
            .with_kind(SpanKind::Internal)
            .with_start_time(start)
            .with_attributes(attributes)
            .start_with_context(&self.tracer, &parent);
        let cx = parent.with_span(span);
        self.open.insert(id.to_owned(), cx.clone());
        cx
    }
}

/// The name of what was decided (`allow`, `deny`, `block`, `applied`, ...):
/// the answer's tag, never its reason. A tool approval of several calls
/// names the strongest (deny, ask, allow, abstain).
fn verdict(resolution: &Resolution) -> String {
    let tag = |v: serde_json::Value| {
        v.get("answer")
            .and_then(|a| a.as_str())
            .unwrap_or("unknown")
            .to_owned()
    };
    match resolution {
        Resolution::ToolApproval(t) => {
            const ORDER: [&str; 4] = ["deny", "ask", "allow", "abstain"];
            let verdicts: Vec<String> = t
                .calls
                .iter()
                .map(|c| tag(serde_json::to_value(&c.verdict).unwrap_or_default()))
                .collect();
            ORDER
                .iter()
                .find(|o| verdicts.iter().any(|v| v == *o))
                .map_or_else(|| "abstain".to_owned(), |o| (*o).to_owned())
        }
        Resolution::Gate(g) => tag(serde_json::to_value(&g.verdict).unwrap_or_default()),
        Resolution::Permission(p) => tag(serde_json::to_value(&p.verdict).unwrap_or_default()),
        Resolution::FileEdit(f) => tag(serde_json::to_value(&f.result).unwrap_or_default()),
        Resolution::Edit(e) => match (&e.rolled_back, e.changed) {
            (Some(_), _) => "rolled_back".to_owned(),
            (None, true) => "changed".to_owned(),
            (None, false) => "unchanged".to_owned(),
        },
        Resolution::Context(_) => "context".to_owned(),
    }
}

/// The hook whose answer decided, when one did.
fn decided_by(resolution: &Resolution) -> Option<&str> {
    match resolution {
        Resolution::ToolApproval(t) => t.calls.iter().find_map(|c| c.decided_by.as_deref()),
        Resolution::Gate(g) => g.decided_by.as_deref(),
        Resolution::Permission(p) => p.decided_by.as_deref(),
        Resolution::FileEdit(f) => f.decided_by.as_deref(),
        Resolution::Edit(_) | Resolution::Context(_) => None,
    }
}
