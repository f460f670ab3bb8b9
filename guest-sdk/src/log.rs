//! Structured logging to the host: `log::info("message", &[("key", "value")])`.
//!
//! The host caps line size and count per delivery. Never log event data that may hold
//! secrets (message content, tool inputs and outputs); [`safe_log`] logs only ids, kind,
//! scope and timing. Off wasm (native unit tests of a hook) lines go to stderr instead.

use crate::{Context, Event};

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Very detailed diagnostics.
    Trace,
    /// Diagnostics useful while writing a hook.
    Debug,
    /// Normal operation.
    Info,
    /// Something unexpected that the hook recovered from.
    Warn,
    /// Something failed.
    Error,
}

/// Emit one log line at `level` with structured fields ([`trace`], [`debug`], [`info`],
/// [`warn`] and [`error`] name the level). The host keeps a hook's lines within its
/// `output_bytes` and `log_bytes_per_minute` budgets and redacts them
/// (docs/hooks-reference.md#log); a hook whose grants leave out `log` is refused at load
/// if it logs.
///
/// ```
/// use hookrt_sdk::log::{self, Level};
///
/// log::warn("tool call failed", &[("tool", "run_shell"), ("call_id", "c1")]);
/// log::log(Level::Debug, "checked", &[]);
/// ```
pub fn log(level: Level, message: &str, fields: &[(&str, &str)]) {
    emit(level, message, fields);
}

/// Emit a `trace` line.
pub fn trace(message: &str, fields: &[(&str, &str)]) {
    emit(Level::Trace, message, fields);
}

/// Emit a `debug` line.
pub fn debug(message: &str, fields: &[(&str, &str)]) {
    emit(Level::Debug, message, fields);
}

/// Emit an `info` line.
pub fn info(message: &str, fields: &[(&str, &str)]) {
    emit(Level::Info, message, fields);
}

/// Emit a `warn` line.
pub fn warn(message: &str, fields: &[(&str, &str)]) {
    emit(Level::Warn, message, fields);
}

/// Emit an `error` line.
pub fn error(message: &str, fields: &[(&str, &str)]) {
    emit(Level::Error, message, fields);
}

/// Emit one `info` line describing the delivery: event id, kind, slug, handler, scope
/// (`primary`, `subagent:<id>` or `aggregate`), attempt, sequence and budget. Never any of
/// the event's data.
pub fn safe_log(event: &Event, cx: &Context) {
    let attempt = event.attempt().to_string();
    let sequence = event.coordinates().sequence.to_string();
    let budget = cx.budget_ms().to_string();
    let scope = cx.scope().to_string();
    info(
        "event",
        &[
            ("event_id", event.id()),
            ("kind", event.kind()),
            ("slug", cx.slug()),
            ("handler", cx.handler()),
            ("scope", &scope),
            ("attempt", &attempt),
            ("sequence", &sequence),
            ("budget_ms", &budget),
        ],
    );
}

#[cfg(target_arch = "wasm32")]
fn emit(level: Level, message: &str, fields: &[(&str, &str)]) {
    use crate::bindings::hookrt::hook::log as host;
    let level = match level {
        Level::Trace => host::Level::Trace,
        Level::Debug => host::Level::Debug,
        Level::Info => host::Level::Info,
        Level::Warn => host::Level::Warn,
        Level::Error => host::Level::Error,
    };
    let fields: Vec<host::Field> = fields
        .iter()
        .map(|(key, value)| host::Field {
            key: (*key).to_owned(),
            value: (*value).to_owned(),
        })
        .collect();
    host::log(level, message, &fields);
}

// The host import only exists inside a component; natively (a hook's own unit tests)
// calling it would hit wit-bindgen's `unreachable!()` stub.
#[cfg(not(target_arch = "wasm32"))]
fn emit(level: Level, message: &str, fields: &[(&str, &str)]) {
    let mut line = format!("[{level:?}] {message}");
    for (key, value) in fields {
        line.push_str(&format!(" {key}={value:?}"));
    }
    eprintln!("{line}");
}
