//! Request bodies to envelopes: one envelope or a JSON array of them
//! (`application/json`), one per line (`application/x-ndjson`), or Eve's
//! NDJSON session stream (`?format=eve&agent=A&session=S`).
//!
//! Each item is parsed on its own, so a bad one is reported at its place and
//! never loses the others. Ordinals are assigned across requests as one
//! stream (as `hookrt run` does for a file), and an Eve session's lines are
//! read by one [`EveStream`] kept across requests, so a session may be sent
//! in any number of requests, in order.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use hookrt::event::Ordinals;
use hookrt::front::input::LineError;
use hookrt::front::input::{self, InputFormat, MAX_LINE_BYTES, Reader};
use hookrt::{Envelope, EnvelopeError, Receipt};

use crate::error::{ApiError, BoxError};

/// Eve streams kept at most; past this every stream starts again.
pub const MAX_EVE_STREAMS: usize = 4096;

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

/// The state parsing keeps across requests.
#[derive(Debug, Default)]
pub struct Streams {
    ordinals: Mutex<Ordinals>,
    eve: Mutex<HashMap<(String, String, Option<String>), Reader>>,
}

impl Format {
    /// The format a request asks for: `format=eve` (query or
    /// `X-Hookrt-Format`) with its agent and session, else by Content-Type.
    pub fn choose(
        content_type: Option<&str>,
        param: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Format, ApiError> {
        let mime = content_type
            .unwrap_or("application/json")
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
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
            None => match mime.as_str() {
                "application/x-ndjson"
                | "application/jsonl"
                | "application/ndjson"
                | "application/jsonlines" => Ok(Format::Ndjson),
                "application/json" | "" => Ok(Format::Json),
                other => Err(ApiError::new(
                    axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    format!("unsupported Content-Type `{other}`"),
                    "send application/json (one envelope or an array) or application/x-ndjson (one envelope per line)",
                )),
            },
        }
    }
}

impl Streams {
    /// The items of `body`. Fails only when the body as a whole cannot be
    /// read (a JSON body that is not JSON).
    pub fn parse(&self, format: &Format, body: &[u8]) -> Result<Vec<Item>, ApiError> {
        match format {
            Format::Json => self.json(body),
            Format::Ndjson => Ok(self.lines(body, &mut |line| self.envelope(line))),
            Format::Eve {
                agent,
                session,
                subagent,
            } => {
                let mut streams = self.eve.lock().unwrap_or_else(|p| p.into_inner());
                let key = (agent.clone(), session.clone(), subagent.clone());
                if streams.len() >= MAX_EVE_STREAMS && !streams.contains_key(&key) {
                    streams.clear();
                }
                let stream = streams.entry(key).or_insert_with(|| {
                    Reader::new(&InputFormat::Eve {
                        agent: agent.clone(),
                        session: session.clone(),
                        subagent: subagent.clone(),
                    })
                });
                Ok(self.lines(body, &mut |line| stream.envelope(line)))
            }
        }
    }

    /// One envelope from its JSON text, with its ordinal.
    fn envelope(&self, text: &str) -> Result<Envelope, LineError> {
        Ok(self.numbered(Envelope::from_json(text)?)?)
    }

    /// One envelope from an item of a JSON array, already parsed: checked as
    /// [`Envelope::from_json`] checks text, without writing it out and
    /// parsing it again.
    fn envelope_value(&self, value: serde_json::Value) -> Result<Envelope, LineError> {
        Ok(self.numbered(Envelope::from_value(value)?)?)
    }

    /// `e` with its ordinal, validated.
    fn numbered(&self, e: Envelope) -> Result<Envelope, EnvelopeError> {
        let mut ordinals = self.ordinals.lock().unwrap_or_else(|p| p.into_inner());
        input::numbered(&mut ordinals, e)
    }

    fn json(&self, body: &[u8]) -> Result<Vec<Item>, ApiError> {
        let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(
                format!("the body is not JSON: {e}"),
                "send one envelope object or an array of them; for one envelope per line use Content-Type application/x-ndjson",
            )
            .with_code("not_json")
        })?;
        let values = match value {
            serde_json::Value::Array(items) => items,
            one => vec![one],
        };
        Ok(values
            .into_iter()
            .enumerate()
            .map(|(index, v)| Item {
                index,
                line: None,
                parsed: self.envelope_value(v),
            })
            .collect())
    }

    fn lines(
        &self,
        body: &[u8],
        parse: &mut dyn FnMut(&str) -> Result<Envelope, LineError>,
    ) -> Vec<Item> {
        let mut items = Vec::new();
        for (n, raw) in body.split(|&b| b == b'\n').enumerate() {
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            let parsed = if raw.len() > MAX_LINE_BYTES {
                Err(LineError::TooLong(raw.len() as u64))
            } else {
                match std::str::from_utf8(raw) {
                    Ok(line) if line.trim().is_empty() => continue,
                    Ok(line) => parse(line),
                    Err(_) => Err(LineError::NotUtf8),
                }
            };
            items.push(Item {
                index: items.len(),
                line: Some(n + 1),
                parsed,
            });
        }
        items
    }
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
