//! Input: envelopes from the text a front end receives.
//!
//! One [`Reader`] per stream of lines: hookrt envelopes, each numbered in
//! its step ([`Ordinals`]) and validated, or Eve's NDJSON session stream.
//! Lines are bounded by [`MAX_LINE_BYTES`]: a longer one is refused with
//! [`LineError::TooLong`], read or not ([`read_line`] never holds it whole).

use std::io::BufRead;

use crate::event::envelope::{Envelope, EnvelopeError, MAX_DATA_BYTES};
use crate::event::eve::{EveError, EveStream};
use crate::event::ordinal::Ordinals;

/// The longest envelope line taken, by every front end: `data` may hold up
/// to [`MAX_DATA_BYTES`], plus room for the other fields. Blocks a caller
/// from making a front end hold an unbounded line in memory.
pub const MAX_LINE_BYTES: usize = MAX_DATA_BYTES + 64 * 1024;

/// Why a line is no envelope, for every front end: the same words for the
/// same fault, and the error it came from as `source()`.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// The line was longer than [`MAX_LINE_BYTES`]; this many bytes were skipped.
    #[error("{0} bytes, longer than the {MAX_LINE_BYTES} bytes an envelope line may take; skipped")]
    TooLong(u64),
    /// The line is not UTF-8.
    #[error("not valid UTF-8")]
    NotUtf8,
    /// The line is no valid envelope.
    #[error(transparent)]
    Envelope(#[from] EnvelopeError),
    /// The line is no usable line of Eve's stream.
    #[error(transparent)]
    Eve(#[from] EveError),
}

/// What the lines of a stream are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputFormat {
    /// hookrt envelopes, one per line (docs/envelope.md).
    Jsonl,
    /// Eve's NDJSON session stream (docs/adr/0002-eve-bridge.md).
    Eve {
        /// The agent's name (Eve's lines do not carry it).
        agent: String,
        /// The session id (or its stream URL, [`session_id`]).
        session: String,
        /// The stream is this subagent's own child session.
        subagent: Option<String>,
    },
}

/// The session id in `session`, which may be Eve's stream URL
/// `/eve/v1/session/<id>/stream`.
pub fn session_id(session: &str) -> &str {
    session
        .split_once("/session/")
        .map_or(session, |(_, rest)| rest.split('/').next().unwrap_or(rest))
}

/// Turns the lines of one stream into envelopes.
#[derive(Debug)]
pub enum Reader {
    /// hookrt envelopes, numbered across the stream.
    Jsonl(Ordinals),
    /// Eve's session stream.
    Eve(Box<EveStream>),
}

impl Reader {
    /// A reader of a new stream of `format`.
    pub fn new(format: &InputFormat) -> Reader {
        match format {
            InputFormat::Jsonl => Reader::Jsonl(Ordinals::new()),
            InputFormat::Eve {
                agent,
                session,
                subagent,
            } => {
                let mut stream = EveStream::new(agent.clone(), session_id(session));
                if let Some(name) = subagent {
                    stream = stream.for_subagent(name.clone());
                }
                Reader::Eve(Box::new(stream))
            }
        }
    }

    /// A reader of a new stream of `format` that goes on from what
    /// `journal` holds: an Eve stream starts from the places its session's
    /// events took there, so a line Eve sends again (read by an earlier run
    /// or server) is a duplicate, not a conflict. Other formats are as new.
    pub fn resuming(
        format: &InputFormat,
        journal: &std::path::Path,
    ) -> Result<Reader, crate::service::journal::JournalError> {
        let mut reader = Reader::new(format);
        if let (
            Reader::Eve(stream),
            InputFormat::Eve {
                agent,
                session,
                subagent,
            },
        ) = (&mut reader, format)
        {
            let places = crate::service::journal::Journal::open_existing(journal)?
                .places_in_stream(agent, session_id(session), subagent.as_deref())?;
            for (id, place) in places {
                stream.remember(&id, place);
            }
        }
        Ok(reader)
    }

    /// The envelope of one line, or why there is none.
    pub fn envelope(&mut self, line: &str) -> Result<Envelope, LineError> {
        Ok(match self {
            Reader::Jsonl(ordinals) => numbered(ordinals, Envelope::from_json(line)?)?,
            Reader::Eve(stream) => stream.envelope(line)?,
        })
    }
}

/// `e` numbered in its step by `ordinals`, then validated.
pub fn numbered(ordinals: &mut Ordinals, mut e: Envelope) -> Result<Envelope, EnvelopeError> {
    // An envelope read by `Envelope::from_json` was checked there: only
    // what the ordinal changes (its idempotency key) is done again.
    let checked = e.texts_checked();
    ordinals.assign(&mut e);
    e.validate_numbered(checked)?;
    Ok(e)
}

/// One line of input, read with a bound.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// The line, without its newline.
    Text(Vec<u8>),
    /// The line was longer than the bound; this many bytes were skipped.
    TooLong(u64),
}

/// Reads the next line into at most `max` bytes of memory; `None` at the
/// end. A longer line is skipped to its newline, never held whole.
pub fn read_line(input: &mut dyn BufRead, max: usize) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut skipped: u64 = 0;
    let mut read_any = false;
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        read_any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if skipped == 0 && line.len() + chunk.len() <= max {
            line.extend_from_slice(chunk);
        } else {
            // Over the bound: drop what was kept and count the rest.
            skipped += (line.len() + chunk.len()) as u64;
            line = Vec::new();
        }
        let used = done.unwrap_or(chunk.len());
        input.consume(used);
        if done.is_some() {
            break;
        }
    }
    Ok(match (read_any, skipped) {
        (false, _) => None,
        (true, 0) => Some(Line::Text(line)),
        (true, n) => Some(Line::TooLong(n)),
    })
}

/// One line's text, or why it is no envelope line: `None` for a blank line.
pub fn text_of(line: Line) -> Option<Result<String, LineError>> {
    match line {
        Line::Text(bytes) => match String::from_utf8(bytes) {
            Ok(text) if text.trim().is_empty() => None,
            Ok(text) => Some(Ok(text)),
            Err(_) => Some(Err(LineError::NotUtf8)),
        },
        Line::TooLong(len) => Some(Err(LineError::TooLong(len))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_past_the_bound_is_skipped_to_its_newline_and_the_next_is_read() {
        let text = b"0123456789\nabc\n";
        let mut input = &text[..];
        assert_eq!(read_line(&mut input, 4).unwrap(), Some(Line::TooLong(10)));
        assert_eq!(
            read_line(&mut input, 4).unwrap(),
            Some(Line::Text(b"abc".to_vec()))
        );
        assert_eq!(read_line(&mut input, 4).unwrap(), None);
    }

    #[test]
    fn eve_session_may_be_its_stream_url() {
        assert_eq!(session_id("/eve/v1/session/abc/stream"), "abc");
        assert_eq!(session_id("abc"), "abc");
    }
}
