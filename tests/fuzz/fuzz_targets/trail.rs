//! The trail's verifier (`verify_segment` with a key, as `hookrt journal
//! verify --export --key` runs it): a chain signed every 3 entries, with a
//! pruned range, is edited in place by the input (bytes of a body, a prev or
//! a hash, a kind, a position; two entries swapped; one in the middle
//! removed). It never verifies unless it is untouched, and it never panics.
//! (Cutting entries off either end is allowed by design: an export is a run
//! of the chain, and what only an anchor catches.)
#![no_main]

use std::sync::OnceLock;

use hookrt::journal::{Expect, Row, SigningKey, checkpoint_body, entry_hash, verify_segment};
use libfuzzer_sys::fuzz_target;

/// The signing key, and the untouched chain it signed.
fn chain() -> &'static (SigningKey, Vec<Row>) {
    static CHAIN: OnceLock<(SigningKey, Vec<Row>)> = OnceLock::new();
    CHAIN.get_or_init(|| {
        let key = SigningKey::from_bytes(&[42; 32]);
        let kinds = [
            "hooks",
            "event",
            "deliveries",
            "c",
            "resolution",
            "event",
            "c",
            "pruned",
            "c",
            "deliveries",
            "event",
            "c",
        ];
        let mut rows = Vec::new();
        let mut prev = vec![0u8; 32];
        for (i, k) in kinds.iter().enumerate() {
            let seq = i as i64 + 1;
            let (kind, body) = if *k == "c" {
                ("checkpoint", checkpoint_body(&key, 3, seq - 1, &prev))
            } else {
                (
                    *k,
                    serde_json::json!({"event": format!("evt_{seq}"), "n": seq}),
                )
            };
            let body = body.to_string();
            let hash = entry_hash(&prev, kind, &body);
            rows.push(Row {
                seq,
                kind: kind.to_owned(),
                event_seq: None,
                body,
                prev: hex::encode(&prev),
                hash: hex::encode(hash),
            });
            prev = hash.to_vec();
        }
        (key, rows)
    })
}

/// `text` with the byte at `at` (modulo its length) set to a printable `b`.
fn poke(text: &mut String, at: u8, b: u8) {
    if text.is_empty() {
        return;
    }
    let mut bytes = std::mem::take(text).into_bytes();
    let i = usize::from(at) % bytes.len();
    bytes[i] = b' ' + b % 95;
    *text = String::from_utf8(bytes).expect("printable ASCII");
}

fuzz_target!(|data: &[u8]| {
    let (key, original) = chain();
    let mut rows = original.clone();
    for op in data.chunks_exact(4) {
        let n = rows.len();
        if n < 3 {
            break;
        }
        let r = usize::from(op[0]) % n;
        match op[1] % 7 {
            0 => poke(&mut rows[r].body, op[2], op[3]),
            1 => poke(&mut rows[r].prev, op[2], op[3]),
            2 => poke(&mut rows[r].hash, op[2], op[3]),
            3 => poke(&mut rows[r].kind, op[2], op[3]),
            4 => rows[r].seq ^= i64::from(op[3]),
            5 => rows.swap(r, usize::from(op[2]) % n),
            _ => {
                // A middle entry, never the first or the last.
                let m = 1 + r % (n - 2);
                rows.remove(m);
            }
        }
    }
    let public = key.verifying_key();
    let strict = Expect {
        key: Some(&public),
        ..Expect::default()
    };
    let verdict = verify_segment(&rows, &strict);
    // Removals and swaps may leave a run of the chain as it was (a suffix,
    // say): an export is such a run, and may verify (found by this target:
    // `corpus/trail/a-run-of-the-chain`). Anything else is an edit.
    let a_run = !rows.is_empty() && (0..original.len()).any(|i| original[i..].starts_with(&rows));
    if rows == *original {
        assert!(verdict.is_ok(), "the untouched chain verifies: {verdict:?}");
    } else if !a_run {
        assert!(verdict.is_err(), "an edited chain verified: {rows:#?}");
    }
});
