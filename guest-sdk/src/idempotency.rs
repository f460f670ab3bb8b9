//! Keys that make one external side effect happen once, however often delivery repeats.

use crate::Event;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
// A second, unrelated start value so the two 64-bit halves differ.
const SECOND_OFFSET: u64 = 0x6c62_272e_07bb_0142;

/// A stable key for the side effect `purpose` of this event: the same for every delivery
/// attempt of the event, different for each purpose. 32 hex characters.
///
/// Derived from the envelope's idempotency key (never the attempt) with FNV-1a; it is a
/// deduplication key, not a secret and not collision-proof against an adversary. Hand it
/// to the system a side effect goes to (an `Idempotency-Key` header, say), so it drops a
/// repeat:
///
/// ```
/// use hookrt_sdk::prelude::*;
///
/// let line = |attempt: u32| format!(
///     r#"{{"schema_version":1,"id":"evt_9","kind":"turn.failed","timestamp":"t","attempt":{attempt},
///         "idempotency_key":"k9","coordinates":{{"agent":"a","session":"s","sequence":9}},
///         "data":{{"reason":"boom"}}}}"#
/// );
/// let (first, retry) = (Event::from_json(&line(1))?, Event::from_json(&line(2))?);
/// assert!(retry.is_retry());
/// let key = idempotency_key(&first, "pagerduty");
/// assert_eq!(key.len(), 32);
/// assert_eq!(key, idempotency_key(&retry, "pagerduty"), "the same on every attempt");
/// assert_ne!(key, idempotency_key(&first, "slack"), "one key per side effect");
/// # Ok::<(), HookError>(())
/// ```
pub fn idempotency_key(event: &Event, purpose: &str) -> String {
    key_from(event.idempotency_key(), purpose)
}

fn key_from(envelope_key: &str, purpose: &str) -> String {
    // Length-prefix each piece so ("ab", "c") and ("a", "bc") never collide by framing.
    let mut framed = Vec::with_capacity(envelope_key.len() + purpose.len() + 16);
    for piece in [envelope_key, purpose] {
        framed.extend_from_slice(&(piece.len() as u64).to_le_bytes());
        framed.extend_from_slice(piece.as_bytes());
    }
    format!(
        "{:016x}{:016x}",
        fnv1a(FNV_OFFSET, &framed),
        fnv1a(SECOND_OFFSET, &framed)
    )
}

fn fnv1a(offset: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(offset, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(FNV_PRIME)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_stable_and_depends_on_both_pieces() {
        let a = key_from("ses_1/evt_1", "notify");
        assert_eq!(a, key_from("ses_1/evt_1", "notify"));
        assert_eq!(a.len(), 32);
        assert_ne!(a, key_from("ses_1/evt_1", "ticket"));
        assert_ne!(a, key_from("ses_1/evt_2", "notify"));
        assert_ne!(key_from("ab", "c"), key_from("a", "bc"));
    }

    #[test]
    fn fnv1a_matches_reference_vector() {
        // FNV-1a 64 of "a" from the reference test suite.
        assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
