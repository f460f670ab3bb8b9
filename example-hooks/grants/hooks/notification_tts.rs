//! Ported from `disler-notification-tts` (github.com/disler/claude-code-hooks-mastery@052ad1c: .claude/hooks/notification.py).
//!
//! Notification, spoken as a notification (world 0.4.0, the `notify` grant):
//! when Claude Code notifies, tell the user their agent needs their input,
//! but not for the generic "Claude is waiting for your input" (the original
//! skips it too). Substitutions: the original speaks the sentence through a
//! TTS script (ElevenLabs, OpenAI or pyttsx3, keys from the environment);
//! here it is a desktop notification, so no key is needed. Its
//! `ENGINEER_NAME` is this hook's `engineer_name` config, always used when
//! set (the original used it 30 % of the time, at random), and its log of
//! every input (`logs/notification.json`) is hookrt's record of the
//! delivery, with the notification's message.

use hookrt_sdk::notify::{self, NotifyError, Urgency};
use hookrt_sdk::prelude::*;

/// The message the original does not announce.
const GENERIC: &str = "Claude is waiting for your input";

#[derive(Default)]
pub struct NotificationTts {
    engineer_name: Option<String>,
}

impl NotificationTts {
    fn setup(&mut self, config: &serde_json::Value) -> HookResult {
        self.engineer_name = config
            .get("engineer_name")
            .and_then(|n| n.as_str())
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_owned);
        Ok(())
    }

    fn notification(&mut self, event: &Event, _cx: &Context) -> HookResult {
        let data = event.data_json()?;
        let message = data.get("message").and_then(|m| m.as_str()).unwrap_or("");
        log::info("notification", &[("message", message)]);
        if message == GENERIC {
            return Ok(());
        }
        let spoken = match &self.engineer_name {
            Some(name) => format!("{name}, your agent needs your input"),
            None => "Your agent needs your input".to_owned(),
        };
        match notify::send("Claude Code", &spoken, Urgency::Normal) {
            Ok(()) | Err(NotifyError::RateLimited) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

hookrt_sdk::define_hook!(NotificationTts {
    configure => setup,
    "custom.claude.notification" => notification,
});
