//! Original: decider-pushover (github.com/decider/claude-hooks@5278ebd: hooks/task-completion-notify.py, notification_utils.py).
//!
//! A Pushover notification when Claude Code's turn stops (priority 2, retry 30 s, expire
//! 300 s, the project folder's name), as the original. The app token is the host's secret
//! `pushover`, put in the query by hookrt; the user key (it names the recipient and sends
//! nothing alone) is `config.user`; the original read both from the environment or a
//! `.env` file. Without the token the hook logs so and goes on, as the original.
//!
//! ```toml
//! [hooks."pushover_at_stop"]
//! deadline_ms = 5000  # the original's 5 s timeout
//! config = { user = "uQiRzpo4DXghDmr9QzzfQu27cmVRsG" }
//! [hooks."pushover_at_stop".grants]
//! log = {}
//! secret.secrets.pushover = { env = "PUSHOVER_APP_TOKEN", origins = ["https://api.pushover.net"], query = "token" }
//! ```

use hookrt_sdk::prelude::*;

#[derive(Deserialize)]
#[serde(crate = "hookrt_sdk::serde")]
pub struct Config {
    /// The Pushover user (or group) key to notify.
    user: String,
    /// Pushover's messages endpoint (a stand-in's in tests).
    #[serde(default = "endpoint")]
    url: String,
}

fn endpoint() -> String {
    "https://api.pushover.net/1/messages.json".to_owned()
}

#[derive(Default)]
pub struct PushoverAtStop {
    user: String,
    url: String,
}

#[hookrt_sdk::hook]
impl Hook for PushoverAtStop {
    type Config = Config;

    fn configure(&mut self, config: Config) -> HookResult {
        self.user = config.user;
        self.url = config.url;
        Ok(())
    }

    fn turn_stopping_observed(
        &mut self,
        _data: TurnStopping,
        event: &Event,
        _cx: &Context,
    ) -> HookResult {
        let data = event.data_json()?;
        let project = data["cwd"]
            .as_str()
            .and_then(|cwd| cwd.rsplit('/').find(|s| !s.is_empty()))
            .unwrap_or("the project")
            .to_owned();
        let form = [
            ("user", self.user.as_str()),
            ("title", &format!("Claude Code: {project}")),
            (
                "message",
                &format!("Claude Code Finished - All tasks completed in {project}"),
            ),
            ("priority", "2"),
            ("retry", "30"),
            ("expire", "300"),
        ];
        let body: Vec<String> = form
            .iter()
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect();
        let request = secret::Request::post(self.url.as_str(), body.join("&"))
            .header("Content-Type", "application/x-www-form-urlencoded");
        match secret::send("pushover", &request) {
            Ok(r) => log::info(
                "pushover sent",
                &[
                    ("status", &r.status.to_string()),
                    ("answer", &String::from_utf8_lossy(&r.body)),
                ],
            ),
            // As the original: without the keys, say how to set them up and go on.
            Err(secret::SecretError::Unavailable(why)) => log::warn(
                "pushover skipped: its app token is not set up",
                &[("why", &why)],
            ),
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }
}

/// `text` as a form field: unreserved bytes as they are, space as `+`, the rest `%XX`.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            b' ' => "+".to_owned(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
