//! Subjects: where an envelope is published, and which partition it is in.
//!
//! An event goes to `<prefix>.<agent>.<session>.<partition>` (default prefix
//! `hookrt.events`), so one session's events share one subject and stay in
//! stream order, and a worker consumes a partition with one filter
//! (`<prefix>.*.*.<partition>`: nats-server 2.9 has one filter per
//! consumer). The partition is a stable hash of (agent, session), so every
//! publisher and worker agrees on it without asking anyone.

use hookrt::Envelope;

/// The subject prefix events are published under.
pub const DEFAULT_PREFIX: &str = "hookrt.events";
/// How many partitions sessions are hashed into: the most workers that can
/// share a stream's work (each partition is owned by one worker at a time).
pub const DEFAULT_PARTITIONS: u32 = 16;
/// The most partitions: each is a consumer and a lease to keep.
pub(crate) const MAX_PARTITIONS: u32 = 1024;

/// `text` as one subject token (and KV key token): `[A-Za-z0-9_-]` kept, any
/// other byte written `=XX` (hex), so `.`, `*`, `>` and spaces can never
/// split or widen a subject, and two different texts never share a token.
/// The empty text is `=`.
pub(crate) fn token(text: &str) -> String {
    if text.is_empty() {
        return "=".to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("={b:02X}"));
        }
    }
    out
}

/// The partition of a session: FNV-1a (64-bit) of `agent`, a 0xFF byte and
/// `session`, modulo `partitions`. Stable across versions and machines: it is
/// part of the wire format (docs/worker.md).
pub(crate) fn partition_of(agent: &str, session: &str, partitions: u32) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in agent.bytes().chain([0xFF]).chain(session.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h % u64::from(partitions.max(1))) as u32
}

/// The subject `envelope` is published to.
pub(crate) fn subject_of(prefix: &str, envelope: &Envelope, partitions: u32) -> String {
    let c = &envelope.coordinates;
    format!(
        "{prefix}.{}.{}.{}",
        token(&c.agent),
        token(&c.session),
        partition_of(&c.agent, &c.session, partitions)
    )
}

/// The filter of one partition's consumer.
pub(crate) fn partition_filter(prefix: &str, partition: u32) -> String {
    format!("{prefix}.*.*.{partition}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_keep_safe_bytes_and_escape_the_rest() {
        assert_eq!(token("ses_7f3a-B"), "ses_7f3a-B");
        assert_eq!(token("a.b*c>d e"), "a=2Eb=2Ac=3Ed=20e");
        assert_eq!(token("=2E"), "=3D2E");
        assert_eq!(token(""), "=");
        assert_eq!(token("é"), "=C3=A9");
    }

    #[test]
    fn partitions_are_stable_and_in_range() {
        assert_eq!(
            partition_of("agent", "s1", 16),
            partition_of("agent", "s1", 16)
        );
        for s in 0..100 {
            assert!(partition_of("a", &format!("s{s}"), 7) < 7);
        }
        // The agent/session boundary is part of the hash.
        assert_ne!(
            partition_of("ab", "c", 1 << 20),
            partition_of("a", "bc", 1 << 20)
        );
    }
}
