//! The `notify` pack's component: the agent's own notification, a
//! permission it asks for and the end of a turn as desktop notifications
//! (`hookrt_pack_rules::notify`, docs/packs/notify.md). It never shows the
//! model's words.

use hookrt_pack_rules::notify::{Settings, When};
use hookrt_sdk::notify::{self, NotifyError, Urgency};
use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Notify {
    settings: Option<Settings>,
}

#[hookrt_sdk::hook]
impl Hook for Notify {
    type Config = Settings;

    fn configure(&mut self, config: Settings) -> HookResult {
        config.check().map_err(|e| HookError::new(e.message))?;
        self.settings = Some(config);
        Ok(())
    }

    fn any(&mut self, event: &Event, cx: &Context) -> HookResult {
        match hookrt_pack_rules::notify::agents_notification(event.kind(), &event.data_json()?, cx.agent()) {
            Some((title, body)) => self.show(When::Notification, &title, &body, Urgency::Normal),
            None => Ok(()),
        }
    }

    fn permission_requested_observed(&mut self, data: PermissionRequested, _event: &Event, cx: &Context) -> HookResult {
        let title = format!("{} asks to use {}", cx.agent(), data.tool);
        self.show(When::Permission, &title, "Waiting for your answer", Urgency::Critical)
    }

    fn turn_stopping_observed(&mut self, _data: TurnStopping, _event: &Event, cx: &Context) -> HookResult {
        let title = format!("{}: turn complete", cx.agent());
        self.show(When::Stop, &title, "The agent is waiting for you", Urgency::Low)
    }
}

impl Notify {
    /// One desktop notification, if the settings ask for `when`; a
    /// rate-limited one passes quietly.
    fn show(&self, when: When, title: &str, body: &str, urgency: Urgency) -> HookResult {
        let settings = self
            .settings
            .as_ref()
            .ok_or_else(|| HookError::new("notify was not configured"))?;
        if !settings.on.contains(&when) {
            return Ok(());
        }
        match notify::send(title, body, urgency) {
            Ok(()) | Err(NotifyError::RateLimited) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}
