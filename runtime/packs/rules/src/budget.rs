//! The `budget` pack: how many tool calls one session may make, in all and
//! per minute. Each session's count lives in a [`Ledger`] the component
//! keeps in its `state`; time is the event's own timestamp, so a replay
//! counts as the session did. A call the pack refuses is not counted, and a
//! delivery repeated after a crash (the same event id) counts once.
//! docs/packs/budget.md.

use serde::{Deserialize, Serialize};

use crate::{Answer, Invalid};

/// `[packs.budget]` in `hookrt.toml`; every key has a default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Tool calls one session may make in all (`0`: no cap).
    pub tool_calls_per_session: u64,
    /// Tool calls one session may make in any 60 seconds (`0`: no cap).
    pub tool_calls_per_minute: u64,
    /// What a call over the budget gets: `"deny"` (the default) or `"ask"`.
    pub answer: Answer,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            tool_calls_per_session: 500,
            tool_calls_per_minute: 60,
            answer: Answer::Deny,
        }
    }
}

/// The highest per-minute cap: the ledger keeps one time per call allowed
/// in the last minute.
pub const MAX_PER_MINUTE: u64 = 10_000;

impl Settings {
    /// Checks the caps' ranges.
    pub fn check(&self) -> Result<(), Invalid> {
        if self.tool_calls_per_minute > MAX_PER_MINUTE {
            return Err(Invalid::new(
                "tool_calls_per_minute",
                format!("`tool_calls_per_minute` is above {MAX_PER_MINUTE}; use 0 for no cap"),
            ));
        }
        Ok(())
    }
}

/// One session's use: the calls allowed so far, the times (seconds) of
/// those in the last minute, and the last event counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// Calls allowed in the session.
    pub calls: u64,
    /// When each call allowed in the last minute came, oldest first.
    pub recent: Vec<i64>,
    /// The event whose calls were counted last (a repeat counts once).
    pub last_event: String,
    /// How many calls that event counted.
    pub last_counted: u64,
}

impl Ledger {
    /// Counts the `n` calls of event `event_id` at `now` (seconds), and
    /// says for each whether it is within the budget: `None`, or the reason
    /// it is not. Calls over the budget are not counted.
    pub fn admit(
        &mut self,
        settings: &Settings,
        event_id: &str,
        now: i64,
        n: usize,
    ) -> Vec<Option<String>> {
        if self.last_event == event_id && !event_id.is_empty() {
            // A repeat of the event last counted: judged again, counted once.
            let counted = usize::try_from(self.last_counted).unwrap_or(usize::MAX);
            self.recent
                .truncate(self.recent.len().saturating_sub(counted));
            self.calls = self.calls.saturating_sub(self.last_counted);
        }
        self.last_event = event_id.to_owned();
        self.last_counted = 0;
        self.recent.retain(|t| now - *t < 60);
        (0..n)
            .map(|_| {
                let per_session = settings.tool_calls_per_session;
                if per_session > 0 && self.calls >= per_session {
                    return Some(format!(
                        "budget: this session made {} tool calls, the most `tool_calls_per_session` allows",
                        self.calls
                    ));
                }
                let per_minute = settings.tool_calls_per_minute;
                if per_minute > 0 && self.recent.len() as u64 >= per_minute {
                    return Some(format!(
                        "budget: this session made {} tool calls in the last minute, the most `tool_calls_per_minute` allows; wait, or raise it",
                        self.recent.len()
                    ));
                }
                self.calls += 1;
                self.last_counted += 1;
                self.recent.push(now);
                None
            })
            .collect()
    }
}

/// Seconds since 1970 of an RFC 3339 timestamp (`2026-12-06T12:00:00Z`,
/// `…+01:00`, fractions ignored), or `None`.
pub fn seconds(timestamp: &str) -> Option<i64> {
    let b = timestamp.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let s = timestamp.get(from..from + len)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (y, m, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, min, s) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || h > 23 || min > 59 || s > 60 {
        return None;
    }
    let mut rest = &timestamp[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        rest = frac.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let offset = match rest {
        "Z" | "z" => 0,
        o if o.len() == 6 && (o.starts_with('+') || o.starts_with('-')) => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            sign * (num(timestamp.len() - 5, 2)? * 3600 + num(timestamp.len() - 2, 2)? * 60)
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + min * 60 + s - offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_as_seconds() {
        assert_eq!(seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(seconds("2026-12-06T12:00:00Z"), Some(1_796_558_400));
        assert_eq!(
            seconds("2026-12-06T13:00:00.123+01:00"),
            Some(1_796_558_400)
        );
        assert_eq!(seconds("2000-02-29T00:00:00Z"), Some(951_782_400));
        for wrong in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-12-06 12:00",
            "2026-12-06T12:00:00",
            "x026-12-06T12:00:00Z",
        ] {
            assert_eq!(seconds(wrong), None, "{wrong}");
        }
    }

    #[test]
    fn the_session_cap_and_the_minute_cap_refuse_and_do_not_count_what_they_refuse() {
        let settings = Settings {
            tool_calls_per_session: 3,
            tool_calls_per_minute: 2,
            ..Settings::default()
        };
        let mut ledger = Ledger::default();
        assert_eq!(ledger.admit(&settings, "e1", 0, 2), [None, None]);
        let third = ledger.admit(&settings, "e2", 30, 1);
        assert!(
            third[0]
                .as_deref()
                .is_some_and(|r| r.contains("last minute")),
            "{third:?}"
        );
        assert_eq!(ledger.calls, 2);
        assert_eq!(ledger.admit(&settings, "e3", 61, 1), [None]);
        let over = ledger.admit(&settings, "e4", 200, 1);
        assert!(
            over[0].as_deref().is_some_and(
                |r| r.contains("made 3 tool calls") && r.contains("tool_calls_per_session")
            ),
            "{over:?}"
        );
        let off = Settings {
            tool_calls_per_session: 0,
            tool_calls_per_minute: 0,
            ..Settings::default()
        };
        assert!(
            Ledger::default()
                .admit(&off, "e", 0, 1000)
                .iter()
                .all(Option::is_none)
        );
    }

    #[test]
    fn a_repeated_event_counts_once() {
        let settings = Settings {
            tool_calls_per_session: 2,
            ..Settings::default()
        };
        let mut ledger = Ledger::default();
        assert_eq!(ledger.admit(&settings, "e1", 5, 2), [None, None]);
        // The same event again (a delivery repeated after a crash): same answers.
        assert_eq!(ledger.admit(&settings, "e1", 5, 2), [None, None]);
        assert_eq!(ledger.calls, 2);
        assert!(ledger.admit(&settings, "e2", 6, 1)[0].is_some());
    }

    #[test]
    fn a_cap_out_of_range_is_refused_by_name() {
        let settings = Settings {
            tool_calls_per_minute: MAX_PER_MINUTE + 1,
            ..Settings::default()
        };
        assert_eq!(settings.check().unwrap_err().key, "tool_calls_per_minute");
    }
}
