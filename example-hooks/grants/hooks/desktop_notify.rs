//! Ported from `anthropic-docs-desktop-notify` (https://code.claude.com/docs/en/hooks-guide, the notification hook: `notify-send 'Claude Code' 'Claude Code needs your attention'`).
//!
//! Desktop notify (world 0.4.0, the `notify` grant): when Claude Code
//! notifies (it waits for the user's input or permission), show the guide's
//! notification. The original runs `notify-send` (or `osascript`) with the
//! user's full rights; here the host shows it through the session's
//! notifier, rate-limited, as app `hookrt`. A notifier that cannot be
//! reached fails the delivery (visible in the record); a rate-limited one
//! passes quietly.

use hookrt_sdk::notify::{self, NotifyError, Urgency};
use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct DesktopNotify;

impl DesktopNotify {
    fn notification(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        match notify::send(
            "Claude Code",
            "Claude Code needs your attention",
            Urgency::Normal,
        ) {
            Ok(()) | Err(NotifyError::RateLimited) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

hookrt_sdk::define_hook!(DesktopNotify {
    "custom.claude.notification" => notification,
});
