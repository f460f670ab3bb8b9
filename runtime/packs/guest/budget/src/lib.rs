//! The `budget` pack's component: each session's tool calls counted in the
//! hook's `state` (`hookrt_pack_rules::budget`), the calls over the
//! settings of `[packs.budget]` refused (docs/packs/budget.md). A session's
//! count is dropped when the session ends.

use hookrt_pack_rules::Answer;
use hookrt_pack_rules::budget::{Ledger, Settings, seconds};
use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Budget {
    settings: Option<Settings>,
}

/// The `state` key of the session `cx` is in.
fn key_of(cx: &Context) -> String {
    format!("session/{}/{}", cx.agent(), cx.session())
}

#[hookrt_sdk::hook]
impl Hook for Budget {
    type Config = Settings;

    fn configure(&mut self, config: Settings) -> HookResult {
        config.check().map_err(|e| HookError::new(e.message))?;
        self.settings = Some(config);
        Ok(())
    }

    fn actions_requested(
        &mut self,
        data: ActionsRequested,
        event: &Event,
        cx: &Context,
    ) -> HookResult<Vec<Approval>> {
        let settings = self
            .settings
            .as_ref()
            .ok_or_else(|| HookError::new("budget was not configured"))?;
        let now = seconds(event.timestamp()).ok_or_else(|| {
            HookError::new(format!("the event's timestamp `{}` is not RFC 3339", event.timestamp()))
        })?;
        let key = key_of(cx);
        let mut ledger: Ledger = state::get_json(&key)?.unwrap_or_default();
        let verdicts = ledger.admit(settings, event.id(), now, data.actions.len());
        state::set_json(&key, &ledger)?;
        Ok(verdicts
            .into_iter()
            .map(|v| match (v, settings.answer) {
                (None, _) => Approval::Abstain,
                (Some(reason), Answer::Deny) => Approval::deny(reason),
                (Some(reason), Answer::Ask) => Approval::ask(reason),
            })
            .collect())
    }

    fn session_completed(&mut self, _data: SessionCompleted, _event: &Event, cx: &Context) -> HookResult {
        state::delete(&key_of(cx));
        Ok(())
    }
}
