//! Original: codex-slack-dm (github.com/Wangmerlyn/Codex-Slack-Notifier: src/codex_slack_notifier/notifier.py, Codex's `notify` on agent-turn-complete).
//!
//! A Slack DM through the Web API when a Codex turn ends: `conversations.open`, then
//! `chat.postMessage`, as the original. The bot token is the host's secret `slack`, put in
//! a bearer header by hookrt; the user is `config.user_id`. Codex's `Stop` hook stands in
//! for its `notify` program (both run once per finished turn).
//!
//! ```toml
//! [hooks."slack_dm"]
//! deadline_ms = 10000  # two calls to the Web API
//! config = { user_id = "U0123456789" }
//! [hooks."slack_dm".grants]
//! log = {}
//! secret.secrets.slack = { env = "SLACK_BOT_TOKEN", origins = ["https://slack.com"], header = "Authorization", prefix = "Bearer " }
//! ```

use hookrt_sdk::prelude::*;

#[derive(Deserialize)]
#[serde(crate = "hookrt_sdk::serde")]
pub struct Config {
    /// The Slack user to DM.
    user_id: String,
    /// The Web API's base (a stand-in's in tests).
    #[serde(default = "api")]
    api: String,
}

fn api() -> String {
    "https://slack.com/api".to_owned()
}

#[derive(Default)]
pub struct SlackDm {
    user_id: String,
    api: String,
}

#[hookrt_sdk::hook]
impl Hook for SlackDm {
    type Config = Config;

    fn configure(&mut self, config: Config) -> HookResult {
        self.user_id = config.user_id;
        self.api = config.api.trim_end_matches('/').to_owned();
        Ok(())
    }

    fn turn_stopping_observed(
        &mut self,
        _data: TurnStopping,
        event: &Event,
        _cx: &Context,
    ) -> HookResult {
        let data = event.data_json()?;
        let text = match data["cwd"].as_str() {
            Some(repo) => format!("Codex task completed at repo {repo}"),
            None => "Codex task completed.".to_owned(),
        };
        let opened = self.post(
            "conversations.open",
            &serde_json::json!({"users": self.user_id}),
        )?;
        let channel = opened["channel"]["id"]
            .as_str()
            .ok_or("Slack did not return a channel ID for the DM")?
            .to_owned();
        self.post(
            "chat.postMessage",
            &serde_json::json!({"channel": channel, "text": text}),
        )?;
        log::info("slack DM sent", &[("channel", &channel)]);
        Ok(())
    }
}

impl SlackDm {
    /// One Web API call; Slack's `ok: false` is an error, as in the original.
    fn post(&self, method: &str, payload: &serde_json::Value) -> HookResult<serde_json::Value> {
        let request = secret::Request::post(format!("{}/{method}", self.api), payload.to_string())
            .header("Content-Type", "application/json; charset=utf-8");
        let response = secret::send("slack", &request)?;
        if !response.success() {
            return Err(HookError::new(format!(
                "HTTP error from Slack: {}",
                response.status
            )));
        }
        let data: serde_json::Value = serde_json::from_slice(&response.body)
            .map_err(|_| HookError::new("Invalid JSON received from Slack"))?;
        if data["ok"] != true {
            return Err(HookError::new(format!(
                "Slack API error: {}",
                data["error"].as_str().unwrap_or("unknown_error")
            )));
        }
        Ok(data)
    }
}
