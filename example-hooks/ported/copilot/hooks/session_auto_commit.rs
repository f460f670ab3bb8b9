// Ported from copilot-session-auto-commit: github.com/github/awesome-copilot@ab7544d hooks/session-auto-commit/auto-commit.sh
//! When a Copilot CLI session ends (`sessionEnd`), commit every change in
//! the project: `git add -A`, then `git commit --no-verify -m "auto-commit:
//! <time>"`, each a program of the `exec` table with a fixed template (the
//! message a bounded `text` placeholder), under `write = [".git"]`: git may
//! write its own folder and nothing else. The original then runs `git
//! push`; this port does not: a push needs the user's credentials (SSH
//! agent, credential helper, `~/.git-credentials`) and the network, which
//! the exec sandbox withholds on purpose. Push from the shell, or give a
//! separate hook a `push` program with `network = true` and the credential
//! variables named in `env`, which `hookrt audit` then shows.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct SessionAutoCommit;

#[hookrt_sdk::hook]
impl Hook for SessionAutoCommit {
    type Config = NoConfig;

    // Every event, as `*`: Copilot's `sessionEnd` gives a reason, not the
    // turn count the typed `session.completed` data needs.
    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {
        if event.kind() != "session.completed" {
            return Ok(());
        }
        let status = exec::run("status", &[])?;
        if !status.success() {
            log::info("not a git repository", &[]);
            return Ok(());
        }
        if status.stdout.is_empty() {
            log::info("nothing to commit", &[]);
            return Ok(());
        }
        exec::run("add", &[])?;
        let message = format!("auto-commit: {}", event.timestamp());
        let commit = exec::run("commit", &[("message", &message)])?;
        let said = String::from_utf8_lossy(&commit.stdout);
        log::info(
            "committed",
            &[
                ("status", &format!("{:?}", commit.status)),
                ("git", said.lines().next().unwrap_or("")),
            ],
        );
        Ok(())
    }
}
