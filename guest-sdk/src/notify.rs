//! Desktop notifications (world 0.4.0, the `notify` grant):
//! `notify::send("Claude Code", "needs your input", Urgency::Normal)?`.
//!
//! The host shows the notification through the user's notifier (on Linux,
//! `org.freedesktop.Notifications` on the session bus) as app `hookrt`, after
//! cutting the title and body to its bounds, dropping control characters and
//! escaping markup in the body. A notification with the same title as one
//! this hook showed before replaces it. The grant's table rate-limits a hook:
//! a refused call is [`NotifyError::RateLimited`], which a hook usually lets
//! pass. Off wasm (native unit tests of a hook) nothing is shown: every call
//! is [`NotifyError::Unavailable`].

use std::fmt;

use crate::HookError;

/// How urgent a notification is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Urgency {
    /// Informational.
    Low,
    /// The usual.
    Normal,
    /// Needs the user now (most notifiers keep it until dismissed).
    Critical,
}

/// Why a notification was not shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotifyError {
    /// Over the grant's rate limit (`per_minute`).
    RateLimited,
    /// No notifier was reached; the text says what was tried.
    Unavailable(String),
}

impl fmt::Display for NotifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotifyError::RateLimited => f.write_str("notify: rate-limited"),
            NotifyError::Unavailable(why) => write!(f, "notify: unavailable: {why}"),
        }
    }
}

impl std::error::Error for NotifyError {}

impl From<NotifyError> for HookError {
    fn from(e: NotifyError) -> Self {
        HookError::new(e.to_string())
    }
}

/// Shows a notification with `title`, `body` and `urgency`.
pub fn send(title: &str, body: &str, urgency: Urgency) -> Result<(), NotifyError> {
    backend::send(title, body, urgency)
}

#[cfg(target_arch = "wasm32")]
mod backend {
    use super::{NotifyError, Urgency};
    use crate::bindings::hookrt::hook::notify::{self, NotifyError as Wit, Urgency as WitUrgency};

    pub(super) fn send(title: &str, body: &str, urgency: Urgency) -> Result<(), NotifyError> {
        let urgency = match urgency {
            Urgency::Low => WitUrgency::Low,
            Urgency::Normal => WitUrgency::Normal,
            Urgency::Critical => WitUrgency::Critical,
        };
        notify::send(title, body, urgency).map_err(|e| match e {
            Wit::RateLimited => NotifyError::RateLimited,
            Wit::Unavailable(why) => NotifyError::Unavailable(why),
        })
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod backend {
    use super::{NotifyError, Urgency};

    pub(super) fn send(_title: &str, _body: &str, _urgency: Urgency) -> Result<(), NotifyError> {
        Err(NotifyError::Unavailable("no notifier off wasm".to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_wasm_a_notification_is_unavailable_and_converts_into_a_hook_error() {
        let err = send("t", "b", Urgency::Normal).unwrap_err();
        assert_eq!(err, NotifyError::Unavailable("no notifier off wasm".into()));
        let hook: HookError = NotifyError::RateLimited.into();
        assert_eq!(hook.message(), "notify: rate-limited");
    }
}
