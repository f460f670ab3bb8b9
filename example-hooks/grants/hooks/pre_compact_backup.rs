//! Ported from disler-pre-compact-backup (github.com/disler/claude-code-hooks-mastery@052ad1c: .claude/hooks/pre_compact.py).
//!
//! The original copies the session's transcript to
//! `logs/transcript_backups/<session>_pre_compact_<trigger>_<timestamp>.jsonl`
//! before Claude Code compacts it, and never blocks the compaction. Here it
//! watches `compaction.requested` without a say, reads the transcript through
//! the `transcript` grant and writes the backup through the `write` grant,
//! whose table names the one folder (`logs/transcript_backups`). The one
//! change: the backup holds the transcript's last whole lines up to the
//! grant's cap (the original copies the whole file).

use hookrt_sdk::prelude::*;

/// Most of the transcript one backup keeps.
const BACKUP_BYTES: u64 = 8 << 20;

#[derive(Default)]
pub struct PreCompactBackup;

#[hookrt_sdk::hook]
impl Hook for PreCompactBackup {
    type Config = NoConfig;

    fn compaction_requested_observed(
        &mut self,
        _data: hookrt_sdk::eve::CompactionRequested,
        event: &Event,
        cx: &Context,
    ) -> HookResult {
        let Some(bytes) = transcript::tail(BACKUP_BYTES)? else {
            return Ok(());
        };
        let data: serde_json::Value = serde_json::from_str(event.raw_data()).unwrap_or_default();
        let trigger = data["trigger"].as_str().unwrap_or("unknown");
        // 2026-12-06T10:00:00Z -> 20261206_100000, as the original's strftime.
        let digits: String = event
            .timestamp()
            .chars()
            .filter(char::is_ascii_digit)
            .take(14)
            .collect();
        let stamp = format!("{}_{}", &digits[..8.min(digits.len())], &digits[8.min(digits.len())..]);
        let name = format!("{}_pre_compact_{trigger}_{stamp}.jsonl", cx.session());
        write::file(&name, &bytes)?;
        log::info("transcript backed up", &[("file", &name)]);
        Ok(())
    }
}
