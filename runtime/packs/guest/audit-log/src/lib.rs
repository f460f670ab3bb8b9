//! The `audit-log` pack's component: one JSON line per watched event,
//! appended to the file of `[packs.audit-log]` through the `write` grant
//! (`hookrt_pack_rules::audit_log`, docs/packs/audit-log.md). Secrets are
//! masked before a line is written; a prompt's text never is.

use hookrt_pack_rules::audit_log::{Event as Logged, Settings, record};
use hookrt_pack_rules::secrets::{self, Scanner};
use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct AuditLog {
    ready: Option<(Settings, Scanner)>,
}

#[hookrt_sdk::hook]
impl Hook for AuditLog {
    type Config = Settings;

    fn configure(&mut self, config: Settings) -> HookResult {
        config.check().map_err(|e| HookError::new(e.message))?;
        let scanner = Scanner::new(secrets::Settings::default()).map_err(|e| HookError::new(e.message))?;
        self.ready = Some((config, scanner));
        Ok(())
    }

    fn any(&mut self, event: &Event, cx: &Context) -> HookResult {
        let (settings, scanner) = self
            .ready
            .as_ref()
            .ok_or_else(|| HookError::new("audit-log was not configured"))?;
        let logged = Logged {
            kind: event.kind(),
            id: event.id(),
            timestamp: event.timestamp(),
            agent: cx.agent(),
            session: cx.session(),
        };
        if let Some(line) = record(settings, scanner, logged, &event.data_json()?) {
            write::append(line.as_bytes())?;
        }
        Ok(())
    }
}
