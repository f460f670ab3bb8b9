//! Standard Webhooks signatures (standardwebhooks.com, as Anthropic's
//! inference hooks sign their frames): what a request to a signed source's
//! route proves who sent it with, in place of a bearer token.
//!
//! A request carries `webhook-id`, `webhook-timestamp` (Unix seconds) and
//! `webhook-signature` (one or more `v1,<base64>` separated by spaces); the
//! signature is HMAC-SHA256, under the secret's key, of
//! `<webhook-id>.<webhook-timestamp>.<raw body>`. It is accepted when its
//! timestamp is within [`TOLERANCE_SECS`] of now, either way (an old
//! capture is refused), and one of its signatures matches one of the
//! configured secrets' (compared in constant time; two secrets while one is
//! rotated). Secrets come from a file (`--webhook-secrets FILE`), one
//! `whsec_<standard base64>` per line, blank lines and `#` comments
//! skipped, readable by its owner alone. A replay within the tolerance is
//! the same event (its id is the source's own: `Protocol::id_field`),
//! never decided twice.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::error::{ApiError, ServeError};

/// How far a request's timestamp may be from now, either way.
pub const TOLERANCE_SECS: u64 = 300;

/// The prefix of a Standard Webhooks secret.
const PREFIX: &str = "whsec_";

/// The shortest key taken (Standard Webhooks makes 24 to 64 bytes).
const MIN_KEY_BYTES: usize = 16;

/// The configured secrets' keys.
#[derive(Clone)]
pub struct WebhookSecrets {
    keys: Vec<Vec<u8>>,
}

impl std::fmt::Debug for WebhookSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WebhookSecrets({} keys)", self.keys.len())
    }
}

impl WebhookSecrets {
    /// The secrets of `text`: one `whsec_…` per line.
    pub fn parse(text: &str) -> Result<WebhookSecrets, ServeError> {
        let mut keys = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: &str| {
                ServeError::BadToken(format!(
                    "webhook secret on line {}: {why}; give each as `whsec_` and its standard base64, as the source shows it",
                    n + 1
                ))
            };
            let encoded = line
                .strip_prefix(PREFIX)
                .ok_or_else(|| bad("it does not start with `whsec_`"))?;
            let key = STANDARD
                .decode(encoded)
                .map_err(|_| bad("what follows `whsec_` is not standard base64"))?;
            if key.len() < MIN_KEY_BYTES {
                return Err(bad(&format!(
                    "its key is {} bytes, fewer than {MIN_KEY_BYTES}",
                    key.len()
                )));
            }
            keys.push(key);
        }
        if keys.is_empty() {
            return Err(ServeError::BadToken(
                "the webhook secrets file holds no secret: put the `whsec_…` secret the source shows on a line of its own".into(),
            ));
        }
        Ok(WebhookSecrets { keys })
    }

    /// The secrets of a file its owner alone may read.
    pub fn from_file(path: &Path) -> Result<WebhookSecrets, ServeError> {
        Self::parse(&crate::auth::read_private(path, "webhook secrets file")?)
    }

    /// When `headers` sign `body` now, the request's `webhook-timestamp`
    /// (Unix seconds), else the 401 saying what is wrong.
    pub(crate) fn verify(&self, headers: &HeaderMap, body: &[u8]) -> Result<u64, ApiError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.verify_at(headers, body, now)
    }

    fn verify_at(&self, headers: &HeaderMap, body: &[u8], now: u64) -> Result<u64, ApiError> {
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| refused(format!("the `{name}` header is missing or not text")))
        };
        let (id, timestamp, signatures) = (
            header("webhook-id")?,
            header("webhook-timestamp")?,
            header("webhook-signature")?,
        );
        let at: u64 = timestamp.parse().map_err(|_| {
            refused(format!(
                "`webhook-timestamp` `{timestamp:.40}` is not Unix seconds"
            ))
        })?;
        if at.abs_diff(now) > TOLERANCE_SECS {
            return Err(refused(format!(
                "`webhook-timestamp` is {} s from this server's clock, more than {TOLERANCE_SECS} s: an old request is refused",
                at.abs_diff(now)
            )));
        }
        let given: Vec<Vec<u8>> = signatures
            .split(' ')
            .filter_map(|s| s.strip_prefix("v1,"))
            .filter_map(|b| STANDARD.decode(b).ok())
            .collect();
        if given.is_empty() {
            return Err(refused(
                "`webhook-signature` holds no `v1,<base64>` signature".into(),
            ));
        }
        let mut matched = false;
        for key in &self.keys {
            let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
            mac.update(id.as_bytes());
            mac.update(b".");
            mac.update(timestamp.as_bytes());
            mac.update(b".");
            mac.update(body);
            let mac = mac.finalize().into_bytes();
            for signature in &given {
                // Constant time, and every pair compared.
                matched |= bool::from(subtle::ConstantTimeEq::ct_eq(&mac[..], &signature[..]));
            }
        }
        if !matched {
            return Err(refused(
                "no signature in `webhook-signature` matches a configured secret".into(),
            ));
        }
        Ok(at)
    }
}

/// The 401 of a request whose signature does not hold.
fn refused(error: String) -> ApiError {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        error,
        "sign requests as Standard Webhooks does, with a secret from the server's --webhook-secrets file, and keep the clocks within 5 minutes (docs/serve.md#signed-sources)",
    )
    .with_code("bad_signature")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Standard Webhooks reference vector (the spec's own example).
    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const TIMESTAMP: u64 = 1_614_265_330;
    const BODY: &str = r#"{"test": 2432232314}"#;
    const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    fn headers(id: &str, at: u64, signature: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("webhook-id", id.parse().unwrap());
        h.insert("webhook-timestamp", at.to_string().parse().unwrap());
        h.insert("webhook-signature", signature.parse().unwrap());
        h
    }

    #[test]
    fn the_specs_own_example_verifies_and_nothing_else_does() {
        let secrets = WebhookSecrets::parse(&format!("# ours\n\n{SECRET}\n")).unwrap();
        let ok = |h: &HeaderMap, body: &str, now| secrets.verify_at(h, body.as_bytes(), now);
        assert_eq!(
            ok(&headers(ID, TIMESTAMP, SIGNATURE), BODY, TIMESTAMP).unwrap(),
            TIMESTAMP
        );
        // One of several signatures is enough.
        let several = format!("v1,bm90IGl0 {SIGNATURE} v2,whatever");
        assert!(ok(&headers(ID, TIMESTAMP, &several), BODY, TIMESTAMP + 300).is_ok());
        let bad = |h: HeaderMap, body: &str, now: u64, says: &str| {
            let e = ok(&h, body, now).unwrap_err();
            assert_eq!((e.status.as_u16(), e.code), (401, "bad_signature"));
            assert!(e.error.contains(says), "{} ∌ {says}", e.error);
        };
        bad(
            headers(ID, TIMESTAMP, SIGNATURE),
            r#"{"test": 2432232315}"#,
            TIMESTAMP,
            "matches",
        );
        bad(
            headers("msg_other", TIMESTAMP, SIGNATURE),
            BODY,
            TIMESTAMP,
            "matches",
        );
        bad(
            headers(ID, TIMESTAMP, SIGNATURE),
            BODY,
            TIMESTAMP + 301,
            "more than 300 s",
        );
        bad(
            headers(ID, TIMESTAMP, SIGNATURE),
            BODY,
            TIMESTAMP - 301,
            "more than 300 s",
        );
        bad(headers(ID, TIMESTAMP, "v1,!!!"), BODY, TIMESTAMP, "no `v1,");
        let mut missing = headers(ID, TIMESTAMP, SIGNATURE);
        missing.remove("webhook-id");
        bad(missing, BODY, TIMESTAMP, "`webhook-id` header is missing");
        // Another secret signs nothing of ours; a second configured one
        // (a rotation) still does.
        let other = WebhookSecrets::parse("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAA").unwrap();
        assert!(
            other
                .verify_at(
                    &headers(ID, TIMESTAMP, SIGNATURE),
                    BODY.as_bytes(),
                    TIMESTAMP
                )
                .is_err()
        );
        let both = WebhookSecrets::parse(&format!("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAA\n{SECRET}"))
            .unwrap();
        assert!(
            both.verify_at(
                &headers(ID, TIMESTAMP, SIGNATURE),
                BODY.as_bytes(),
                TIMESTAMP
            )
            .is_ok()
        );
    }

    #[test]
    fn a_secret_that_is_not_whsec_base64_is_refused_at_start() {
        for (text, says) in [
            ("", "holds no secret"),
            (
                "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                "does not start with `whsec_`",
            ),
            ("whsec_-_-_", "not standard base64"),
            ("whsec_AAAA", "fewer than 16"),
        ] {
            let e = WebhookSecrets::parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
