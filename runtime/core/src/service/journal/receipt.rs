//! Signed receipts of decisions: what one says ([`SignedReceipt`]), signing
//! one with the trail's key, reading a receipt's file, checking its
//! signature, and finding the decision it names in a journal's trail.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::Path;

use ed25519_dalek::{Signature, Signer, Verifier, VerifyingKey};
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::keys::public_hex;
use super::trail::{TrailContext, text_sha256};
use super::verdict::Break;
use super::verify::{open_read_only, rows};

/// A signed receipt of one decision, for the caller to keep: the event (id,
/// agent, digest), what was decided (the sha256 of its JSON as the journal
/// stores it), the components and settings that decided it, when, and an
/// Ed25519 signature of all of it. The signature covers the receipt's JSON
/// with sorted keys, less `signature`: the fields are declared in that
/// order, so the JSON written is the JSON signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignedReceipt {
    /// The agent whose event it was.
    pub agent: String,
    /// When it was signed, in milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// The component digest of each hook that decided, by hook.
    pub components: BTreeMap<String, String>,
    /// The event's id.
    pub event: String,
    /// The event's digest (hex), as the journal holds it.
    pub event_digest: String,
    /// The public half of the key that signed it (hex).
    pub key: String,
    /// The sha256 (hex) of the decision's JSON as the journal stores it.
    pub resolution_sha256: String,
    /// The digest of the hooks' effective settings.
    pub settings: String,
    /// The Ed25519 signature (hex) of the rest.
    pub signature: String,
    /// The receipt's format: 1.
    pub v: u32,
}

impl SignedReceipt {
    /// The receipt as JSON, as it is signed and written.
    pub(crate) fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("a receipt is plain JSON")
    }
}

impl std::fmt::Display for SignedReceipt {
    /// The receipt's JSON on one line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.to_json())
    }
}

/// Why a receipt does not hold.
#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    /// Its text is not JSON.
    #[error("it is not JSON")]
    NotJson,
    /// Its text repeats a key in an object, so it reads two ways (one
    /// signed, the other shown by a reader that keeps the first).
    #[error("it repeats a key: {0}")]
    RepeatedKey(String),
    /// It names no key.
    #[error("the receipt names no key")]
    NoKey,
    /// It is signed by another key than the one given.
    #[error("the receipt is signed by {named}, not by the key given ({given})")]
    OtherKey {
        /// The key it names.
        named: String,
        /// The key given.
        given: String,
    },
    /// The key it names is no Ed25519 public key.
    #[error("the receipt's key is not an Ed25519 public key")]
    BadKey,
    /// Its signature cannot be read, or is not spelled as signed: the
    /// lowercase hex of 64 bytes.
    #[error("the receipt has no readable signature (the lowercase hex of 64 bytes)")]
    NoSignature,
    /// Its signature does not verify.
    #[error("the receipt's signature does not verify: it was changed after it was signed")]
    Changed,
    /// The journal's trail could not be read.
    #[error(transparent)]
    Trail(#[from] Break),
    /// The trail records another decision for the receipt's event.
    #[error("the journal's trail records another decision for event `{event}` than the receipt")]
    OtherDecision {
        /// The event's id.
        event: String,
    },
    /// The trail records no decision of the receipt's event.
    #[error("the journal's trail has no decision of event `{event}` (agent `{agent}`)")]
    NoDecision {
        /// The event's id.
        event: String,
        /// Its agent.
        agent: String,
    },
}

/// A signed receipt of one decision: `resolution` the decision's JSON as
/// the journal stores it, signed by `context`'s key (`None` without one).
/// An auditor checks it offline with the public key ([`check_receipt`]),
/// and against a journal's trail ([`receipt_in_journal`]).
pub fn sign_receipt(
    context: &TrailContext,
    event_id: &str,
    agent: &str,
    event_digest: &[u8],
    resolution: &str,
) -> Option<SignedReceipt> {
    let key = context.signer.as_ref()?;
    let mut receipt = SignedReceipt {
        agent: agent.to_owned(),
        at_ms: super::now_ms(),
        components: context.components.clone(),
        event: event_id.to_owned(),
        event_digest: hex::encode(event_digest),
        key: public_hex(key),
        resolution_sha256: text_sha256(resolution),
        settings: context.settings.clone(),
        signature: String::new(),
        v: 1,
    };
    let signature = key.sign(receipt_message(&receipt.to_json()).as_bytes());
    receipt.signature = hex::encode(signature.to_bytes());
    Some(receipt)
}

/// What a receipt's signature covers: its canonical JSON without the
/// signature.
fn receipt_message(receipt: &Value) -> String {
    let mut unsigned = receipt.clone();
    if let Some(o) = unsigned.as_object_mut() {
        o.remove("signature");
    }
    format!("hookrt-receipt-v1\0{unsigned}")
}

/// A receipt file's text (trimmed) as JSON, for [`check_receipt`]: refused
/// when it is not JSON, or when an object in it repeats a key (the JSON
/// read keeps the last, which is what the signature covers; a reader that
/// keeps the first would show another receipt).
pub fn read_receipt(text: &str) -> Result<Value, ReceiptError> {
    let text = text.trim();
    let value = serde_json::from_str(text).map_err(|_| ReceiptError::NotJson)?;
    serde_json::from_str::<OneReading>(text)
        .map_err(|e| ReceiptError::RepeatedKey(e.to_string()))?;
    Ok(value)
}

/// Any JSON, refused where an object repeats a key.
struct OneReading;

impl<'de> Deserialize<'de> for OneReading {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OneReading)
    }
}

impl<'de> Visitor<'de> for OneReading {
    type Value = OneReading;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<OneReading, E> {
        Ok(self)
    }
    fn visit_i64<E>(self, _: i64) -> Result<OneReading, E> {
        Ok(self)
    }
    fn visit_u64<E>(self, _: u64) -> Result<OneReading, E> {
        Ok(self)
    }
    fn visit_f64<E>(self, _: f64) -> Result<OneReading, E> {
        Ok(self)
    }
    fn visit_str<E>(self, _: &str) -> Result<OneReading, E> {
        Ok(self)
    }
    fn visit_unit<E>(self) -> Result<OneReading, E> {
        Ok(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OneReading, A::Error> {
        while seq.next_element::<OneReading>()?.is_some() {}
        Ok(self)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OneReading, A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!("`{key}` twice")));
            }
            map.next_value::<OneReading>()?;
        }
        Ok(self)
    }
}

/// Checks a receipt's signature (the receipt as read, any JSON), by `key`
/// when given (else by the key it names, which says only that it was not
/// changed since it was signed); the key that signed it, in hex.
pub fn check_receipt(receipt: &Value, key: Option<&VerifyingKey>) -> Result<String, ReceiptError> {
    let named = receipt["key"]
        .as_str()
        .ok_or(ReceiptError::NoKey)?
        .to_owned();
    if let Some(want) = key
        && hex::encode(want.as_bytes()) != named
    {
        return Err(ReceiptError::OtherKey {
            named,
            given: hex::encode(want.as_bytes()),
        });
    }
    let verifying = hex::decode(&named)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .and_then(|b| VerifyingKey::from_bytes(&b).ok())
        .ok_or(ReceiptError::BadKey)?;
    // One spelling, so a receipt that holds is one JSON value: hex decodes
    // capitals too, and the signature is not part of what it signs.
    let signature = receipt["signature"]
        .as_str()
        .and_then(|s| hex::decode(s).ok().filter(|b| hex::encode(b) == s))
        .and_then(|b| Signature::from_slice(&b).ok())
        .ok_or(ReceiptError::NoSignature)?;
    verifying
        .verify(receipt_message(receipt).as_bytes(), &signature)
        .map_err(|_| ReceiptError::Changed)?;
    Ok(named)
}

/// The trail entry of the journal at `path` that records what `receipt`
/// says was decided (its position), or why there is none.
pub fn receipt_in_journal(path: &Path, receipt: &Value) -> Result<i64, ReceiptError> {
    let conn = open_read_only(path)?;
    let rows = rows(&conn)?;
    let event = receipt["event"].as_str().unwrap_or_default();
    let agent = receipt["agent"].as_str().unwrap_or_default();
    let want = receipt["resolution_sha256"].as_str().unwrap_or_default();
    let mut seen = false;
    for r in rows.iter().filter(|r| r.kind == "resolution") {
        let Ok(body) = serde_json::from_str::<Value>(&r.body) else {
            continue;
        };
        if body["event"] != event || body["agent"] != agent {
            continue;
        }
        seen = true;
        if body["resolution_sha256"] == want {
            return Ok(r.seq);
        }
    }
    Err(if seen {
        ReceiptError::OtherDecision {
            event: event.to_owned(),
        }
    } else {
        ReceiptError::NoDecision {
            event: event.to_owned(),
            agent: agent.to_owned(),
        }
    })
}

#[cfg(test)]
mod tests {
    use ed25519_dalek::SigningKey;

    use super::*;

    fn signed() -> (Value, VerifyingKey) {
        let key = SigningKey::from_bytes(&[42; 32]);
        let public = key.verifying_key();
        let context = TrailContext::signing(key, 5);
        let receipt = sign_receipt(&context, "evt_1", "coder", &[7; 32], "{}").unwrap();
        (receipt.to_json(), public)
    }

    #[test]
    fn a_receipts_signature_has_one_spelling() {
        let (receipt, key) = signed();
        assert!(check_receipt(&receipt, Some(&key)).is_ok());
        let mut capitals = receipt.clone();
        capitals["signature"] = receipt["signature"].as_str().unwrap().to_uppercase().into();
        assert!(matches!(
            check_receipt(&capitals, Some(&key)),
            Err(ReceiptError::NoSignature)
        ));
        assert!(check_receipt(&capitals, None).is_err());
    }

    #[test]
    fn a_receipt_that_repeats_a_key_is_refused() {
        let (receipt, key) = signed();
        let text = receipt.to_string();
        assert_eq!(read_receipt(&format!(" {text}\n")).unwrap(), receipt);
        // Read last-wins this holds; a reader that keeps the first sees `evt_2`.
        let twice = text.replacen('{', r#"{"event":"evt_2","#, 1);
        let last_wins: Value = serde_json::from_str(&twice).unwrap();
        assert!(check_receipt(&last_wins, Some(&key)).is_ok());
        assert!(matches!(
            read_receipt(&twice),
            Err(ReceiptError::RepeatedKey(_))
        ));
        let nested = text.replacen(r#""components":{"#, r#""components":{"a":"1","a":"2""#, 1);
        assert!(matches!(
            read_receipt(&nested),
            Err(ReceiptError::RepeatedKey(_))
        ));
        assert!(matches!(read_receipt("{"), Err(ReceiptError::NotJson)));
    }
}
