//! Context pruning (an edit on `step.completed`): keeps the outputs of the newest `keep`
//! tool results and replaces older outputs with a marker, so long sessions stop resending
//! stale tool output to the model. Calls and results are never removed (they stay paired),
//! messages and `progress` are never touched, and `extras[<slug>]` records how many
//! outputs are pruned so far. No edit when there is nothing new to prune.
//!
//! Configuration (optional): `[hooks.context-pruner] config = { keep = 2 }`.

use hookrt_sdk::prelude::*;

/// What a pruned output becomes.
const MARKER: &str = "[pruned by context-pruner]";
/// Results whose output is kept when the config says nothing.
const DEFAULT_KEEP: usize = 2;

pub struct ContextPruner {
    keep: usize,
}

impl Default for ContextPruner {
    fn default() -> Self {
        Self { keep: DEFAULT_KEEP }
    }
}

impl ContextPruner {
    fn setup(&mut self, config: &serde_json::Value) -> HookResult {
        if let Some(keep) = config.get("keep") {
            self.keep = keep
                .as_u64()
                .and_then(|k| usize::try_from(k).ok())
                .ok_or_else(|| {
                    HookError::new("config.keep must be a whole number >= 0 (default 2)")
                })?;
        }
        Ok(())
    }

    fn step_completed(&mut self, event: &Event, cx: &Context) -> HookResult<Option<AgentInput>> {
        let step: StepCompleted = event.data()?;
        let Some(mut state) = step.state else {
            return Ok(None);
        };
        let older = state.tool_results.len().saturating_sub(self.keep);
        let mut newly = 0u64;
        for result in &mut state.tool_results[..older] {
            if result.output != MARKER {
                result.output = serde_json::Value::from(MARKER);
                newly += 1;
            }
        }
        if newly == 0 {
            return Ok(None);
        }
        let pruned = state
            .tool_results
            .iter()
            .filter(|r| r.output == MARKER)
            .count();
        state.extras.insert(
            cx.slug().to_owned(),
            serde_json::json!({ "pruned": pruned }),
        );
        log::info(
            "pruned tool outputs",
            &[
                ("newly", &newly.to_string()),
                ("total", &pruned.to_string()),
            ],
        );
        Ok(Some(state))
    }
}

hookrt_sdk::define_hook!(ContextPruner {
    configure => setup,
    "step.completed" => step_completed,
});

#[cfg(test)]
mod tests {
    use super::*;

    fn step(results: usize) -> Event {
        let calls: Vec<_> = (0..results)
            .map(|i| serde_json::json!({"call_id": format!("c{i}"), "tool": "t", "input": {}}))
            .collect();
        let outs: Vec<_> = (0..results).map(|i| serde_json::json!({"call_id": format!("c{i}"), "status": "ok", "output": {"n": i}})).collect();
        let line = serde_json::json!({"schema_version": 1, "id": "e", "kind": "step.completed", "timestamp": "t",
            "coordinates": {"agent": "a", "session": "s", "sequence": 0},
            "data": {"index": 0, "finish_reason": "tool_calls", "state": {
                "messages": [{"id": "m", "role": "user", "content": "hi"}], "tool_calls": calls,
                "tool_results": outs, "extras": {}, "progress": {"turn": 1}, "immutable_history": 1}}});
        Event::from_json(&line.to_string()).expect("event")
    }

    fn prune(hook: &mut ContextPruner, event: &Event) -> Option<AgentInput> {
        hook.step_completed(
            event,
            &Context::new("step.completed", "context-pruner", 100),
        )
        .expect("edit")
    }

    #[test]
    fn prunes_all_but_the_newest_outputs_and_keeps_pairs() {
        let state = prune(&mut ContextPruner::default(), &step(5)).expect("an edit");
        let outputs: Vec<_> = state
            .tool_results
            .iter()
            .map(|r| r.output.clone())
            .collect();
        assert_eq!(&outputs[..3], &[MARKER, MARKER, MARKER]);
        assert_eq!(outputs[3], serde_json::json!({"n": 3}));
        assert!(state.calls_and_results_paired());
        assert_eq!(
            state.extras["context-pruner"],
            serde_json::json!({"pruned": 3})
        );
        assert_eq!(state.progress, serde_json::json!({"turn": 1}));
    }

    #[test]
    fn nothing_to_prune_is_no_edit() {
        assert_eq!(prune(&mut ContextPruner::default(), &step(2)), None);
        let mut keep_all = ContextPruner::default();
        keep_all
            .setup(&serde_json::json!({"keep": 10}))
            .expect("config");
        assert_eq!(prune(&mut keep_all, &step(5)), None);
        assert!(
            ContextPruner::default()
                .setup(&serde_json::json!({"keep": -1}))
                .is_err()
        );
    }
}
