//! Ported from `codex-agent-notify` (github.com/paultendo/agent-notify: `codex-notify`, Codex's `notify` on agent-turn-complete).
//!
//! Codex turn notify (world 0.4.0, the `notify` grant): when a Codex turn
//! ends, one notification per thread. The original (a `notify` program)
//! titles it `Codex: <last message, 90 characters>` and groups it per
//! thread with `terminal-notifier -group codex-<thread-id>`. Substitutions:
//! hookrt replaces a hook's earlier notification that had the same title,
//! so the thread is the title (`Codex: thread <first 8 of its id>`) and the
//! last message, clipped to 140 characters as the original clips, the body;
//! Codex's `Stop` hook carries no input messages (the original's body), and
//! its session id is the thread id.

use hookrt_sdk::notify::{self, NotifyError, Urgency};
use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct CodexTurnNotify;

/// Whitespace collapsed, at most `limit` characters (`...` when cut): the
/// original's `clip`.
fn clip(text: &str, limit: usize) -> String {
    let clean = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if clean.chars().count() <= limit {
        return clean;
    }
    let kept: String = clean.chars().take(limit.saturating_sub(3)).collect();
    format!("{kept}...")
}

impl CodexTurnNotify {
    fn stopped(&mut self, event: &Event, _cx: &Context) -> HookResult {
        let data: TurnStopping = event.data()?;
        let at = event.coordinates();
        if at.agent != "codex" {
            return Ok(());
        }
        let thread: String = at.session.chars().take(8).collect();
        let last = clip(data.last_message.as_deref().unwrap_or(""), 140);
        let body = if last.is_empty() { "Turn complete".to_owned() } else { last };
        match notify::send(&format!("Codex: thread {thread}"), &body, Urgency::Normal) {
            Ok(()) | Err(NotifyError::RateLimited) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

hookrt_sdk::define_hook!(CodexTurnNotify {
    "observe:turn.stopping" => stopped,
});
