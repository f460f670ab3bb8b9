//! Request bodies to envelopes: one envelope or a JSON array of them
//! (`application/json`), one per line (`application/x-ndjson`), or Eve's
//! NDJSON session stream (`?format=eve&agent=A&session=S`).
//!
//! Each item is parsed on its own, so a bad one is reported at its place and
//! never loses the others. Ordinals are assigned across requests as one
//! stream (as `hookrt run` does for a file), and an Eve session's lines are
//! read by one [`EveStream`] kept across requests, so a session may be sent
//! in any number of requests, in order.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use hookrt::event::{Ordinals, Recent};
use hookrt::front::input::LineError;
use hookrt::front::input::{self, InputFormat, MAX_LINE_BYTES, Reader};
use hookrt::{Envelope, EnvelopeError, Receipt};
use serde::de::{SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::{ApiError, BoxError};

/// Eve streams kept at most; past this the stream untouched the longest is
/// forgotten (it starts again if its session sends more), never the others.
pub(crate) const MAX_EVE_STREAMS: usize = 4096;

/// Events one request may hold at most: the body is refused (413) before
/// any of them is parsed when it holds more, so what a request costs is
/// bounded by this and the body limit, never by how many tiny items it packs.
pub const MAX_ITEMS: usize = 10_000;

/// What the body holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    /// One envelope or a JSON array of envelopes.
    Json,
    /// Envelopes, one per line.
    Ndjson,
    /// Eve's NDJSON session stream.
    Eve {
        /// The agent's name (Eve's lines do not carry it).
        agent: String,
        /// The session id.
        session: String,
        /// The stream is this subagent's own child session.
        subagent: Option<String>,
    },
}

/// One item of a body: where it was and what it became.
#[derive(Debug)]
pub struct Item {
    /// Its position among the body's items (0-based).
    pub index: usize,
    /// Its line (1-based) for line formats.
    pub line: Option<usize>,
    /// The envelope, or why there is none.
    pub parsed: Result<Envelope, LineError>,
}

/// One item of a body before it is parsed: where it was and its text (or
/// why it has none).
#[derive(Debug)]
pub struct Text<'a> {
    /// Its position among the body's items (0-based).
    pub index: usize,
    /// Its line (1-based) for line formats.
    pub line: Option<usize>,
    /// Its JSON text, borrowed from the body.
    pub text: Result<&'a str, LineError>,
}

/// An Eve stream's key in [`Streams`]: its agent, session and subagent.
type EveStream = (String, String, Option<String>);

/// The state parsing keeps across requests.
#[derive(Debug)]
pub struct Streams {
    ordinals: Mutex<Ordinals>,
    eve: Mutex<Recent<EveStream, Reader>>,
    /// The journal whose events an Eve stream read anew starts from (the
    /// places they took), so a line Eve sends again after a restart, or
    /// after the stream was evicted, is a duplicate there too.
    journal: Option<std::path::PathBuf>,
}

impl Default for Streams {
    fn default() -> Streams {
        Streams {
            ordinals: Mutex::default(),
            eve: Mutex::new(Recent::new(MAX_EVE_STREAMS)),
            journal: None,
        }
    }
}

impl Format {
    /// The format a request asks for: `format=eve` (query or
    /// `X-Hookrt-Format`) with its agent and session, else by Content-Type.
    /// A Content-Type, when given, must be JSON or NDJSON either way;
    /// `typed` (a server without tokens) also refuses a request without
    /// one, so a web page cannot send one as a "simple" request.
    pub fn choose(
        content_type: Option<&str>,
        param: &dyn Fn(&str) -> Option<String>,
        typed: bool,
    ) -> Result<Format, ApiError> {
        let mime = body_type(content_type, typed)?;
        match param("format").as_deref() {
            Some("eve") => {
                let need = |name: &str| {
                    param(name).filter(|v| !v.is_empty()).ok_or_else(|| {
                        ApiError::bad_request(
                            format!("format=eve needs `{name}`"),
                            format!(
                                "add ?{name}=... to the URL (or the X-Hookrt-{} header): Eve's lines do not carry it",
                                if name == "agent" { "Agent" } else { "Session" }
                            ),
                        )
                        .with_code("missing_parameter")
                    })
                };
                let agent = need("agent")?;
                let session = input::session_id(&need("session")?).to_owned();
                Ok(Format::Eve {
                    agent,
                    session,
                    subagent: param("subagent").filter(|v| !v.is_empty()),
                })
            }
            Some("jsonl" | "ndjson") => Ok(Format::Ndjson),
            Some("json") => Ok(Format::Json),
            Some(other) => Err(ApiError::bad_request(
                format!("unknown format `{other}`"),
                "use format=eve for Eve's stream, or leave it out and set Content-Type",
            )
            .with_code("unknown_format")),
            None => Ok(match mime {
                BodyType::Ndjson => Format::Ndjson,
                BodyType::Json => Format::Json,
            }),
        }
    }
}

/// What a body's Content-Type says it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyType {
    /// `application/json`, or no Content-Type where that is allowed.
    Json,
    /// One of the NDJSON names.
    Ndjson,
}

/// The JSON kind a request's Content-Type names, or the 415 for any other
/// type (and, when `typed`, for none at all).
pub(crate) fn body_type(content_type: Option<&str>, typed: bool) -> Result<BodyType, ApiError> {
    let unsupported = |error: String| {
        ApiError::new(
            axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
            error,
            "send application/json (one envelope or an array) or application/x-ndjson (one envelope per line)",
        )
    };
    let Some(content_type) = content_type else {
        return if typed {
            Err(unsupported(
                "a server without tokens needs a Content-Type on every request with a body".into(),
            ))
        } else {
            Ok(BodyType::Json)
        };
    };
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match mime.as_str() {
        "application/x-ndjson"
        | "application/jsonl"
        | "application/ndjson"
        | "application/jsonlines" => Ok(BodyType::Ndjson),
        "application/json" => Ok(BodyType::Json),
        other => Err(unsupported(format!(
            "unsupported Content-Type `{}`",
            other.chars().take(100).collect::<String>()
        ))),
    }
}

impl Streams {
    /// Streams whose Eve readers start from what `journal` holds.
    pub(crate) fn with_journal(journal: Option<std::path::PathBuf>) -> Streams {
        Streams {
            journal,
            ..Streams::default()
        }
    }

    /// The items of `body`, each parsed. Fails only when the body as a
    /// whole cannot be read (a JSON body that is not JSON). The server
    /// parses item by item instead ([`Streams::texts`], [`Streams::item`]),
    /// so a body's events are never all parsed at once.
    pub fn parse(&self, format: &Format, body: &[u8]) -> Result<Vec<Item>, ApiError> {
        Ok(self
            .texts(format, body)?
            .into_iter()
            .map(|t| Item {
                index: t.index,
                line: t.line,
                parsed: t.text.and_then(|text| self.item(format, text)),
            })
            .collect())
    }

    /// The items of `body` as texts borrowed from it, none parsed yet, at
    /// most [`MAX_ITEMS`] (413 past it). Fails only when the body as a
    /// whole cannot be read (a JSON body that is not JSON).
    pub fn texts<'a>(&self, format: &Format, body: &'a [u8]) -> Result<Vec<Text<'a>>, ApiError> {
        if *format != Format::Json {
            let lines = body
                .split(|&b| b == b'\n')
                .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
                .count();
            if lines > MAX_ITEMS {
                return Err(too_many_items(format!("{lines} lines")));
            }
            return Ok(lines_of(body));
        }
        let texts = json_items(body)?;
        Ok(texts
            .into_iter()
            .enumerate()
            .map(|(index, text)| Text {
                index,
                line: None,
                text: if text.get().len() > MAX_LINE_BYTES {
                    Err(LineError::TooLong(text.get().len() as u64))
                } else {
                    Ok(text.get())
                },
            })
            .collect())
    }

    /// One item's envelope, parsed from its text as `format` reads it (an
    /// Eve line by its session's stream, kept across requests).
    pub fn item(&self, format: &Format, text: &str) -> Result<Envelope, LineError> {
        match format {
            Format::Json | Format::Ndjson => self.envelope(text),
            Format::Eve {
                agent,
                session,
                subagent,
            } => {
                let mut streams = self.eve.lock().unwrap_or_else(|p| p.into_inner());
                let key = (agent.clone(), session.clone(), subagent.clone());
                let stream = streams.get_or_insert_with(&key, || {
                    let format = InputFormat::Eve {
                        agent: agent.clone(),
                        session: session.clone(),
                        subagent: subagent.clone(),
                    };
                    // A journal that cannot be read: the stream starts anew
                    // (a line sent again is then a conflict, never lost).
                    let resumed = self.journal.as_deref().map(|j| Reader::resuming(&format, j));
                    match resumed {
                        Some(Ok(reader)) => reader,
                        Some(Err(e)) => {
                            tracing::warn!(target: "hookrt", agent, session, "the Eve stream starts without the journal's places: {e}");
                            Reader::new(&format)
                        }
                        None => Reader::new(&format),
                    }
                });
                stream.envelope(text)
            }
        }
    }

    /// One envelope from its JSON text, with its ordinal. Its `attempt` is
    /// 1 whatever the caller wrote: an HTTP caller does not own attempts
    /// (with a journal the journal does), and a high one would skip a
    /// hook's retries and make a critical hook's first failure final.
    fn envelope(&self, text: &str) -> Result<Envelope, LineError> {
        let mut e = Envelope::from_json(text)?;
        e.attempt = 1;
        Ok(self.numbered(e)?)
    }

    /// The one envelope of a `/v1/decide` or `/v1/edit` body: a JSON object,
    /// parsed alone (an array is refused before any item of it is read).
    pub fn one(&self, body: &[u8]) -> Result<Result<Envelope, LineError>, ApiError> {
        Ok(self.envelope(one_object(body)?))
    }

    /// `e` with its ordinal, validated.
    fn numbered(&self, e: Envelope) -> Result<Envelope, EnvelopeError> {
        let mut ordinals = self.ordinals.lock().unwrap_or_else(|p| p.into_inner());
        input::numbered(&mut ordinals, e)
    }
}

/// The text of a body that must hold one JSON object, or the 400 for one
/// that is not UTF-8 or not an object (an array is refused before any item
/// of it is read, or its cost estimated).
pub(crate) fn one_object(body: &[u8]) -> Result<&str, ApiError> {
    let text = std::str::from_utf8(body).map_err(|_| {
        ApiError::bad_request("the body is not UTF-8", "send one envelope as JSON")
            .with_code("not_json")
    })?;
    if !text.trim_start().starts_with('{') {
        return Err(ApiError::bad_request(
            "this endpoint takes exactly one envelope (a JSON object)",
            "send one JSON object; to send several events use /v1/events",
        )
        .with_code("one_envelope"));
    }
    Ok(text)
}

/// The non-blank lines of `body`, each with its number (1-based).
fn lines_of(body: &[u8]) -> Vec<Text<'_>> {
    let mut texts = Vec::new();
    for (n, raw) in body.split(|&b| b == b'\n').enumerate() {
        let text = if raw.len() > MAX_LINE_BYTES {
            Err(LineError::TooLong(raw.len() as u64))
        } else {
            match std::str::from_utf8(raw) {
                Ok(line) if line.trim().is_empty() => continue,
                Ok(line) => Ok(line),
                Err(_) => Err(LineError::NotUtf8),
            }
        };
        texts.push(Text {
            index: texts.len(),
            line: Some(n + 1),
            text,
        });
    }
    texts
}

/// The 413 of a body holding more than [`MAX_ITEMS`] events (`found`).
fn too_many_items(found: String) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::PAYLOAD_TOO_LARGE,
        format!("the body holds {found}; a request takes at most {MAX_ITEMS} events"),
        format!("send the events in requests of at most {MAX_ITEMS}"),
    )
    .with_code("too_many_items")
}

/// The items of a JSON body (one object, or an array), as texts borrowed
/// from it: an array is read item by item and refused as soon as it holds
/// more than [`MAX_ITEMS`], so no junk array is ever held whole.
fn json_items(body: &[u8]) -> Result<Vec<&RawValue>, ApiError> {
    struct Items;
    impl<'de> Visitor<'de> for Items {
        type Value = Vec<&'de RawValue>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an envelope or an array of envelopes")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element::<&RawValue>()? {
                if items.len() == MAX_ITEMS {
                    return Err(serde::de::Error::custom(TOO_MANY));
                }
                items.push(item);
            }
            Ok(items)
        }
    }
    const TOO_MANY: &str = "hookrt: too many items";
    let not_json = |e: &dyn std::fmt::Display| {
        ApiError::bad_request(
            format!("the body is not JSON: {e}"),
            "send one envelope object or an array of them; for one envelope per line use Content-Type application/x-ndjson",
        )
        .with_code("not_json")
    };
    let text = std::str::from_utf8(body).map_err(|e| not_json(&e))?;
    if !text.trim_start().starts_with('[') {
        let one: &RawValue = serde_json::from_str(text).map_err(|e| not_json(&e))?;
        return Ok(vec![one]);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let items = serde::Deserializer::deserialize_seq(&mut de, Items).map_err(|e| {
        if e.to_string().starts_with(TOO_MANY) {
            too_many_items(format!("more than {MAX_ITEMS} items"))
        } else {
            not_json(&e)
        }
    })?;
    de.end().map_err(|e| not_json(&e))?;
    Ok(items)
}

/// Where `POST /v1/events` sends events instead of the local service: a
/// JetStream stream for `hookrt serve --nats` (the `hookrt` command
/// implements it with hookrt-worker, so this package brings no NATS client).
/// The receipt is the event's on the other side: `persisted` once it stored
/// it. An error says why it was not stored (and keeps its source).
pub trait Forward: Send + Sync + std::fmt::Debug {
    /// Sends one event and waits until it is stored.
    fn forward(
        &self,
        envelope: Envelope,
    ) -> Pin<Box<dyn Future<Output = Result<Receipt, BoxError>> + Send + '_>>;
}

/// Sees the server's work: it wraps the service's observer, and is told of
/// every event `/v1/events`, `/v1/decide` and `/v1/edit` take, before the
/// service has it, with the request's W3C `traceparent` header when it had
/// one. The `hookrt` command's OpenTelemetry export is one (hookrt-otel,
/// docs/telemetry.md): each event's span joins the agent's trace, and this
/// package brings no exporter.
pub trait Tap: Send + Sync + std::fmt::Debug {
    /// The observer the service is started with, given the server's own
    /// (metrics, delivery lines): `inner` itself by default.
    fn observer(&self, inner: hookrt::Observer) -> hookrt::Observer {
        inner
    }

    /// `envelope` is about to be handed to the service.
    fn taken(&self, envelope: &Envelope, traceparent: Option<&str>);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_line_is_reported_at_its_place() {
        let body = b"{\"x\":1}\n\n{not json\n";
        let items = Streams::default()
            .parse(&Format::Ndjson, body)
            .expect("parsed");
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].line, Some(3));
        assert!(items[0].parsed.is_err() && items[1].parsed.is_err());
    }
}
