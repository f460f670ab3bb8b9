//! The `notify` and `notify-webhook` packs: a notification when the agent
//! needs the user (its own notification, a permission it asks for) and when
//! a turn ends, on the desktop (`notify`, the `notify` grant) or to a
//! webhook whose token the host puts into the request (`notify-webhook`,
//! the `secret` grant): two packs, so each component imports only its own
//! grant. The model's words are never sent. docs/packs/notify.md.

use serde::{Deserialize, Serialize};

use crate::Invalid;

/// When the pack notifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum When {
    /// The agent's own notification (Claude Code's and Gemini CLI's `Notification`).
    Notification,
    /// The agent asks the user to allow a call.
    Permission,
    /// A turn ends.
    Stop,
}

/// `[packs.notify]` in `hookrt.toml`: desktop notifications.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// When to notify.
    pub on: Vec<When>,
    /// Notifications in any 60 seconds; more are dropped.
    pub per_minute: u64,
}

/// `[packs.notify-webhook]` in `hookrt.toml`: each notification sent as
/// `POST url` with the text as its body (ntfy, gotify and most push
/// services take it so), the token in a header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Webhook {
    /// When to notify.
    #[serde(default = "all")]
    pub on: Vec<When>,
    /// The whole URL, `https://` (or `http://` to a loopback address).
    pub url: String,
    /// The environment variable of hookrt's process that holds the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// Or a file (`chmod 600`, `~/…` or absolute) that holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<String>,
    /// The header that carries it.
    #[serde(default = "authorization")]
    pub header: String,
    /// What comes before it in the header.
    #[serde(default = "bearer")]
    pub prefix: String,
}

fn all() -> Vec<When> {
    vec![When::Notification, When::Permission, When::Stop]
}

fn authorization() -> String {
    "Authorization".into()
}

fn bearer() -> String {
    "Bearer ".into()
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            on: all(),
            per_minute: 6,
        }
    }
}

/// The most notifications a minute may hold (the `notify` grant's cap).
pub const MAX_PER_MINUTE: u64 = 60;

impl Settings {
    /// Checks the rate.
    pub fn check(&self) -> Result<(), Invalid> {
        if self.per_minute == 0 || self.per_minute > MAX_PER_MINUTE {
            return Err(Invalid::new(
                "per_minute",
                format!("`per_minute` is between 1 and {MAX_PER_MINUTE}"),
            ));
        }
        Ok(())
    }
}

impl Webhook {
    /// Checks the URL and that exactly one place holds the token.
    pub fn check(&self) -> Result<(), Invalid> {
        origin(&self.url)?;
        if self.token_env.is_some() == self.token_file.is_some() {
            return Err(Invalid::new(
                "token_env",
                "exactly one of `token_env` and `token_file` says where the token is",
            ));
        }
        Ok(())
    }
}

/// The origin of a webhook's URL (`https://ntfy.sh`), which its token is
/// bound to; plain `http` only to a loopback address.
pub fn origin(url: &str) -> Result<String, Invalid> {
    let refuse = |why: &str| Invalid::new("url", format!("`url` `{url}` {why}"));
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| refuse("is not a URL"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() || authority.contains('@') {
        return Err(refuse("names no host (or names a user)"));
    }
    let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h);
    let loopback = host == "127.0.0.1" || host == "localhost" || host == "[::1]";
    match scheme {
        "https" => Ok(format!("https://{authority}")),
        "http" if loopback => Ok(format!("http://{authority}")),
        _ => Err(refuse(
            "is neither https:// nor http:// to a loopback address",
        )),
    }
}

/// The title and message of an agent's own notification event
/// (`custom.<agent>.notification`: its `title`, else "AGENT needs you", and
/// its `message`), or `None` for any other event.
pub fn agents_notification(
    kind: &str,
    data: &serde_json::Value,
    agent: &str,
) -> Option<(String, String)> {
    if !(kind.starts_with("custom.") && kind.ends_with(".notification")) {
        return None;
    }
    let text = |key: &str| {
        data.get(key)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_owned()
    };
    let title = match text("title") {
        t if t.is_empty() => format!("{agent} needs you"),
        t => t,
    };
    Some((title, text("message")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_and_webhooks_are_checked_by_key() {
        assert!(Settings::default().check().is_ok());
        assert_eq!(
            Settings {
                per_minute: 0,
                ..Settings::default()
            }
            .check()
            .unwrap_err()
            .key,
            "per_minute"
        );
        let hook = |url: &str, env: Option<&str>, file: Option<&str>| Webhook {
            on: all(),
            url: url.into(),
            token_env: env.map(Into::into),
            token_file: file.map(Into::into),
            header: authorization(),
            prefix: bearer(),
        };
        assert!(
            hook("https://ntfy.sh/topic", Some("NTFY_TOKEN"), None)
                .check()
                .is_ok()
        );
        assert_eq!(
            hook("http://ntfy.sh/t", Some("T"), None)
                .check()
                .unwrap_err()
                .key,
            "url"
        );
        assert_eq!(
            hook("https://ntfy.sh/t", None, None)
                .check()
                .unwrap_err()
                .key,
            "token_env"
        );
        assert_eq!(
            hook("https://ntfy.sh/t", Some("T"), Some("f"))
                .check()
                .unwrap_err()
                .key,
            "token_env"
        );
        assert_eq!(
            hook("https://u@ntfy.sh/t", Some("T"), None)
                .check()
                .unwrap_err()
                .key,
            "url"
        );
        assert_eq!(
            origin("https://ntfy.sh:8443/a/b?c").unwrap(),
            "https://ntfy.sh:8443"
        );
        assert_eq!(
            origin("http://127.0.0.1:9/x").unwrap(),
            "http://127.0.0.1:9"
        );
    }
}
