//! `HookError`: the one error type a handler returns.

use std::fmt;

/// Why a handler failed; its message becomes the `err` the host records for the delivery.
///
/// An `Err` fails the delivery with outcome `error`, its message (the first 1,000
/// characters) in the delivery record and the `delivery failed` warning. `String`,
/// `&str` and `serde_json::Error` convert into it, so `?` works on them. Say what was
/// wrong and with which event. A panic is no error: it traps the component (outcome
/// `trap`); prefer `Err`.
///
/// ```
/// use hookrt_sdk::prelude::*;
///
/// fn fails(event: &Event, _cx: &Context) -> HookResult {
///     Err(HookError::new(format!("refusing: this hook fails every event ({})", event.id())))
/// }
///
/// let event = Event::from_json(
///     r#"{"schema_version":1,"id":"evt_0001","kind":"session.started","timestamp":"t",
///        "coordinates":{"agent":"a","session":"s","sequence":0},"data":{"agent_name":"a"}}"#,
/// )?;
/// let err = fails(&event, &Context::new("*", "fails", 500)).unwrap_err();
/// assert_eq!(err.message(), "refusing: this hook fails every event (evt_0001)");
/// let bad: HookError = serde_json::from_str::<u32>("x").unwrap_err().into();
/// assert!(bad.message().starts_with("invalid event data: "));
/// # Ok::<(), HookError>(())
/// ```
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
