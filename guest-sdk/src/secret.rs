//! Sending a request that carries a host secret the hook never sees (world 0.4.0, the
//! `secret` grant): `secret::send("ntfy", &Request::post(url, body))?`.
//!
//! The hook names one of its table's secrets; the host checks that the URL's origin is
//! one the secret is bound to, puts the value where the table says (a header, a query
//! parameter or a path part) and masks it out of what comes back. A redirect is not
//! followed: the 3xx comes back, and sending to its `Location` is a new, checked `send`.
//! Off wasm (native unit tests of a hook) nothing is sent: every call fails as
//! [`SecretError::Unknown`], so a test sees what a hook without the grant sees.

use crate::HookError;

/// One outgoing request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST`, `PUT`, `PATCH` or `DELETE`.
    pub method: String,
    /// The whole URL; its origin must be one the secret is bound to.
    pub url: String,
    /// Headers (name, value); none may be the secret's own header.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Request {
    /// A `POST` of `body` to `url`.
    pub fn post(url: impl Into<String>, body: impl Into<Vec<u8>>) -> Self {
        Self {
            method: "POST".to_owned(),
            url: url.into(),
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// A `GET` of `url`.
    pub fn get(url: impl Into<String>) -> Self {
        Self {
            method: "GET".to_owned(),
            url: url.into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// This request with one more header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// What came back, the secret masked out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// Response headers (name, value).
    pub headers: Vec<(String, String)>,
    /// The body (capped by the host).
    pub body: Vec<u8>,
}

impl Response {
    /// Whether the status is 2xx.
    pub fn success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The first header named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why a request was not sent or failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretError {
    /// The table names no such secret (or the hook holds no `secret` grant).
    Unknown(String),
    /// The URL's origin is not one the secret is bound to.
    OriginRefused(String),
    /// The host has no value for it here (the text says where it looked): a hook may
    /// go on without sending.
    Unavailable(String),
    /// The request failed (the text never holds the value).
    Failed(String),
}

impl std::fmt::Display for SecretError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SecretError::Unknown(why) => write!(f, "unknown secret: {why}"),
            SecretError::OriginRefused(why) => write!(f, "origin refused: {why}"),
            SecretError::Unavailable(why) => write!(f, "secret unavailable: {why}"),
            SecretError::Failed(why) => write!(f, "failed: {why}"),
        }
    }
}

impl std::error::Error for SecretError {}

impl From<SecretError> for HookError {
    fn from(err: SecretError) -> Self {
        HookError::new(format!("secret: {err}"))
    }
}

/// Sends `request` with the secret `name` (a name in the hook's secret table) put where
/// its table says.
pub fn send(name: &str, request: &Request) -> Result<Response, SecretError> {
    backend::send(name, request)
}

#[cfg(target_arch = "wasm32")]
mod backend {
    use crate::bindings::hookrt::hook::secret as host;

    use super::SecretError;

    pub(super) fn send(
        name: &str,
        request: &super::Request,
    ) -> Result<super::Response, SecretError> {
        let sent = host::send(
            name,
            &host::Request {
                method: request.method.clone(),
                url: request.url.clone(),
                headers: request.headers.clone(),
                body: request.body.clone(),
            },
        );
        match sent {
            Ok(r) => Ok(super::Response {
                status: r.status,
                headers: r.headers,
                body: r.body,
            }),
            Err(host::SecretError::Unknown(why)) => Err(SecretError::Unknown(why)),
            Err(host::SecretError::OriginRefused(why)) => Err(SecretError::OriginRefused(why)),
            Err(host::SecretError::Unavailable(why)) => Err(SecretError::Unavailable(why)),
            Err(host::SecretError::Failed(why)) => Err(SecretError::Failed(why)),
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod backend {
    use super::SecretError;

    pub(super) fn send(
        _name: &str,
        _request: &super::Request,
    ) -> Result<super::Response, SecretError> {
        Err(SecretError::Unknown(
            "no secret is sent off wasm".to_owned(),
        ))
    }
}
