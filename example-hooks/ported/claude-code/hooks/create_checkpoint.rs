// Ported from claudekit-create-checkpoint: github.com/carlrannaberg/claudekit@f22a4f9 cli/hooks/create-checkpoint.ts
//! A git checkpoint when Claude Code stops (`Stop`, `SubagentStop`) without
//! touching the worktree: `git add -A`, `git stash create`, `git stash
//! store` and `git reset`, as the original does, each a program of the
//! `exec` table with a fixed template (the table's `write = [".git"]` lets
//! git write its objects, index and refs, and nothing else). The commit
//! made by `stash create` is stored under the message
//! `claude-checkpoint: Auto-save at <the event's time>`. (The original also
//! drops checkpoints past its tenth; this port keeps them all.)

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct CreateCheckpoint;

impl CreateCheckpoint {
    fn checkpoint(&self, event: &Event) -> HookResult {
        let status = exec::run("status", &[])?;
        if !status.success() || status.stdout.is_empty() {
            return Ok(()); // not a repository, or nothing changed
        }
        let message = format!("claude-checkpoint: Auto-save at {}", event.timestamp());
        exec::run("add", &[])?;
        let created = exec::run("stash-create", &[("message", &message)])?;
        let sha = String::from_utf8_lossy(&created.stdout).trim().to_owned();
        if created.success() && !sha.is_empty() {
            let stored = exec::run("stash-store", &[("message", &message), ("sha", &sha)])?;
            log::info(
                "checkpoint",
                &[("sha", &sha), ("stored", &stored.success().to_string())],
            );
        }
        // Unstage what `add -A` staged: the worktree is left as it was.
        exec::run("reset", &[])?;
        Ok(())
    }
}

#[hookrt_sdk::hook]
impl Hook for CreateCheckpoint {
    type Config = NoConfig;

    fn turn_stopping_observed(&mut self, _data: TurnStopping, event: &Event, _cx: &Context) -> HookResult {
        self.checkpoint(event)
    }
}
