//! Test hook (world 0.3.0): answers every gate and permission request as its
//! config says, and adds context where agents take it.
//!
//! `config = { block_word = "secret", keep_going = "run the tests", deny_tool = "Bash",
//! context = "policy: be careful" }`: a prompt holding
//! `block_word` is blocked; every stop is continued with `keep_going` (when set: a
//! hook that would loop forever, for the governor); compactions, tasks and config
//! changes are blocked; a permission request for `deny_tool` is denied (interrupting),
//! any other allowed; `context` is added on session start, prompts, tool results
//! and stops.

use hookrt_sdk::prelude::*;

#[derive(Deserialize, Default)]
#[serde(crate = "hookrt_sdk::serde")]
pub struct Config {
    #[serde(default)]
    block_word: Option<String>,
    #[serde(default)]
    keep_going: Option<String>,
    #[serde(default)]
    deny_tool: Option<String>,
    #[serde(default)]
    context: Option<String>,
}

#[derive(Default)]
pub struct Gatekeeper {
    config: Config,
}

impl Gatekeeper {
    fn context(&self) {
        if let Some(c) = &self.config.context {
            context::add(c.clone());
        }
    }
}

#[hookrt_sdk::hook]
impl Hook for Gatekeeper {
    type Config = Config;

    fn configure(&mut self, config: Config) -> HookResult {
        self.config = config;
        Ok(())
    }

    fn session_started(&mut self, _data: SessionStarted, _e: &Event, _cx: &Context) -> HookResult {
        self.context();
        Ok(())
    }

    fn action_result(&mut self, _data: ActionResult, _e: &Event, _cx: &Context) -> HookResult {
        self.context();
        Ok(())
    }

    fn prompt_submitted(&mut self, data: PromptSubmitted, _e: &Event, _cx: &Context) -> HookResult<Block> {
        self.context();
        Ok(match &self.config.block_word {
            Some(w) if data.prompt.contains(w.as_str()) => {
                Block::block(format!("the prompt holds `{w}`"))
            }
            _ => Block::Pass,
        })
    }

    fn turn_stopping(&mut self, _data: TurnStopping, _e: &Event, _cx: &Context) -> HookResult<Continuation> {
        self.context();
        Ok(match &self.config.keep_going {
            Some(next) => Continuation::continue_turn(next.clone()),
            None => Continuation::Stop,
        })
    }

    fn compaction_requested(
        &mut self,
        _data: hookrt_sdk::eve::CompactionRequested,
        _e: &Event,
        _cx: &Context,
    ) -> HookResult<Block> {
        Ok(Block::block("compaction is off for this agent"))
    }

    fn task_created(&mut self, data: TaskCreated, _e: &Event, _cx: &Context) -> HookResult<Block> {
        Ok(Block::block(format!("no new tasks: `{}`", data.subject)))
    }

    fn config_changed(&mut self, data: ConfigChanged, _e: &Event, _cx: &Context) -> HookResult<Block> {
        Ok(Block::block(format!("settings are pinned: {}", data.source)))
    }

    fn permission_requested(
        &mut self,
        data: PermissionRequested,
        _e: &Event,
        _cx: &Context,
    ) -> HookResult<PermissionAnswer> {
        Ok(match &self.config.deny_tool {
            Some(t) if *t == data.tool => {
                PermissionAnswer::deny_and_interrupt(format!("`{t}` needs a human here"))
            }
            _ => PermissionAnswer::Allow,
        })
    }
}
