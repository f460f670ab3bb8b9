//! The receipt checker, as `hookrt journal verify --receipt R [--key K]`
//! runs it: the file's text read by `read_receipt`, then `check_receipt` by
//! the key given, by another key, and by none. The input is a receipt file;
//! the seeds are receipts signed by the two keys below (Ed25519 seeds 42 and
//! 7), embedded here too, and checked to hold when the target starts.
//!
//! The signature covers the receipt's JSON with sorted keys, less
//! `signature`, so a receipt spelled otherwise (whitespace, key order,
//! escapes) with the same content and signature legitimately holds. The
//! invariant: whatever holds by a key (or by the key it names, without one)
//! has exactly one reading, and it is a receipt that key signed: the text
//! has no repeated key at any depth, it reads as a `SignedReceipt` (no field
//! unknown), equal field for field to one of the seeds that key signed,
//! signature spelling included. So no changed value, no truncated or
//! respelled signature and no other key ever holds, and nothing panics.
#![no_main]

use std::collections::HashSet;
use std::fmt;
use std::sync::OnceLock;

use hookrt::journal::{SignedReceipt, SigningKey, VerifyingKey, check_receipt, read_receipt};
use libfuzzer_sys::fuzz_target;
use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The receipts the two keys signed (the seeds), with their signer.
fn signed() -> &'static [(SignedReceipt, VerifyingKey)] {
    static SIGNED: OnceLock<Vec<(SignedReceipt, VerifyingKey)>> = OnceLock::new();
    SIGNED.get_or_init(|| {
        let seeds = [
            (include_str!("../corpus/receipt/signed-by-the-key.json"), 42),
            (
                include_str!("../corpus/receipt/signed-by-another-key.json"),
                7,
            ),
        ];
        seeds
            .into_iter()
            .map(|(text, seed)| {
                let key = SigningKey::from_bytes(&[seed; 32]).verifying_key();
                let value: Value = serde_json::from_str(text).expect("a seed is JSON");
                let signer = check_receipt(&value, Some(&key)).expect("a seed holds by its key");
                assert_eq!(signer, hex::encode(key.as_bytes()));
                (
                    serde_json::from_value(value).expect("a seed is a receipt"),
                    key,
                )
            })
            .collect()
    })
}

/// Any JSON, refused when an object repeats a key (at any depth): the
/// oracle, written apart from `read_receipt`'s own check.
struct OneReading;

impl<'de> Deserialize<'de> for OneReading {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OneReadingVisitor)
    }
}

struct OneReadingVisitor;

impl<'de> Visitor<'de> for OneReadingVisitor {
    type Value = OneReading;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<OneReading, E> {
        Ok(OneReading)
    }
    fn visit_i64<E>(self, _: i64) -> Result<OneReading, E> {
        Ok(OneReading)
    }
    fn visit_u64<E>(self, _: u64) -> Result<OneReading, E> {
        Ok(OneReading)
    }
    fn visit_f64<E>(self, _: f64) -> Result<OneReading, E> {
        Ok(OneReading)
    }
    fn visit_str<E>(self, _: &str) -> Result<OneReading, E> {
        Ok(OneReading)
    }
    fn visit_unit<E>(self) -> Result<OneReading, E> {
        Ok(OneReading)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OneReading, A::Error> {
        while seq.next_element::<OneReading>()?.is_some() {}
        Ok(OneReading)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OneReading, A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(A::Error::custom(format!("`{key}` twice")));
            }
            map.next_value::<OneReading>()?;
        }
        Ok(OneReading)
    }
}

/// `text` held by `key` (its hex): it must read one way, as a receipt that
/// key signed.
fn holds_only_as_signed(text: &str, key: &str) {
    if let Err(e) = serde_json::from_str::<OneReading>(text) {
        panic!("a receipt with two readings holds by {key}: {e}");
    }
    let read: SignedReceipt = match serde_json::from_str(text) {
        Ok(r) => r,
        Err(e) => panic!("a receipt that is no SignedReceipt holds by {key}: {e}"),
    };
    assert!(
        signed()
            .iter()
            .any(|(r, k)| hex::encode(k.as_bytes()) == key && *r == read),
        "a receipt {key} never signed holds by it: {read}"
    );
}

fuzz_target!(|data: &[u8]| {
    let signed = signed();
    // As the command reads the file.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(value) = read_receipt(text) else {
        return;
    };
    let text = text.trim();
    for (_, key) in signed {
        if let Ok(signer) = check_receipt(&value, Some(key)) {
            assert_eq!(signer, hex::encode(key.as_bytes()), "holds by another key");
            holds_only_as_signed(text, &signer);
        }
    }
    // Without a key: valid only as its signer signed it (the command then
    // says "signer unknown" and exits 3, `forgery::a_receipt_checked_without_a_key_never_exits_zero`).
    if let Ok(signer) = check_receipt(&value, None) {
        holds_only_as_signed(text, &signer);
    }
});
