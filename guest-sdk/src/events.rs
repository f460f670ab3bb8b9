//! Typed data for the known event kinds, one struct per kind.
//!
//! Parse with [`crate::Event::data`]. Optional fields default to `None` when absent and
//! unknown fields are ignored, so new host versions can add fields without breaking hooks.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[allow(deprecated, reason = "kept for hooks written before AgentInput")]
pub use crate::agent_input::AgentState;
pub use crate::agent_input::{
    ActionStatus, AgentInput, InputMessage, InputToolCall, InputToolResult,
};

/// The data of one event kind.
pub trait EventData: DeserializeOwned {
    /// The event kind this data belongs to, e.g. `message.completed`.
    const KIND: &'static str;
}

/// Every event kind the SDK has a data struct for, in lifecycle order.
pub const KINDS: &[&str] = &[
    SessionStarted::KIND,
    SessionCompleted::KIND,
    SessionFailed::KIND,
    TurnStarted::KIND,
    TurnStopping::KIND,
    TurnCompleted::KIND,
    TurnFailed::KIND,
    StepStarted::KIND,
    StepCompleted::KIND,
    MessageReceived::KIND,
    PromptSubmitted::KIND,
    MessageCompleted::KIND,
    ActionsRequested::KIND,
    ActionResult::KIND,
    InputRequested::KIND,
    InputReceived::KIND,
    FileEditRequested::KIND,
    PermissionRequested::KIND,
    TaskCreated::KIND,
    ConfigChanged::KIND,
    // Eve's stream (typed in [`crate::eve`]).
    "session.waiting",
    "turn.waiting",
    "turn.cancelled",
    "step.failed",
    "reasoning.appended",
    "reasoning.completed",
    "message.appended",
    "result.completed",
    "action.input.appended",
    "action.partial",
    "input.resolved",
    "approval.candidate",
    "approval.settled",
    "task.started",
    "task.detached",
    "task.settled",
    "task.ended",
    "agent.started",
    "compaction.requested",
    "compaction.completed",
    "context.cleared",
    "authorization.required",
    "authorization.completed",
    "subagent.called",
    "subagent.started",
    "subagent.event",
    "subagent.completed",
];

macro_rules! kind {
    ($ty:ty => $kind:literal) => {
        impl EventData for $ty {
            const KIND: &'static str = $kind;
        }
    };
}

/// Token counts reported by the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens sent to the model.
    pub input_tokens: u64,
    /// Tokens the model produced.
    pub output_tokens: u64,
}

/// `session.started`: a session (conversation) began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStarted {
    /// Name of the agent that runs the session.
    pub agent_name: String,
    /// The model the session uses, when known.
    #[serde(default)]
    pub model: Option<String>,
}
kind!(SessionStarted => "session.started");

/// `session.completed`: the session ended normally.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionCompleted {
    /// Number of turns the session ran.
    pub turns: u32,
}
kind!(SessionCompleted => "session.completed");

/// `session.failed`: the session ended with an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionFailed {
    /// Why the session failed.
    pub reason: String,
    /// Slug of the critical hook whose failure ended the session, if one did.
    #[serde(default)]
    pub hook: Option<String>,
    /// Id of the event whose delivery failed, if a hook failure caused this.
    #[serde(default)]
    pub event_id: Option<String>,
    /// How the failing delivery ended (e.g. `trap`, `out_of_fuel`, `timeout`, `error`).
    #[serde(default)]
    pub outcome: Option<String>,
    /// The failure message (the hook's error text or the trap), never event data.
    #[serde(default)]
    pub message: Option<String>,
}
kind!(SessionFailed => "session.failed");

/// `turn.started`: the agent began a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnStarted {
    /// The message that started the turn, when one did.
    #[serde(default)]
    pub input_message_id: Option<String>,
}
kind!(TurnStarted => "turn.started");

/// `turn.stopping` (gate): the agent is about to end its turn. Answer
/// [`Continuation`](crate::Continuation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnStopping {
    /// Whether this stop follows a hook's continue (the agent's own flag); `false`
    /// resets the loop governor's count.
    #[serde(default)]
    pub continued: bool,
    /// The model's last message of the turn, when the agent gives it. May hold secrets:
    /// do not log it.
    #[serde(default)]
    pub last_message: Option<String>,
}
kind!(TurnStopping => "turn.stopping");

/// `turn.completed`: a turn ended normally.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnCompleted {
    /// Number of steps the turn ran.
    pub steps: u32,
    /// Tokens used across the turn, when reported.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// The agent input state at the end of the turn; an edit hook may return it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<AgentInput>,
}
kind!(TurnCompleted => "turn.completed");

/// `turn.failed`: a turn ended with an error (also raised once when a critical hook fails).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnFailed {
    /// Why the turn failed.
    pub reason: String,
    /// Slug of the critical hook whose failure ended the turn, if one did.
    #[serde(default)]
    pub hook: Option<String>,
    /// Id of the event whose delivery failed, if a hook failure caused this.
    #[serde(default)]
    pub event_id: Option<String>,
    /// How the failing delivery ended (e.g. `trap`, `out_of_fuel`, `timeout`, `error`).
    #[serde(default)]
    pub outcome: Option<String>,
    /// The failure message (the hook's error text or the trap), never event data.
    #[serde(default)]
    pub message: Option<String>,
}
kind!(TurnFailed => "turn.failed");

/// `step.started`: one model call (and its tool calls) began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepStarted {
    /// Position of the step in its turn (0-based).
    pub index: u32,
}
kind!(StepStarted => "step.started");

/// `step.completed`: a step ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepCompleted {
    /// Position of the step in its turn (0-based).
    pub index: u32,
    /// Why the model stopped, e.g. `tool_calls` or `stop`.
    pub finish_reason: String,
    /// The agent input state after the step's tool results were committed; an edit hook
    /// may return it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<AgentInput>,
}
kind!(StepCompleted => "step.completed");

/// `message.received`: a message arrived from the user (or a channel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageReceived {
    /// Stable id of the message.
    pub message_id: String,
    /// Who wrote it, e.g. `user`.
    pub role: String,
    /// The message text. May hold secrets: do not log it.
    pub content: String,
}
kind!(MessageReceived => "message.received");

/// `prompt.submitted` (gate): a user prompt is submitted, before the model sees it.
/// Answer [`Block`](crate::Block).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptSubmitted {
    /// The prompt's text. May hold secrets: do not log it.
    pub prompt: String,
    /// Where the prompt came from, when the agent says (e.g. `user`).
    #[serde(default)]
    pub source: Option<String>,
    /// The conversation before it, oldest first, where the source sends it
    /// (Anthropic's inference hooks do). May hold secrets: do not log it.
    #[serde(default)]
    pub history: Option<Vec<PriorMessage>>,
}
kind!(PromptSubmitted => "prompt.submitted");

/// One message of the conversation before a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriorMessage {
    /// Who wrote it: `user` or `assistant`.
    pub role: String,
    /// Its text: text blocks, attachments' extracted text, tool results and
    /// tool calls, joined by blank lines.
    pub text: String,
}

/// `message.completed`: the model finished a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageCompleted {
    /// Stable id of the message.
    pub message_id: String,
    /// Who wrote it, e.g. `assistant`.
    pub role: String,
    /// The message text. May hold secrets: do not log it.
    pub content: String,
    /// Why the model stopped, when reported.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Tokens used for this message, when reported.
    #[serde(default)]
    pub usage: Option<Usage>,
}
kind!(MessageCompleted => "message.completed");

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestedAction {
    /// Id tying the call to its `action.result`.
    pub call_id: String,
    /// Tool name, e.g. `run_shell`.
    pub tool: String,
    /// The tool's input as the model wrote it.
    #[serde(default)]
    pub input: Value,
}

/// `actions.requested`: the model asked for one or more tool calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionsRequested {
    /// The requested calls, in the model's order.
    pub actions: Vec<RequestedAction>,
}
kind!(ActionsRequested => "actions.requested");

/// `action.result`: one tool call finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionResult {
    /// Id of the call from `actions.requested`.
    pub call_id: String,
    /// Tool name.
    pub tool: String,
    /// Whether the call succeeded.
    pub status: ActionStatus,
    /// The tool's output when it succeeded. May hold secrets: do not log it.
    #[serde(default)]
    pub output: Option<Value>,
    /// The error message when it failed.
    #[serde(default)]
    pub error: Option<String>,
    /// How long the call took.
    #[serde(default)]
    pub duration_ms: Option<u64>,
}
kind!(ActionResult => "action.result");

/// `input.requested`: the agent asked a human for input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequested {
    /// Id tying the request to its answer.
    pub request_id: String,
    /// The question shown to the human.
    pub prompt: String,
}
kind!(InputRequested => "input.requested");

/// `input.received`: a human answered an input request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputReceived {
    /// Id of the request being answered.
    pub request_id: String,
    /// The human's answer.
    pub answer: String,
}
kind!(InputReceived => "input.received");

/// `file.edit.requested`: the agent wants to write a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEditRequested {
    /// Path of the file, relative to the agent's workspace.
    pub path: String,
    /// The new content.
    pub content: String,
    /// The content before the edit, when the file existed.
    #[serde(default)]
    pub before_content: Option<String>,
    /// Whether the file lives in storage shared across sessions.
    pub global_storage: bool,
}
kind!(FileEditRequested => "file.edit.requested");

/// `permission.requested` (decision): the agent is about to ask a human to allow a call.
/// Answer [`PermissionAnswer`](crate::PermissionAnswer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequested {
    /// Tool name, e.g. `run_shell`.
    pub tool: String,
    /// The call's input, as rewritten so far by earlier `rewrite:` hooks. May hold
    /// secrets: do not log it.
    #[serde(default)]
    pub input: Value,
    /// Id of the call, when the agent gives one.
    #[serde(default)]
    pub call_id: Option<String>,
    /// The agent's own suggestions for the human (e.g. rules to add), as it sends them.
    #[serde(default)]
    pub suggestions: Option<Value>,
}
kind!(PermissionRequested => "permission.requested");

/// `task.created` (gate): a task (a todo item of the agent's) is about to be created.
/// Answer [`Block`](crate::Block).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskCreated {
    /// The task's id.
    pub task_id: String,
    /// The task's one-line subject.
    pub subject: String,
    /// The task's longer description, when it has one.
    #[serde(default)]
    pub description: Option<String>,
}
kind!(TaskCreated => "task.created");

/// `config.changed` (gate): the agent's settings changed and are about to apply.
/// Answer [`Block`](crate::Block).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigChanged {
    /// Which settings changed, as the agent names them (e.g. `user_settings`).
    pub source: String,
    /// The settings file that changed, when there is one.
    #[serde(default)]
    pub path: Option<String>,
}
kind!(ConfigChanged => "config.changed");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_lists_the_vocabulary_in_order() {
        assert_eq!(
            KINDS,
            &[
                "session.started",
                "session.completed",
                "session.failed",
                "turn.started",
                "turn.stopping",
                "turn.completed",
                "turn.failed",
                "step.started",
                "step.completed",
                "message.received",
                "prompt.submitted",
                "message.completed",
                "actions.requested",
                "action.result",
                "input.requested",
                "input.received",
                "file.edit.requested",
                "permission.requested",
                "task.created",
                "config.changed",
                "session.waiting",
                "turn.waiting",
                "turn.cancelled",
                "step.failed",
                "reasoning.appended",
                "reasoning.completed",
                "message.appended",
                "result.completed",
                "action.input.appended",
                "action.partial",
                "input.resolved",
                "approval.candidate",
                "approval.settled",
                "task.started",
                "task.detached",
                "task.settled",
                "task.ended",
                "agent.started",
                "compaction.requested",
                "compaction.completed",
                "context.cleared",
                "authorization.required",
                "authorization.completed",
                "subagent.called",
                "subagent.started",
                "subagent.event",
                "subagent.completed",
            ]
        );
    }

    #[test]
    fn optional_fields_default_and_unknown_fields_are_ignored() {
        let data: MessageCompleted = serde_json::from_str(
            r#"{"message_id":"m1","role":"assistant","content":"hi","future_field":3}"#,
        )
        .expect("tolerant parse");
        assert_eq!(data.finish_reason, None);
        assert_eq!(data.usage, None);
    }

    #[test]
    fn the_new_kinds_parse_with_their_optional_fields_absent() {
        let prompt: PromptSubmitted =
            serde_json::from_str(r#"{"prompt":"hi","extra":1}"#).expect("parse");
        assert_eq!((prompt.prompt.as_str(), prompt.source), ("hi", None));
        let stopping: TurnStopping = serde_json::from_str("{}").expect("parse");
        assert_eq!(
            stopping,
            TurnStopping {
                continued: false,
                last_message: None
            }
        );
        let permission: PermissionRequested =
            serde_json::from_str(r#"{"tool":"run_shell"}"#).expect("parse");
        assert_eq!(permission.input, Value::Null);
        assert_eq!((permission.call_id, permission.suggestions), (None, None));
        let permission: PermissionRequested = serde_json::from_str(
            r#"{"tool":"run_shell","input":{"command":"ls"},"call_id":"c1","suggestions":[{"type":"addRules"}]}"#,
        )
        .expect("parse");
        assert_eq!(permission.input["command"], "ls");
        assert_eq!(permission.call_id.as_deref(), Some("c1"));
        let task: TaskCreated =
            serde_json::from_str(r#"{"task_id":"t1","subject":"write docs"}"#).expect("parse");
        assert_eq!(task.description, None);
        let config: ConfigChanged =
            serde_json::from_str(r#"{"source":"user_settings"}"#).expect("parse");
        assert_eq!(config.path, None);
        assert!(serde_json::from_str::<TaskCreated>(r#"{"task_id":"t1"}"#).is_err());
    }

    #[test]
    fn action_status_is_lowercase() {
        let data: ActionResult =
            serde_json::from_str(r#"{"call_id":"c","tool":"t","status":"error","error":"x"}"#)
                .expect("parse");
        assert_eq!(data.status, ActionStatus::Error);
        assert!(serde_json::from_str::<ActionStatus>(r#""Error""#).is_err());
    }
}
