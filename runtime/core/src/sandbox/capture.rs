//! Capture: what a hook writes (log lines, stdout, stderr), kept within the
//! delivery's output budget.
//!
//! Writes past the budget are dropped, not refused: a hook that floods its
//! output keeps running (and is stopped by fuel or deadline if it floods
//! forever), and the delivery is marked `output_truncated`.

use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

use crate::sandbox::wit::Level;

/// Which console stream a write came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
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
    logs: Vec<LogLine>,
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
        }
        fit
    }
}

/// The shared output budget of one store: the log import and both console
/// streams draw from it.
#[derive(Debug, Clone, Default)]
pub struct Capture(Arc<Mutex<Buffer>>);

impl Capture {
    /// A capture that keeps at most `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Capture(Arc::new(Mutex::new(Buffer {
            limit,
            ..Buffer::default()
        })))
    }

    fn lock(&self) -> MutexGuard<'_, Buffer> {
        // A poisoned lock only means a panic elsewhere mid-write; the data is still usable.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a log line if it fits whole; otherwise drops it and marks truncation.
    pub fn log(&self, level: Level, message: String, fields: Vec<(String, String)>) {
        let size = message.len() + fields.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
        let mut b = self.lock();
        if size > b.limit - b.used {
            b.truncated = true;
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
    pub fn take(&self) -> Output {
        let mut b = self.lock();
        let mut logs = std::mem::take(&mut b.logs);
        if b.truncated {
            // The marker says where the cut is; it does not count against the budget.
            logs.push(LogLine {
                level: "warn",
                message: format!(
                    "[hookrt] output cut at the {}-byte output_bytes limit",
                    b.limit
                ),
                fields: Vec::new(),
            });
        }
        let out = Output {
            logs,
            stdout: String::from_utf8_lossy(&std::mem::take(&mut b.stdout)).into_owned(),
            stderr: String::from_utf8_lossy(&std::mem::take(&mut b.stderr)).into_owned(),
            truncated: b.truncated,
        };
        b.used = 0;
        b.truncated = false;
        out
    }

    /// A WASI stdout/stderr that writes into this capture.
    pub fn stream(&self, stream: Stream) -> ConsoleStream {
        ConsoleStream {
            capture: self.clone(),
            stream,
        }
    }
}

/// The textual name of a level.
pub fn level_name(level: Level) -> &'static str {
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
pub struct ConsoleStream {
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
