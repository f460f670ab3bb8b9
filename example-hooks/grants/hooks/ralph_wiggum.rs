//! Ported from anthropic-plugin-ralph-wiggum (github.com/anthropics/claude-code@5cfc0a1: plugins/ralph-wiggum/hooks/stop-hook.sh).
//!
//! The original keeps a turn going: while a loop is on, its Stop hook blocks
//! the stop and feeds the same prompt back, until the completion promise
//! (`<promise>TEXT</promise>`) appears in the last assistant message, read
//! from the transcript, or the iterations run out. Here the loop's prompt,
//! promise and iterations are the hook's `config` (the original keeps them
//! in `.claude/ralph-loop.local.md`, which a `/ralph-loop` command writes),
//! the iteration count is in `state`, and the last assistant message comes
//! through the `transcript` grant. hookrt's loop governor still caps the
//! continues in a row (`[governor] max_continues`).

use hookrt_sdk::prelude::*;

/// How much of the transcript is read to find the last assistant message.
const TAIL_BYTES: u64 = 256 << 10;

#[derive(Default, Deserialize)]
#[serde(crate = "hookrt_sdk::serde")]
pub struct Loop {
    /// What the model is told again on each iteration.
    prompt: String,
    /// The text that ends the loop inside `<promise>…</promise>`; none: the
    /// loop ends only at `max_iterations`.
    #[serde(default)]
    completion_promise: Option<String>,
    /// Iterations before the loop ends; 0: no limit but the governor's.
    #[serde(default)]
    max_iterations: u64,
}

#[derive(Default)]
pub struct RalphWiggum {
    config: Loop,
}

#[hookrt_sdk::hook]
impl Hook for RalphWiggum {
    type Config = Loop;

    fn configure(&mut self, config: Loop) -> HookResult {
        if config.prompt.trim().is_empty() {
            return Err(HookError::new("config.prompt: the loop needs a prompt"));
        }
        self.config = config;
        Ok(())
    }

    fn turn_stopping(
        &mut self,
        _data: TurnStopping,
        _event: &Event,
        _cx: &Context,
    ) -> HookResult<Continuation> {
        let iteration: u64 = state::get_json("iteration")?.unwrap_or(1);
        let max = self.config.max_iterations;
        if max > 0 && iteration >= max {
            log::info("max iterations reached", &[("max", &max.to_string())]);
            state::delete("iteration");
            return Ok(Continuation::Stop);
        }
        let Some(lines) = transcript::tail_json(TAIL_BYTES)? else {
            // As the original with no transcript: the loop stops.
            state::delete("iteration");
            return Ok(Continuation::Stop);
        };
        let last = transcript::last_assistant_text(&lines).unwrap_or_default();
        if let Some(promise) = &self.config.completion_promise
            && promised(&last).as_deref() == Some(promise.as_str())
        {
            log::info("completion promise detected", &[]);
            state::delete("iteration");
            return Ok(Continuation::Stop);
        }
        state::set_json("iteration", &(iteration + 1))?;
        Ok(Continuation::continue_turn(self.config.prompt.clone()))
    }
}

/// The text of the first `<promise>…</promise>` in `text`, its whitespace
/// collapsed (as the original's Perl does).
fn promised(text: &str) -> Option<String> {
    let start = text.find("<promise>")? + "<promise>".len();
    let end = text[start..].find("</promise>")? + start;
    Some(text[start..end].split_whitespace().collect::<Vec<_>>().join(" "))
}
