//! Capture: what a hook writes (log lines, stdout, stderr), kept within the
//! delivery's output budget.
//!
//! Writes past the budget are dropped, not refused: a hook that floods its
//! output keeps running (and is stopped by fuel or deadline if it floods
//! forever), and the delivery is marked `output_truncated`.
//!
//! The budget counts entries as well as bytes: an empty line or field costs no
//! bytes, so without [`MAX_LOG_LINES`] and [`MAX_FIELDS_PER_LINE`] a hook could
//! grow host memory without bound through the default `log` grant. Each cut
//! leaves its own marker. The `[hookrt]` prefix is the runtime's: a hook line
//! that starts with it is escaped ([`HOOK_ESCAPE`]), so a marker in the output
//! is always the runtime's own.

use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

use crate::sandbox::wit::Level;

/// Log lines kept per delivery. An empty line costs no output bytes, so this
/// is what bounds host memory against a flood of empty `log` calls.
pub(crate) const MAX_LOG_LINES: usize = 1_000;
/// Fields kept per log line (the rest are dropped): empty fields cost no
/// bytes, so this bounds what one `log` call can make the host hold.
pub(crate) const MAX_FIELDS_PER_LINE: usize = 32;
/// What starts every line the runtime writes into a hook's output.
pub(crate) const RUNTIME_PREFIX: &str = "[hookrt]";
/// Put before a hook's line that starts with [`RUNTIME_PREFIX`], so the hook
/// cannot pass its text off as the runtime's (a forged cut marker, or lines
/// the per-minute cap would take for runtime text).
pub(crate) const HOOK_ESCAPE: &str = "(hook) ";

/// Which console stream a write came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Stream {
    /// The guest's stdout.
    Stdout,
    /// The guest's stderr.
    Stderr,
}

/// One structured log line from a hook.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LogLine {
    /// Severity.
    pub level: &'static str,
    /// The message.
    pub message: String,
    /// Structured fields, in the order the hook gave them.
    pub fields: Vec<(String, String)>,
}

/// Everything one delivery wrote, within its budget.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Output {
    /// Log lines, in order.
    pub logs: Vec<LogLine>,
    /// Captured stdout (lossy UTF-8).
    pub stdout: String,
    /// Captured stderr (lossy UTF-8).
    pub stderr: String,
    /// Whether anything was dropped because the budget ran out.
    pub truncated: bool,
}

#[derive(Debug, Default)]
struct Buffer {
    limit: usize,
    used: usize,
    truncated: bool,
    /// Bytes dropped at the output budget.
    bytes_cut: bool,
    /// Lines dropped at [`MAX_LOG_LINES`].
    lines_cut: bool,
    /// Fields dropped at [`MAX_FIELDS_PER_LINE`].
    fields_cut: bool,
    logs: Vec<LogLine>,
    /// The runtime's own lines (each use of a grant), outside the budget.
    records: Vec<LogLine>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Buffer {
    /// How many of `wanted` bytes still fit; marks truncation when not all do.
    fn reserve(&mut self, wanted: usize) -> usize {
        let fit = wanted.min(self.limit - self.used);
        self.used += fit;
        if fit < wanted {
            self.truncated = true;
            self.bytes_cut = true;
        }
        fit
    }
}

/// The shared output budget of one store: the log import and both console
/// streams draw from it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Capture(Arc<Mutex<Buffer>>);

impl Capture {
    /// A capture that keeps at most `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        Capture(Arc::new(Mutex::new(Buffer {
            limit,
            ..Buffer::default()
        })))
    }

    fn lock(&self) -> MutexGuard<'_, Buffer> {
        // A poisoned lock only means a panic elsewhere mid-write; the data is still usable.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a log line if it fits whole; otherwise drops it and marks
    /// truncation. Fields past [`MAX_FIELDS_PER_LINE`] are dropped, lines past
    /// [`MAX_LOG_LINES`] too; a message starting with [`RUNTIME_PREFIX`] is escaped.
    pub(crate) fn log(&self, level: Level, message: String, mut fields: Vec<(String, String)>) {
        let mut b = self.lock();
        if b.logs.len() >= MAX_LOG_LINES {
            b.lines_cut = true;
            b.truncated = true;
            return;
        }
        if fields.len() > MAX_FIELDS_PER_LINE {
            fields.truncate(MAX_FIELDS_PER_LINE);
            b.fields_cut = true;
            b.truncated = true;
        }
        let message = if message.starts_with(RUNTIME_PREFIX) {
            format!("{HOOK_ESCAPE}{message}")
        } else {
            message
        };
        let size = message.len() + fields.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
        if size > b.limit - b.used {
            b.truncated = true;
            b.bytes_cut = true;
            b.used = b.limit;
            return;
        }
        b.used += size;
        b.logs.push(LogLine {
            level: level_name(level),
            message,
            fields,
        });
    }

    /// Records a runtime line (`[hookrt] message`) about what the hook did
    /// through a grant: outside the budget, so the hook cannot crowd it out,
    /// and at most [`MAX_LOG_LINES`] of them.
    pub(crate) fn record(&self, message: String, fields: Vec<(String, String)>) {
        let mut b = self.lock();
        if b.records.len() < MAX_LOG_LINES {
            b.records.push(LogLine {
                level: "info",
                message: format!("{RUNTIME_PREFIX} {message}"),
                fields,
            });
        }
    }

    fn write(&self, stream: Stream, bytes: &[u8]) {
        let mut b = self.lock();
        let fit = b.reserve(bytes.len());
        let buf = match stream {
            Stream::Stdout => &mut b.stdout,
            Stream::Stderr => &mut b.stderr,
        };
        buf.extend_from_slice(&bytes[..fit]);
    }

    /// Takes what was captured and resets the budget for the next delivery.
    pub(crate) fn take(&self) -> Output {
        let mut b = self.lock();
        let mut logs = std::mem::take(&mut b.logs);
        logs.append(&mut b.records);
        // Each marker says which cap cut; markers do not count against the budget.
        let mut marker = |text: String| {
            logs.push(LogLine {
                level: "warn",
                message: format!("{RUNTIME_PREFIX} {text}"),
                fields: Vec::new(),
            })
        };
        if b.fields_cut {
            marker(format!(
                "fields cut at the {MAX_FIELDS_PER_LINE}-field limit per log line"
            ));
        }
        if b.lines_cut {
            marker(format!(
                "log lines cut at the {MAX_LOG_LINES}-line limit per delivery"
            ));
        }
        if b.bytes_cut {
            marker(format!(
                "output cut at the {}-byte output_bytes limit",
                b.limit
            ));
        }
        let out = Output {
            logs,
            stdout: String::from_utf8_lossy(&std::mem::take(&mut b.stdout)).into_owned(),
            stderr: String::from_utf8_lossy(&std::mem::take(&mut b.stderr)).into_owned(),
            truncated: b.truncated,
        };
        b.used = 0;
        b.truncated = false;
        b.bytes_cut = false;
        b.lines_cut = false;
        b.fields_cut = false;
        out
    }

    /// A WASI stdout/stderr that writes into this capture.
    pub(crate) fn stream(&self, stream: Stream) -> ConsoleStream {
        ConsoleStream {
            capture: self.clone(),
            stream,
        }
    }
}

/// The textual name of a level.
pub(crate) fn level_name(level: Level) -> &'static str {
    match level {
        Level::Trace => "trace",
        Level::Debug => "debug",
        Level::Info => "info",
        Level::Warn => "warn",
        Level::Error => "error",
    }
}

/// A guest console stream backed by a [`Capture`].
#[derive(Debug, Clone)]
pub(crate) struct ConsoleStream {
    capture: Capture,
    stream: Stream,
}

impl IsTerminal for ConsoleStream {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for ConsoleStream {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for ConsoleStream {
    async fn ready(&mut self) {}
}

impl OutputStream for ConsoleStream {
    fn write(&mut self, bytes: bytes::Bytes) -> Result<(), StreamError> {
        self.capture.write(self.stream, &bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        // Always accept: excess is dropped in `write`, so a flooding guest never
        // sees an error it could turn into a trap.
        Ok(64 * 1024)
    }
}

impl tokio::io::AsyncWrite for ConsoleStream {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.capture.write(self.stream, buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
