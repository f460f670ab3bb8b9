//! Where each event came from, for its span: the agent's trace it joins
//! (the W3C `traceparent` of the request that brought it), its agent and
//! session, Claude Code's `prompt_id`, and when it was taken.
//!
//! The service's observer sees deliveries and resolutions by event id only,
//! so whatever takes an event (a `hookrt serve` route, `hookrt run`'s reader)
//! notes it here first, and the observer takes the note when it opens the
//! event's span. Notes are held for events not yet delivered, at most
//! [`MAX_HELD`] (the oldest dropped first): an event no hook subscribes to
//! leaves its note until it is pushed out.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use hookrt::Envelope;
use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};

/// Notes held at most.
pub(crate) const MAX_HELD: usize = 65_536;

/// The longest `prompt_id` taken as an attribute.
const MAX_PROMPT_ID: usize = 128;

/// What was noted of one event.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    /// The agent's span the event's span is a child of.
    pub parent: Option<SpanContext>,
    /// `coordinates.agent`.
    pub agent: String,
    /// `coordinates.session`.
    pub session: String,
    /// Claude Code's `data.prompt_id` (an opaque id, not a W3C one).
    pub prompt_id: Option<String>,
    /// When it was taken.
    pub taken: SystemTime,
}

/// The events taken and not yet given a span: event id → where it came from.
/// Cloning shares the registry.
#[derive(Debug, Clone, Default)]
pub struct TraceParents {
    held: Arc<Mutex<Held>>,
}

#[derive(Debug, Default)]
struct Held {
    by_id: HashMap<String, Origin>,
    /// Ids in the order noted (some already taken), for dropping the oldest.
    order: VecDeque<String>,
    /// Eve's trace of each session (`session.started`'s `data.trace`), by
    /// (agent, session); emptied when it holds [`MAX_TRACES`].
    sessions: HashMap<(String, String), SpanContext>,
    /// Eve's trace of each turn (`turn.started`'s `data.trace`), by
    /// (agent, session, turn); emptied when it holds [`MAX_TRACES`].
    turns: HashMap<(String, String, String), SpanContext>,
}

/// Sessions, and turns, whose Eve trace is remembered at most.
pub(crate) const MAX_TRACES: usize = 4096;

impl TraceParents {
    /// Notes `envelope` as taken now, under the request's W3C `traceparent`
    /// header when it had one (an invalid one is ignored: the event's span
    /// starts a trace of its own).
    ///
    /// Without a header, an event of Eve's stream joins Eve's trace: its own
    /// `data.trace` (Eve writes one on `session.started` and `turn.started`),
    /// else its turn's, else its session's, as noted before.
    pub fn note(&self, envelope: &Envelope, traceparent: Option<&str>) {
        let c = &envelope.coordinates;
        let eve = eve_trace(envelope);
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let session = (c.agent.clone(), c.session.clone());
        let turn = c
            .turn
            .as_ref()
            .map(|t| (c.agent.clone(), c.session.clone(), t.clone()));
        if let Some(cx) = &eve {
            match (envelope.kind.as_str(), &turn) {
                ("session.started", _) => {
                    if held.sessions.len() >= MAX_TRACES {
                        held.sessions.clear();
                    }
                    held.sessions.insert(session.clone(), cx.clone());
                }
                ("turn.started", Some(turn)) => {
                    if held.turns.len() >= MAX_TRACES {
                        held.turns.clear();
                    }
                    held.turns.insert(turn.clone(), cx.clone());
                }
                _ => {}
            }
        }
        let parent = traceparent
            .and_then(parse_traceparent)
            .or(eve)
            .or_else(|| turn.and_then(|t| held.turns.get(&t).cloned()))
            .or_else(|| held.sessions.get(&session).cloned());
        let origin = Origin {
            parent,
            agent: c.agent.clone(),
            session: c.session.clone(),
            prompt_id: prompt_id(envelope),
            taken: SystemTime::now(),
        };
        held.by_id.insert(envelope.id.clone(), origin);
        held.order.push_back(envelope.id.clone());
        while held.by_id.len() > MAX_HELD {
            let Some(oldest) = held.order.pop_front() else {
                break;
            };
            held.by_id.remove(&oldest);
        }
        if held.order.len() > 2 * MAX_HELD {
            let Held { by_id, order, .. } = &mut *held;
            order.retain(|id| by_id.contains_key(id));
        }
    }

    /// The note of `event_id`, taken out of the registry.
    pub(crate) fn take(&self, event_id: &str) -> Option<Origin> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let origin = held.by_id.remove(event_id);
        if held.by_id.is_empty() {
            held.order.clear();
        }
        origin
    }

    /// Notes held now.
    pub fn len(&self) -> usize {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .by_id
            .len()
    }

    /// Whether no note is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Claude Code's `data.prompt_id`, when it looks like an id (short, no
/// spaces or markup): never a piece of the prompt.
fn prompt_id(envelope: &Envelope) -> Option<String> {
    let id = envelope.data.value().get("prompt_id")?.as_str()?;
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':');
    (!id.is_empty() && id.len() <= MAX_PROMPT_ID && id.chars().all(plain)).then(|| id.to_owned())
}

/// Eve's `data.trace` (`{"traceId", "spanId", "traceFlags"}`, as Eve
/// writes it on `session.started` and `turn.started`) as a remote span.
fn eve_trace(envelope: &Envelope) -> Option<SpanContext> {
    let trace = envelope.data.value().get("trace")?;
    let trace_id = trace.get("traceId")?.as_str()?;
    let span_id = trace.get("spanId")?.as_str()?;
    let flags = trace
        .get("traceFlags")
        .and_then(|f| f.as_u64())
        .unwrap_or(0);
    let sampled = if flags & 1 == 1 { "01" } else { "00" };
    parse_traceparent(&format!("00-{trace_id}-{span_id}-{sampled}"))
}

/// A W3C `traceparent` header (`00-<trace id>-<parent id>-<flags>`) as the
/// remote span it names; `None` when it is not a valid one.
pub(crate) fn parse_traceparent(header: &str) -> Option<SpanContext> {
    let header = header.trim();
    let mut parts = header.split('-');
    let (version, trace, span, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let hex = |s: &str, len: usize| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    if !hex(version, 2) || version == "ff" || !hex(trace, 32) || !hex(span, 16) || !hex(flags, 2) {
        return None;
    }
    // Version 00 has exactly four fields; later versions may add more.
    if version == "00" && parts.next().is_some() {
        return None;
    }
    let trace_id = TraceId::from_hex(trace).ok()?;
    let span_id = SpanId::from_hex(span).ok()?;
    if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
        return None;
    }
    let flags = TraceFlags::new(u8::from_str_radix(flags, 16).ok()? & TraceFlags::SAMPLED.to_u8());
    Some(SpanContext::new(
        trace_id,
        span_id,
        flags,
        true,
        TraceState::default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const SPAN: &str = "00f067aa0ba902b7";

    #[test]
    fn a_valid_traceparent_is_a_remote_sampled_parent() {
        let cx = parse_traceparent(&format!("00-{TRACE}-{SPAN}-01")).unwrap();
        assert_eq!(cx.trace_id().to_string(), TRACE);
        assert_eq!(cx.span_id().to_string(), SPAN);
        assert!(cx.is_remote() && cx.is_sampled());
        let unsampled = parse_traceparent(&format!("00-{TRACE}-{SPAN}-00")).unwrap();
        assert!(!unsampled.is_sampled());
    }

    #[test]
    fn an_invalid_traceparent_is_ignored() {
        for bad in [
            "",
            "00",
            &format!("00-{TRACE}-{SPAN}"),
            &format!("00-{TRACE}-{SPAN}-01-extra"),
            &format!("ff-{TRACE}-{SPAN}-01"),
            &format!("00-{}-{SPAN}-01", "0".repeat(32)),
            &format!("00-{TRACE}-{}-01", "0".repeat(16)),
            &format!("00-{}-{SPAN}-01", TRACE.to_uppercase()),
            &format!("00-{TRACE}-{SPAN}-0x"),
        ] {
            assert!(parse_traceparent(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn events_of_an_eve_stream_join_their_turn_s_trace() {
        let parents = TraceParents::default();
        let turn_span = "b7ad6b7169203331";
        let mut started = envelope(
            "t0",
            json!({"turnId": "turn_0", "trace": {"traceId": TRACE, "spanId": turn_span, "traceFlags": 1}}),
        );
        started.kind = "turn.started".into();
        started.coordinates.turn = Some("turn_0".into());
        parents.note(&started, None);
        let mut later = envelope("t1", json!({}));
        later.coordinates.turn = Some("turn_0".into());
        parents.note(&later, None);
        let mut other = envelope("t2", json!({}));
        other.coordinates.turn = Some("turn_1".into());
        parents.note(&other, Some(&format!("00-{TRACE}-{SPAN}-01")));
        for (id, span) in [("t0", turn_span), ("t1", turn_span), ("t2", SPAN)] {
            let parent = parents.take(id).unwrap().parent.unwrap();
            assert_eq!(parent.trace_id().to_string(), TRACE, "{id}");
            assert_eq!(parent.span_id().to_string(), span, "{id}");
        }
        parents.note(&envelope("t3", json!({})), None);
        assert!(parents.take("t3").unwrap().parent.is_none());
    }

    fn envelope(id: &str, data: serde_json::Value) -> Envelope {
        Envelope::new(
            id,
            "prompt.submitted",
            hookrt::Coordinates::new("a", "s", 1),
            data,
        )
        .unwrap()
    }

    #[test]
    fn a_note_is_taken_once_and_the_prompt_id_only_when_it_is_an_id() {
        let parents = TraceParents::default();
        parents.note(
            &envelope("e1", json!({"prompt_id": "p-1", "prompt": "secret"})),
            None,
        );
        parents.note(
            &envelope("e2", json!({"prompt_id": "not an id: rm -rf /"})),
            None,
        );
        let e1 = parents.take("e1").unwrap();
        assert_eq!(e1.prompt_id.as_deref(), Some("p-1"));
        assert_eq!((e1.agent.as_str(), e1.session.as_str()), ("a", "s"));
        assert!(parents.take("e1").is_none());
        assert_eq!(parents.take("e2").unwrap().prompt_id, None);
        assert!(parents.is_empty());
    }
}
