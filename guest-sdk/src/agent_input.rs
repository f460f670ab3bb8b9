//! `AgentInput`: the agent input state carried by `step.completed` and `turn.completed`,
//! which edit hooks may change and return.
//!
//! Rules the runtime enforces on an edit (a broken rule rolls the whole event's edits back):
//! every tool call keeps exactly one result with the same `call_id` and vice versa; the first
//! `immutable_history` messages stay exactly as they were; `progress` stays exactly as it
//! was. Keep a hook's own data under `extras[<its slug>]`.
//!
//! Fields this SDK version does not know are kept in `other` and written back unchanged,
//! so an edit never drops what a newer host sends.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionStatus {
    /// The tool returned a result.
    Ok,
    /// The tool failed; see `error`.
    Error,
}

/// The agent input state: the conversation the model sees on its next call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AgentInput {
    /// The conversation's messages, oldest first.
    #[serde(default)]
    pub messages: Vec<InputMessage>,
    /// Tool calls the model made, oldest first.
    #[serde(default)]
    pub tool_calls: Vec<InputToolCall>,
    /// One result per tool call, paired by `call_id`.
    #[serde(default)]
    pub tool_results: Vec<InputToolResult>,
    /// Hook-owned data that lasts with the conversation, one key per hook slug.
    #[serde(default)]
    pub extras: Map<String, Value>,
    /// Reserved for the agent loop (turn, step, token counts): read it, never change it.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub progress: Value,
    /// The first this-many messages must not change.
    #[serde(default)]
    pub immutable_history: u32,
    /// Fields this SDK does not know, written back unchanged.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct InputMessage {
    /// Stable id of the message.
    pub id: String,
    /// Who wrote it: `user`, `assistant`, ...
    pub role: String,
    /// The message text (`None` when the message has none, e.g. only tool
    /// calls). May hold secrets: do not log it. Absent stays absent when the
    /// state is written back, so an untouched message compares equal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Fields this SDK does not know, written back unchanged.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One tool call the model made.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct InputToolCall {
    /// Id pairing the call with its result.
    pub call_id: String,
    /// Tool name.
    pub tool: String,
    /// The tool's input as the model wrote it (absent stays absent).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub input: Value,
    /// Fields this SDK does not know, written back unchanged.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputToolResult {
    /// Id of the call this result answers.
    pub call_id: String,
    /// Whether the call succeeded.
    pub status: ActionStatus,
    /// What the model sees of the result (the error text when it failed). May
    /// hold secrets. Absent stays absent.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub output: Value,
    /// Fields this SDK does not know, written back unchanged.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl AgentInput {
    /// The call with this id, if any.
    pub fn tool_call(&self, call_id: &str) -> Option<&InputToolCall> {
        self.tool_calls.iter().find(|call| call.call_id == call_id)
    }

    /// The result of the call with this id, if any.
    pub fn tool_result(&self, call_id: &str) -> Option<&InputToolResult> {
        self.tool_results
            .iter()
            .find(|result| result.call_id == call_id)
    }

    /// True when every call has exactly one result and every result answers a call: the
    /// pairing rule the runtime checks on an edit.
    pub fn calls_and_results_paired(&self) -> bool {
        let calls: BTreeSet<&str> = self.tool_calls.iter().map(|c| c.call_id.as_str()).collect();
        let results: BTreeSet<&str> = self
            .tool_results
            .iter()
            .map(|r| r.call_id.as_str())
            .collect();
        // Set sizes equal to list lengths: no id repeats on either side.
        calls.len() == self.tool_calls.len()
            && results.len() == self.tool_results.len()
            && calls == results
    }
}

/// The former name of [`AgentInput`] (SDK 0.1), kept for one version.
#[deprecated(
    since = "0.2.0",
    note = "renamed `AgentInput`: `state` now means a hook's own key-value store only"
)]
pub type AgentState = AgentInput;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_fields_stay_absent_on_a_round_trip() {
        let text = r#"{"messages":[{"id":"m1","role":"assistant"}],"tool_calls":[{"call_id":"c1","tool":"t"}],"tool_results":[{"call_id":"c1","status":"ok"}],"extras":{}}"#;
        let state: AgentInput = serde_json::from_str(text).unwrap();
        let back = serde_json::to_value(&state).unwrap();
        assert_eq!(
            back["messages"][0],
            serde_json::json!({"id": "m1", "role": "assistant"})
        );
        assert_eq!(
            back["tool_calls"][0],
            serde_json::json!({"call_id": "c1", "tool": "t"})
        );
        assert_eq!(
            back["tool_results"][0],
            serde_json::json!({"call_id": "c1", "status": "ok"})
        );
    }

    const STATE: &str = r#"{"messages":[{"id":"m1","role":"user","content":"hi","lang":"en"}],
        "tool_calls":[{"call_id":"c1","tool":"read_file","input":{"path":"a"}}],
        "tool_results":[{"call_id":"c1","status":"ok","output":{"content":"x"}}],
        "extras":{},"progress":{"turn":1,"step":2,"tokens":10},"immutable_history":1,
        "system_prompt":"be brief"}"#;

    #[test]
    fn unknown_fields_round_trip_unchanged() {
        let state: AgentInput = serde_json::from_str(STATE).expect("parses");
        assert_eq!(state.other["system_prompt"], "be brief");
        assert_eq!(state.messages[0].other["lang"], "en");
        let back: Value = serde_json::to_value(&state).expect("serializes");
        let original: Value = serde_json::from_str(STATE).expect("json");
        assert_eq!(back, original);
    }

    #[test]
    fn pairing_detects_an_orphaned_call() {
        let mut state: AgentInput = serde_json::from_str(STATE).expect("parses");
        assert!(state.calls_and_results_paired());
        state.tool_results.pop();
        assert!(!state.calls_and_results_paired());
    }

    #[test]
    fn missing_parts_default() {
        let state: AgentInput = serde_json::from_str("{}").expect("parses");
        assert_eq!(state, AgentInput::default());
        assert_eq!(
            serde_json::to_string(&state).expect("ser"),
            r#"{"messages":[],"tool_calls":[],"tool_results":[],"extras":{},"immutable_history":0}"#
        );
    }
}
