//! The `tests-at-stop` pack: when the agent wants to end its turn, the
//! project's tests run (through the `exec` grant); while they fail, the
//! turn goes on with the end of their output, as far as the loop governor
//! (`[governor] max_continues`) lets it. docs/packs/tests-at-stop.md.

use serde::{Deserialize, Serialize};

use crate::Invalid;

/// The `exec` program that runs the tests.
pub const PROGRAM: &str = "tests";

/// The most milliseconds a run may take (the `exec` grant's own cap).
pub const MAX_TIMEOUT_MS: u64 = 120_000;

/// The most bytes of the tests' output the model may be shown.
pub const MAX_SHOWN_BYTES: usize = 10_000;

/// `[packs.tests-at-stop]` in `hookrt.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// The command that runs the tests: the program (absolute, or found on
    /// `PATH` when the folder loads) and its arguments.
    pub command: Vec<String>,
    /// How long the tests may take, in milliseconds; the whole process
    /// group is killed at it.
    pub timeout_ms: u64,
    /// Most processes the run may have at once.
    pub processes: u64,
    /// Host variables the tests get (every other one is absent).
    pub env: Vec<String>,
    /// Folders they may read besides the project and the system's.
    pub read: Vec<String>,
    /// Whether the run gets a private temporary folder (`TMPDIR`).
    pub tmp: bool,
    /// How much of the end of their output the model is shown.
    pub shown_bytes: usize,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            command: Vec::new(),
            timeout_ms: 110_000,
            processes: 64,
            env: vec!["PATH".into()],
            read: Vec::new(),
            tmp: true,
            shown_bytes: 2_000,
        }
    }
}

impl Settings {
    /// Checks the command (a program, no placeholder) and the caps.
    pub fn check(&self) -> Result<(), Invalid> {
        if self.command.first().is_none_or(String::is_empty) {
            return Err(Invalid::new(
                "command",
                "`command` names no program: e.g. `command = [\"cargo\", \"test\"]`",
            ));
        }
        if let Some(word) = self.command.iter().find(|w| w.contains(['{', '}'])) {
            return Err(Invalid::new(
                "command",
                format!(
                    "`command`: `{word}` holds a brace; the tests' command takes no placeholder"
                ),
            ));
        }
        if self.timeout_ms == 0 || self.timeout_ms > MAX_TIMEOUT_MS {
            return Err(Invalid::new(
                "timeout_ms",
                format!("`timeout_ms` is between 1 and {MAX_TIMEOUT_MS}"),
            ));
        }
        if self.shown_bytes > MAX_SHOWN_BYTES {
            return Err(Invalid::new(
                "shown_bytes",
                format!("`shown_bytes` is at most {MAX_SHOWN_BYTES}"),
            ));
        }
        Ok(())
    }
}

/// What the model is told while the tests fail: why, and the end of their
/// output (at most `shown` bytes, cut at a character boundary).
pub fn continuation(output: &[u8], timed_out: bool, shown: usize) -> String {
    let text = String::from_utf8_lossy(output);
    let mut start = text.len().saturating_sub(shown);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let why = if timed_out {
        "did not finish in time"
    } else {
        "fail"
    };
    format!(
        "tests-at-stop: the project's tests {why}. Fix them before you finish. Their output ends with:\n{}",
        &text[start..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_and_caps_are_checked_by_key() {
        let ok = Settings {
            command: vec!["cargo".into(), "test".into()],
            ..Settings::default()
        };
        assert!(ok.check().is_ok());
        assert_eq!(Settings::default().check().unwrap_err().key, "command");
        let braces = Settings {
            command: vec!["make".into(), "{target}".into()],
            ..Settings::default()
        };
        assert_eq!(braces.check().unwrap_err().key, "command");
        let slow = Settings {
            timeout_ms: 0,
            ..ok.clone()
        };
        assert_eq!(slow.check().unwrap_err().key, "timeout_ms");
        let chatty = Settings {
            shown_bytes: MAX_SHOWN_BYTES + 1,
            ..ok
        };
        assert_eq!(chatty.check().unwrap_err().key, "shown_bytes");
    }

    #[test]
    fn the_model_sees_the_end_of_the_output_cut_at_a_character() {
        let told = continuation("é".repeat(10).as_bytes(), false, 5);
        assert!(
            told.ends_with("éé") && told.contains("tests fail"),
            "{told}"
        );
        assert!(continuation(b"x", true, 100).contains("did not finish in time"));
    }
}
