//! Original: veraticus-ntfy-notifier (github.com/Veraticus/nix-config@5e1af2d: home-manager/claude-code/hooks/ntfy-notifier.sh).
//!
//! Pushes Claude Code's events to an ntfy topic after a tool call ("Edit: <file>", "Bash")
//! and when the turn stops, at most once every 2 seconds (the original's rate limit, kept
//! in `state`). The token is the host's secret `ntfy`, put in a bearer header by hookrt.
//! Left out: the terminal's title (tmux, osascript) and a Bash call's command
//! (`action.result` does not carry the call's input).
//!
//! ```toml
//! [hooks."ntfy_notifier"]
//! deadline_ms = 5000  # the original's `curl --max-time 5`
//! config = { url = "https://ntfy.sh/my-claude-topic" }
//! [hooks."ntfy_notifier".grants]
//! log = {}
//! state = {}
//! secret.secrets.ntfy = { file = "~/.config/claude-code-ntfy/token", origins = ["https://ntfy.sh"], header = "Authorization", prefix = "Bearer " }
//! ```

use hookrt_sdk::prelude::*;

/// The original's rate limit: one notification per 2 seconds.
const MIN_GAP_MS: u64 = 2_000;

#[derive(Deserialize)]
#[serde(crate = "hookrt_sdk::serde")]
pub struct Config {
    /// The topic's whole URL (`https://ntfy.sh/<topic>`).
    url: String,
}

#[derive(Default)]
pub struct NtfyNotifier {
    url: String,
}

#[hookrt_sdk::hook]
impl Hook for NtfyNotifier {
    type Config = Config;

    fn configure(&mut self, config: Config) -> HookResult {
        self.url = config.url;
        Ok(())
    }

    fn action_result(&mut self, data: ActionResult, event: &Event, _cx: &Context) -> HookResult {
        let message = match data.tool.as_str() {
            "Read" => return Ok(()),
            "Edit" | "Write" | "MultiEdit" => {
                match data.output.as_ref().and_then(|o| o["filePath"].as_str()) {
                    Some(path) if path.chars().count() > 50 => {
                        let tail: String = path.chars().skip(path.chars().count() - 47).collect();
                        format!("{}: ...{tail}", data.tool)
                    }
                    Some(path) => format!("{}: {path}", data.tool),
                    None => data.tool.clone(),
                }
            }
            tool => tool.to_owned(),
        };
        self.notify(event, &message)
    }

    fn turn_stopping_observed(
        &mut self,
        _data: TurnStopping,
        event: &Event,
        _cx: &Context,
    ) -> HookResult {
        self.notify(event, "Claude finished responding")
    }
}

impl NtfyNotifier {
    fn notify(&self, event: &Event, message: &str) -> HookResult {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let last: Option<u64> = state::get_json("last_sent_ms")?;
        if last.is_some_and(|t| now.saturating_sub(t) < MIN_GAP_MS) {
            log::debug("rate limit: skipped", &[]);
            return Ok(());
        }
        state::set_json("last_sent_ms", &now)?;
        let data = event.data_json()?;
        let project = data["cwd"]
            .as_str()
            .and_then(|cwd| cwd.rsplit('/').find(|s| !s.is_empty()))
            .unwrap_or("project");
        let request = secret::Request::post(self.url.as_str(), message)
            .header("Title", format!("Claude Code: {project}"));
        let sent = secret::send("ntfy", &request)?;
        log::info("ntfy sent", &[("status", &sent.status.to_string())]);
        Ok(())
    }
}
