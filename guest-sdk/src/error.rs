//! `HookError`: the one error type a handler returns.

use std::fmt;

/// Why a handler failed; its message becomes the `err` the host records for the delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookError {
    message: String,
}

/// What a handler returns: `Ok(answer)` (`Ok(())` when it has nothing to say; see
/// [`IntoResponse`](crate::IntoResponse)), or the reason the delivery failed.
pub type HookResult<T = ()> = Result<T, HookError>;

impl HookError {
    /// An error with this message (say what was wrong and, where it helps, what to do).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message the host will record.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HookError {}

impl From<serde_json::Error> for HookError {
    fn from(err: serde_json::Error) -> Self {
        Self::new(format!("invalid event data: {err}"))
    }
}

impl From<String> for HookError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for HookError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

impl From<HookError> for String {
    fn from(err: HookError) -> Self {
        err.message
    }
}
