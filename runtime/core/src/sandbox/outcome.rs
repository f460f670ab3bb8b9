//! Outcomes: how one delivery ended.

use std::fmt;

/// How one delivery ended. Exactly one per delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The handler returned normally.
    Ok,
    /// The handler returned an error.
    Error,
    /// The hook trapped (panic, unreachable, stack overflow, bad instantiation...).
    Trap,
    /// The wall-clock deadline passed; the hook was interrupted.
    Timeout,
    /// The hook used up its fuel.
    OutOfFuel,
    /// The hook hit its memory (or table) limit.
    OutOfMemory,
}

impl Outcome {
    /// Every outcome, in a stable order for summaries.
    pub const ALL: [Outcome; 6] = [
        Outcome::Ok,
        Outcome::Error,
        Outcome::Trap,
        Outcome::Timeout,
        Outcome::OutOfFuel,
        Outcome::OutOfMemory,
    ];

    /// The outcome as written in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Trap => "trap",
            Outcome::Timeout => "timeout",
            Outcome::OutOfFuel => "out_of_fuel",
            Outcome::OutOfMemory => "out_of_memory",
        }
    }

    /// Whether the delivery failed.
    pub fn is_failure(self) -> bool {
        self != Outcome::Ok
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
