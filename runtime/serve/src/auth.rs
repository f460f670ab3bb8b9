//! Bearer tokens and per-token rate limits.
//!
//! Tokens come from a file (one per line; blank lines and `#` comments
//! skipped) or from `HOOKRT_TOKENS` (separated by commas or whitespace). A
//! presented token is hashed and compared with every configured token's
//! hash in constant time, so neither its content nor its length shows in the
//! answer's timing. Each token has its own token bucket: `rate` requests per
//! second on average, up to `burst` at once; past it the answer is 429.

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use axum::http::{HeaderMap, StatusCode, header};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::{ApiError, ServeError};

/// The shortest token accepted: shorter ones are guessable.
pub const MIN_TOKEN_LEN: usize = 16;

/// The configured tokens, as hashes.
#[derive(Debug, Default)]
pub struct Tokens {
    hashes: Vec<[u8; 32]>,
}

fn digest(token: &[u8]) -> [u8; 32] {
    Sha256::digest(token).into()
}

impl Tokens {
    /// Tokens from `text`: one per line (blank lines and `#` comments
    /// skipped) or separated by commas or whitespace.
    pub fn parse(text: &str) -> Result<Tokens, ServeError> {
        let mut hashes = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            for token in line.split(|c: char| c == ',' || c.is_whitespace()) {
                if token.is_empty() {
                    continue;
                }
                if token.len() < MIN_TOKEN_LEN {
                    return Err(ServeError::BadToken(format!(
                        "a configured token is {} characters long; tokens need at least \
                         {MIN_TOKEN_LEN} (make them with e.g. `openssl rand -hex 32`)",
                        token.len()
                    )));
                }
                hashes.push(digest(token.as_bytes()));
            }
        }
        Ok(Tokens { hashes })
    }

    /// Tokens from a file.
    pub fn from_file(path: &Path) -> Result<Tokens, ServeError> {
        let text = std::fs::read_to_string(path).map_err(|source| ServeError::TokensFile {
            path: path.to_path_buf(),
            source,
        })?;
        Tokens::parse(&text)
    }

    /// How many tokens are configured.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Which configured token `presented` is, comparing with every one in
    /// constant time.
    pub fn find(&self, presented: &str) -> Option<usize> {
        let d = digest(presented.as_bytes());
        let mut found = None;
        for (i, h) in self.hashes.iter().enumerate() {
            if bool::from(h.ct_eq(&d)) && found.is_none() {
                found = Some(i);
            }
        }
        found
    }

    /// The token index of a request, or the 401 to answer.
    pub fn check(&self, headers: &HeaderMap) -> Result<usize, ApiError> {
        let unauthorized = |error: &str| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                error,
                "send `Authorization: Bearer <token>` with a token from the server's --tokens file or HOOKRT_TOKENS",
            )
        };
        let value = headers
            .get(header::AUTHORIZATION)
            .ok_or_else(|| unauthorized("missing bearer token"))?;
        let presented = value
            .to_str()
            .ok()
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .ok_or_else(|| unauthorized("the Authorization header is not `Bearer <token>`"))?;
        self.find(presented.trim())
            .ok_or_else(|| unauthorized("unknown bearer token"))
    }
}

/// One token bucket per token (index; `tokens.len()` stands for
/// unauthenticated callers with `--insecure-no-auth`).
#[derive(Debug)]
pub struct RateLimiter {
    rate: f64,
    burst: f64,
    buckets: Mutex<Vec<(f64, Instant)>>,
}

impl RateLimiter {
    /// `rate` requests per second, up to `burst` at once, for `keys` callers.
    pub fn new(rate: f64, burst: f64, keys: usize) -> RateLimiter {
        let now = Instant::now();
        RateLimiter {
            rate,
            burst,
            buckets: Mutex::new(vec![(burst, now); keys]),
        }
    }

    /// Takes one request from `key`'s bucket, or says how many seconds to wait.
    pub fn take(&self, key: usize) -> Result<(), u64> {
        if self.rate <= 0.0 {
            return Ok(());
        }
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let Some((level, at)) = buckets.get_mut(key) else {
            return Ok(());
        };
        let now = Instant::now();
        *level = (*level + now.duration_since(*at).as_secs_f64() * self.rate).min(self.burst);
        *at = now;
        if *level >= 1.0 {
            *level -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - *level) / self.rate).ceil().max(1.0) as u64)
        }
    }
}

/// The 429 answer.
pub fn too_many(retry_after: u64) -> ApiError {
    let mut e = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "rate limit exceeded for this token",
        format!(
            "wait {retry_after} s (Retry-After), send events in batches, or raise the server's --rate-limit"
        ),
    );
    e.retry_after = Some(retry_after);
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_token_and_refuses_others() {
        let t = Tokens::parse(
            "# comment\n0123456789abcdef\n\nfedcba9876543210, aaaaaaaaaaaaaaaaaaaa\n",
        )
        .expect("tokens");
        assert_eq!(t.len(), 3);
        assert_eq!(t.find("fedcba9876543210"), Some(1));
        assert_eq!(t.find("0123456789abcdeX"), None);
        assert!(Tokens::parse("short").is_err());
    }

    #[test]
    fn a_bucket_refuses_past_its_burst() {
        let r = RateLimiter::new(0.5, 2.0, 1);
        assert!(r.take(0).is_ok());
        assert!(r.take(0).is_ok());
        assert_eq!(r.take(0), Err(2));
    }
}
