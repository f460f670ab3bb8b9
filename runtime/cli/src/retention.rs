//! Retention ages on the command line: how long a journal keeps finished
//! events (`hookrt run --retention`, `hookrt journal prune --older-than`).

use std::time::Duration;

/// How long the journal keeps finished events; `None`: forever.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Retention(pub Option<Duration>);

/// Reads `90s`, `30m`, `12h`, `7d` (a whole number and a unit) or `forever`.
pub(crate) fn parse_retention(text: &str) -> Result<Retention, String> {
    if text == "forever" {
        return Ok(Retention(None));
    }
    let unit = |s: &str| match s {
        "s" => Some(1),
        "m" => Some(60),
        "h" => Some(3600),
        "d" => Some(86_400),
        _ => None,
    };
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (n, u) = text.split_at(split);
    match (n.parse::<u64>(), unit(u)) {
        (Ok(n), Some(secs)) => n
            .checked_mul(secs)
            .map(|s| Retention(Some(Duration::from_secs(s))))
            .ok_or_else(|| format!("`{text}` is too long")),
        _ => Err(format!(
            "`{text}` is not an age: write a whole number and a unit (`90s`, `30m`, `12h`, `7d`) or `forever`"
        )),
    }
}
