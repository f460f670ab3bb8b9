//! The `notify-webhook` pack's component: the agent's own notification, a
//! permission it asks for and the end of a turn, each `POST`ed to the
//! webhook with the token the host puts in (the `secret` grant;
//! `hookrt_pack_rules::notify`, docs/packs/notify.md). It never sends the
//! model's words and never sees the token.

use hookrt_pack_rules::notify::{Webhook, When};
use hookrt_sdk::prelude::*;
use hookrt_sdk::secret::{self, Request};

#[derive(Default)]
pub struct NotifyWebhook {
    settings: Option<Webhook>,
}

#[hookrt_sdk::hook]
impl Hook for NotifyWebhook {
    type Config = Webhook;

    fn configure(&mut self, config: Webhook) -> HookResult {
        config.check().map_err(|e| HookError::new(e.message))?;
        self.settings = Some(config);
        Ok(())
    }

    fn any(&mut self, event: &Event, cx: &Context) -> HookResult {
        match hookrt_pack_rules::notify::agents_notification(event.kind(), &event.data_json()?, cx.agent()) {
            Some((title, body)) => self.send(When::Notification, &title, &body),
            None => Ok(()),
        }
    }

    fn permission_requested_observed(&mut self, data: PermissionRequested, _event: &Event, cx: &Context) -> HookResult {
        let title = format!("{} asks to use {}", cx.agent(), data.tool);
        self.send(When::Permission, &title, "Waiting for your answer")
    }

    fn turn_stopping_observed(&mut self, _data: TurnStopping, _event: &Event, cx: &Context) -> HookResult {
        let title = format!("{}: turn complete", cx.agent());
        self.send(When::Stop, &title, "The agent is waiting for you")
    }
}

impl NotifyWebhook {
    /// `POST`s `title: body` to the webhook, if the settings ask for `when`.
    fn send(&self, when: When, title: &str, body: &str) -> HookResult {
        let settings = self
            .settings
            .as_ref()
            .ok_or_else(|| HookError::new("notify-webhook was not configured"))?;
        if !settings.on.contains(&when) {
            return Ok(());
        }
        let text = if body.is_empty() { title.to_owned() } else { format!("{title}: {body}") };
        let request = Request::post(settings.url.clone(), text).header("Content-Type", "text/plain");
        let sent = secret::send("webhook", &request).map_err(|e| HookError::new(format!("the webhook: {e}")))?;
        if !sent.success() {
            return Err(HookError::new(format!("the webhook answered {}", sent.status)));
        }
        Ok(())
    }
}
