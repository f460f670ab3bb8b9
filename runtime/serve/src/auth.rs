//! Bearer tokens, what each may do, and per-token rate limits.
//!
//! Tokens come from a file (one per line; blank lines and `#` comments
//! skipped) or from `HOOKRT_TOKENS` (separated by commas or whitespace). A
//! token may be followed by what binds it: `agent=ID` (repeatable) lets it
//! send only those agents' events (any agent without one), and `admin` lets
//! it reload the hooks and read `/metrics` (a token without it may not):
//!
//! ```text
//! 5f2c...e1 agent=support-bot
//! 9a0b...77 admin
//! ```
//!
//! A presented token is hashed and compared with every configured token's
//! hash in constant time, so neither its content nor its length shows in the
//! answer's timing. Each token has its own token bucket: `rate` requests per
//! second on average, up to `burst` at once; past it the answer is 429.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::http::{HeaderMap, StatusCode, header};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::{ApiError, ServeError};

/// The shortest token accepted: shorter ones are guessable.
pub(crate) const MIN_TOKEN_LEN: usize = 16;

/// What a caller may do: the agents it may send events for, and whether it
/// may administer the server (reload, metrics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// The agents whose events it may send; `None`: any.
    pub agents: Option<Arc<[String]>>,
    /// It may reload the hooks and read `/metrics`.
    pub admin: bool,
}

impl Access {
    /// Everything (a server without tokens, `--insecure-no-auth`).
    pub fn all() -> Access {
        Access {
            agents: None,
            admin: true,
        }
    }

    /// Whether it may send `agent`'s events.
    pub fn may_send(&self, agent: &str) -> bool {
        self.agents
            .as_ref()
            .is_none_or(|agents| agents.iter().any(|a| a == agent))
    }

    /// The 403 for an event of `agent` this caller may not send.
    pub(crate) fn refuse_agent(&self, agent: &str) -> ApiError {
        ApiError::new(
            StatusCode::FORBIDDEN,
            format!("this token may not send events of agent `{agent}`"),
            "send them with a token bound to that agent (`agent=` in the server's tokens file, docs/serve.md#tokens)",
        )
        .with_code("forbidden_agent")
    }

    /// Ok when it may administer the server, else the 403 naming `what`.
    pub(crate) fn administer(&self, what: &str) -> Result<(), ApiError> {
        if self.admin {
            return Ok(());
        }
        Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!("this token may not {what}"),
            "use a token marked `admin` in the server's tokens file (docs/serve.md#tokens)",
        )
        .with_code("not_admin"))
    }
}

/// The configured tokens, as hashes, with what each may do.
#[derive(Debug, Default)]
pub struct Tokens {
    hashes: Vec<[u8; 32]>,
    access: Vec<Access>,
}

fn digest(token: &[u8]) -> [u8; 32] {
    Sha256::digest(token).into()
}

impl Tokens {
    /// Tokens from `text`: one per line (blank lines and `#` comments
    /// skipped) or separated by commas or whitespace, each followed by its
    /// bindings (`agent=ID`, `admin`).
    pub fn parse(text: &str) -> Result<Tokens, ServeError> {
        let mut hashes = Vec::new();
        let mut bound: Vec<(Vec<String>, bool)> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut on_line = false;
            for word in line.split(|c: char| c == ',' || c.is_whitespace()) {
                if word.is_empty() {
                    continue;
                }
                let binding = word == "admin" || word.contains('=');
                if binding {
                    let Some(last) = bound.last_mut().filter(|_| on_line) else {
                        return Err(ServeError::BadToken(format!(
                            "line {}: `{}` binds no token: write it after the token it binds, on the same line",
                            n + 1,
                            word.split('=').next().unwrap_or_default()
                        )));
                    };
                    match word.split_once('=') {
                        None => last.1 = true,
                        Some(("agent", id)) if !id.is_empty() => last.0.push(id.to_owned()),
                        Some((key, _)) => {
                            return Err(ServeError::BadToken(format!(
                                "line {}: unknown token binding `{key}=`: a token takes `agent=ID` (repeatable) and `admin`",
                                n + 1
                            )));
                        }
                    }
                    continue;
                }
                if word.len() < MIN_TOKEN_LEN {
                    return Err(ServeError::BadToken(format!(
                        "a configured token is {} characters long; tokens need at least \
                         {MIN_TOKEN_LEN} (make them with e.g. `openssl rand -hex 32`)",
                        word.len()
                    )));
                }
                hashes.push(digest(word.as_bytes()));
                bound.push((Vec::new(), false));
                on_line = true;
            }
        }
        let access = bound
            .into_iter()
            .map(|(agents, admin)| Access {
                agents: (!agents.is_empty()).then(|| agents.into()),
                admin,
            })
            .collect();
        Ok(Tokens { hashes, access })
    }

    /// Tokens from a file, which must be its owner's alone (mode 0600 or
    /// stricter): a tokens file others can read hands out every token.
    pub fn from_file(path: &Path) -> Result<Tokens, ServeError> {
        Tokens::parse(&read_private(path, "tokens file")?)
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

    /// What token `i` may do.
    pub fn access(&self, i: usize) -> Access {
        self.access.get(i).cloned().unwrap_or(Access {
            agents: Some(Arc::from([])),
            admin: false,
        })
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

/// The text of a file of secrets (`what`: tokens, webhook secrets), which
/// must be its owner's alone (mode 0600 or stricter): one others can read
/// hands out every secret in it.
pub(crate) fn read_private(path: &Path, what: &'static str) -> Result<String, ServeError> {
    let unreadable = |source| ServeError::SecretsFile {
        what,
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file.metadata().map_err(unreadable)?.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(ServeError::BadToken(format!(
                "the {what} {} can be read by its group or others (mode {:o}); make it its owner's alone: chmod 600 {}",
                path.display(),
                mode & 0o777,
                path.display()
            )));
        }
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut file, &mut text).map_err(unreadable)?;
    Ok(text)
}

/// One token bucket per token (index; `tokens.len()` stands for
/// unauthenticated callers with `--insecure-no-auth`).
#[derive(Debug)]
pub(crate) struct RateLimiter {
    rate: f64,
    burst: f64,
    buckets: Mutex<Vec<(f64, Instant)>>,
}

impl RateLimiter {
    /// `rate` requests per second, up to `burst` at once, for `keys` callers.
    pub(crate) fn new(rate: f64, burst: f64, keys: usize) -> RateLimiter {
        let now = Instant::now();
        RateLimiter {
            rate,
            burst,
            buckets: Mutex::new(vec![(burst, now); keys]),
        }
    }

    /// Takes one request from `key`'s bucket, or says how many seconds to wait.
    pub(crate) fn take(&self, key: usize) -> Result<(), u64> {
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

/// What `--insecure-no-auth` lets in: a request that names a loopback
/// `Host` (`127.0.0.1`, `localhost`, `[::1]`, with any port) and carries no
/// `Origin`. Without tokens any process on the machine may call the server;
/// this keeps out web pages (a browser sends `Origin` with every cross-site
/// POST) and DNS rebinding (a page whose name now points at 127.0.0.1 still
/// sends its own name as `Host`).
pub(crate) fn loopback_only(headers: &HeaderMap) -> Result<(), ApiError> {
    let forbidden = |error: String, fix: &str| {
        ApiError::new(StatusCode::FORBIDDEN, error, fix).with_code("not_loopback")
    };
    if let Some(origin) = headers.get(header::ORIGIN) {
        return Err(forbidden(
            format!(
                "a request with `Origin: {}` (a web page) is refused by a server without tokens",
                String::from_utf8_lossy(origin.as_bytes())
                    .chars()
                    .take(100)
                    .collect::<String>()
            ),
            "call the server from a program, not a browser, or configure tokens (--tokens)",
        ));
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    let loopback = name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if !loopback {
        return Err(forbidden(
            format!(
                "`Host: {}` is not a loopback name; a server without tokens answers only requests for 127.0.0.1, localhost or [::1]",
                host.chars().take(100).collect::<String>()
            ),
            "send the request to the loopback address the server listens on, or configure tokens (--tokens)",
        ));
    }
    Ok(())
}

/// The 429 answer.
pub(crate) fn too_many(retry_after: u64) -> ApiError {
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
        assert_eq!(
            t.access(0),
            Access {
                agents: None,
                admin: false
            }
        );
    }

    #[test]
    fn bindings_follow_their_token_on_its_line() {
        let t = Tokens::parse(
            "0123456789abcdef agent=a agent=b\nfedcba9876543210 admin\naaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbb agent=c\n",
        )
        .expect("tokens");
        let a = t.access(0);
        assert!(a.may_send("a") && a.may_send("b") && !a.may_send("c") && !a.admin);
        assert!(t.access(1).admin && t.access(1).may_send("anyone"));
        assert!(t.access(2).may_send("x"));
        assert!(!t.access(3).may_send("x") && t.access(3).may_send("c"));
        for bad in [
            "admin 0123456789abcdef",
            "0123456789abcdef\nagent=a",
            "0123456789abcdef scope=x",
            "0123456789abcdef agent=",
        ] {
            assert!(Tokens::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn without_tokens_only_loopback_hosts_and_no_origin_pass() {
        let with = |pairs: &[(&'static str, &str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, v.parse().unwrap());
            }
            loopback_only(&h)
        };
        for host in [
            "127.0.0.1:8787",
            "localhost",
            "LOCALHOST:1",
            "[::1]:9",
            "127.9.9.9",
        ] {
            assert!(with(&[("host", host)]).is_ok(), "{host}");
        }
        for host in [
            "evil.example:8787",
            "127.0.0.1.evil.example",
            "",
            "[::2]:1",
            "10.0.0.1",
        ] {
            assert_eq!(with(&[("host", host)]).unwrap_err().status, 403, "{host}");
        }
        let page = with(&[("host", "127.0.0.1"), ("origin", "https://evil.example")]);
        assert_eq!(page.unwrap_err().code, "not_loopback");
    }

    #[test]
    fn a_bucket_refuses_past_its_burst() {
        let r = RateLimiter::new(0.5, 2.0, 1);
        assert!(r.take(0).is_ok());
        assert!(r.take(0).is_ok());
        assert_eq!(r.take(0), Err(2));
    }
}
