//! The envelope's clock: RFC 3339 timestamps, written (UTC, with
//! milliseconds, with no time crate) and recognised.

/// The current UTC time as RFC 3339 with milliseconds.
pub fn now_rfc3339() -> String {
    rfc3339(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default(),
    )
}

/// The UTC time `now` after the Unix epoch as RFC 3339 with milliseconds.
pub(crate) fn rfc3339(now: std::time::Duration) -> String {
    let secs = now.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_millis()
    )
}

/// Whether `s` is an RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`,
/// with fields in range (the day is checked against 31, not the month's length).
pub(crate) fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let num = |from: usize, len: usize, max: u32| -> bool {
        b.get(from..from + len).is_some_and(|d| {
            d.iter().all(u8::is_ascii_digit)
                && d.iter().fold(0u32, |n, c| n * 10 + u32::from(c - b'0')) <= max
        })
    };
    let date = num(0, 4, 9999)
        && b.get(4) == Some(&b'-')
        && num(5, 2, 12)
        && b.get(7) == Some(&b'-')
        && num(8, 2, 31);
    let sep = matches!(b.get(10), Some(b'T' | b't'));
    let time = num(11, 2, 23)
        && b.get(13) == Some(&b':')
        && num(14, 2, 59)
        && b.get(16) == Some(&b':')
        && num(17, 2, 60);
    if !(date && sep && time) || &s[5..7] == "00" || &s[8..10] == "00" {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        rest = &frac[digits..];
    }
    match rest.as_bytes() {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', ..] if rest.len() == 6 => {
            let o = rest.as_bytes();
            o[3] == b':'
                && o[1..3].iter().chain(&o[4..6]).all(u8::is_ascii_digit)
                && &rest[1..3] <= "23"
                && &rest[4..6] <= "59"
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_timestamps_with_offsets_are_accepted_and_loose_ones_refused() {
        for ok in [
            "2026-11-30T09:00:00Z",
            "2026-11-30T09:00:00.123456Z",
            "2026-11-30T10:00:00+01:00",
            "2026-11-30t09:00:00z",
        ] {
            assert!(is_rfc3339(ok), "{ok}");
        }
        for bad in [
            "2026-11-30 09:00:00Z",
            "2026-11-30T09:00:00",
            "2026-13-30T09:00:00Z",
            "2026-11-30T09:00:00.Z",
            "2026-11-30T09:00:00+0100",
            "yesterday",
            "",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }

    #[test]
    fn now_is_a_valid_timestamp() {
        let now = now_rfc3339();
        assert!(is_rfc3339(&now), "{now}");
        assert!(now.as_str() > "2026-01-01");
    }
}
