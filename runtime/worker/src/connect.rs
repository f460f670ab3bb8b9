//! Connecting to NATS: the servers of a URL, and the credentials the
//! environment names (never the URL, which any process listing shows).

use crate::WorkerError;

/// Connects to the NATS server at `url`, with the credentials the
/// environment names ([`credentials`]). A URL that carries credentials
/// (`nats://user:pass@host`) is refused: every process listing (`ps`) would
/// show them.
pub(crate) async fn connect(url: &str) -> Result<async_nats::Client, WorkerError> {
    if carries_credentials(url) {
        return Err(WorkerError::Config(format!(
            "the NATS URL carries credentials, which any process listing shows; give them in the environment instead: {TOKEN_ENV}, or {USER_ENV} and {PASSWORD_ENV}"
        )));
    }
    // A cluster's servers as a comma-separated list: the client fails over
    // between them.
    let servers: Vec<&str> = url.split(',').map(str::trim).collect();
    credentials()
        .await?
        .connect(servers)
        .await
        .map_err(|e| WorkerError::nats(format!("cannot connect to {url}"), e))
}

/// Whether a server of `url` (a comma-separated list) names a user or
/// password (`nats://user:pass@host`).
fn carries_credentials(url: &str) -> bool {
    url.split(',').any(|server| {
        let rest = server.split_once("://").map_or(server, |(_, r)| r);
        rest.split('/')
            .next()
            .is_some_and(|authority| authority.contains('@'))
    })
}

/// A NATS token.
pub const TOKEN_ENV: &str = "HOOKRT_NATS_TOKEN";
/// A NATS user (with [`PASSWORD_ENV`]).
pub(crate) const USER_ENV: &str = "HOOKRT_NATS_USER";
/// The password of [`USER_ENV`].
pub(crate) const PASSWORD_ENV: &str = "HOOKRT_NATS_PASSWORD";

/// The connect options the environment's credentials make: a token
/// ([`TOKEN_ENV`]), else a user and password ([`USER_ENV`],
/// [`PASSWORD_ENV`]), else none. (`.creds` files need async-nats's `nkeys`
/// feature, not built in.)
async fn credentials() -> Result<async_nats::ConnectOptions, WorkerError> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if let Some(token) = var(TOKEN_ENV) {
        return Ok(async_nats::ConnectOptions::with_token(token));
    }
    match (var(USER_ENV), var(PASSWORD_ENV)) {
        (Some(user), Some(pass)) => Ok(async_nats::ConnectOptions::with_user_and_password(
            user, pass,
        )),
        (Some(_), None) | (None, Some(_)) => Err(WorkerError::Config(format!(
            "{USER_ENV} and {PASSWORD_ENV} go together: set both, or neither"
        ))),
        (None, None) => Ok(async_nats::ConnectOptions::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::carries_credentials;

    #[test]
    fn credentials_in_a_nats_url_are_found() {
        for url in [
            "nats://u:p@127.0.0.1:4222",
            "tls://tok@h",
            "nats://a:4222,nats://u:p@b:4222",
            "u:p@h:4222",
        ] {
            assert!(carries_credentials(url), "{url}");
        }
        for url in [
            "nats://127.0.0.1:4222",
            "nats://a:1,nats://b:2",
            "h:4222",
            "nats://h/path@x",
        ] {
            assert!(!carries_credentials(url), "{url}");
        }
    }
}
