//! Signed receipts of decisions: what one says ([`SignedReceipt`]), signing
//! one with the trail's key, checking a receipt's signature, and finding the
//! decision it names in a journal's trail.

use std::collections::BTreeMap;
use std::path::Path;

use ed25519_dalek::{Signature, Signer, Verifier, VerifyingKey};
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
    pub fn to_json(&self) -> Value {
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
    /// Its signature cannot be read.
    #[error("the receipt has no readable signature")]
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
    let signature = receipt["signature"]
        .as_str()
        .and_then(|s| hex::decode(s).ok())
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
