//! Typed data of Eve's stream (vercel/eve, stream versions 21 to 26), as the
//! Eve bridge delivers it (`hookrt run --format eve`, docs/adr/0002-eve-bridge.md):
//! Eve's own camelCase `data`, unchanged (except `actions.requested`, whose
//! actions also get hookrt's `call_id` and `tool`). Every field is optional:
//! Eve's versions differ, and a field a version does not send is `None`.
//! Unknown fields are ignored.
//!
//! Parse with [`crate::Event::data`], e.g. `let d: eve::MessageCompleted = event.data()?;`.
//! The same kind has other data on hookrt's own streams ([`crate::events`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::events::EventData;

/// `session.started`: a durable session started at its first message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStarted {
    /// `{agentId, agentName, eveVersion, ...}`.
    #[serde(default)]
    pub runtime: Option<Value>,
    /// For a subagent's session: `{kind, parentCallId, parentSessionId, parentTurnId, name}`.
    #[serde(default)]
    pub invocation: Option<Value>,
    /// Trace context.
    #[serde(default)]
    pub trace: Option<Value>,
}
impl EventData for SessionStarted {
    const KIND: &'static str = "session.started";
}

/// `session.waiting`: the session parked until the next user message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionWaiting {
    /// What it waits for (`next-user-message`).
    #[serde(default)]
    pub wait: Option<String>,
    /// The handle a follow-up message uses.
    #[serde(default)]
    pub continuation_token: Option<String>,
    /// Token usage so far.
    #[serde(default)]
    pub usage: Option<Value>,
}
impl EventData for SessionWaiting {
    const KIND: &'static str = "session.waiting";
}

/// `session.completed`: the session ended (often without data).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCompleted {
    /// Token usage, when known.
    #[serde(default)]
    pub usage: Option<Value>,
}
impl EventData for SessionCompleted {
    const KIND: &'static str = "session.completed";
}

/// `session.failed`: the session ended with a terminal failure.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionFailed {
    /// The error code.
    #[serde(default)]
    pub code: Option<String>,
    /// What failed.
    #[serde(default)]
    pub message: Option<String>,
    /// More about it.
    #[serde(default)]
    pub details: Option<Value>,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
}
impl EventData for SessionFailed {
    const KIND: &'static str = "session.failed";
}

/// `turn.started`: a turn began.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnStarted {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// Trace context.
    #[serde(default)]
    pub trace: Option<Value>,
}
impl EventData for TurnStarted {
    const KIND: &'static str = "turn.started";
}

/// `turn.waiting`: an open turn parked.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnWaiting {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// `input` or `tasks`.
    #[serde(default)]
    pub on: Option<String>,
}
impl EventData for TurnWaiting {
    const KIND: &'static str = "turn.waiting";
}

/// `turn.completed`: a turn finished (`held`: it continues later under the same id).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnCompleted {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// True when the turn continues later.
    #[serde(default)]
    pub held: Option<bool>,
}
impl EventData for TurnCompleted {
    const KIND: &'static str = "turn.completed";
}

/// `turn.failed`: a turn failed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnFailed {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The error code.
    #[serde(default)]
    pub code: Option<String>,
    /// What failed.
    #[serde(default)]
    pub message: Option<String>,
    /// More about it.
    #[serde(default)]
    pub details: Option<Value>,
}
impl EventData for TurnFailed {
    const KIND: &'static str = "turn.failed";
}

/// `turn.cancelled`: a turn was cancelled (not a failure; `session.waiting` follows).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnCancelled {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
}
impl EventData for TurnCancelled {
    const KIND: &'static str = "turn.cancelled";
}

/// `message.received`: input reached a turn.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageReceived {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The flattened text.
    #[serde(default)]
    pub message: Option<String>,
    /// Text and file parts.
    #[serde(default)]
    pub parts: Option<Value>,
    /// `task.result` for a task's result.
    #[serde(default)]
    pub kind: Option<String>,
    /// The tasks whose results these are.
    #[serde(default)]
    pub task_ids: Option<Value>,
}
impl EventData for MessageReceived {
    const KIND: &'static str = "message.received";
}

/// `step.started`: a model call began.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepStarted {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// The model.
    #[serde(default)]
    pub model_id: Option<String>,
}
impl EventData for StepStarted {
    const KIND: &'static str = "step.started";
}

/// `reasoning.appended`: a delta of reasoning text.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningAppended {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// The new text.
    #[serde(default)]
    pub reasoning_delta: Option<String>,
}
impl EventData for ReasoningAppended {
    const KIND: &'static str = "reasoning.appended";
}

/// `reasoning.completed`: a reasoning block is final.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningCompleted {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// The whole block.
    #[serde(default)]
    pub reasoning: Option<String>,
}
impl EventData for ReasoningCompleted {
    const KIND: &'static str = "reasoning.completed";
}

/// `message.appended`: a delta of the assistant's text.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageAppended {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// The new text.
    #[serde(default)]
    pub message_delta: Option<String>,
}
impl EventData for MessageAppended {
    const KIND: &'static str = "message.appended";
}

/// `message.completed`: a text block is final (may fire more than once a turn).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageCompleted {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// The text (`null`: an empty delivery).
    #[serde(default)]
    pub message: Option<String>,
    /// Why the model stopped.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// True for a block before the turn's last.
    #[serde(default)]
    pub interim: Option<bool>,
}
impl EventData for MessageCompleted {
    const KIND: &'static str = "message.completed";
}

/// `result.completed`: the structured result of an output-schema turn.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultCompleted {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// The result.
    #[serde(default)]
    pub result: Option<Value>,
}
impl EventData for ResultCompleted {
    const KIND: &'static str = "result.completed";
}

/// `action.input.appended`: a delta of a tool call's raw input text.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionInputAppended {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// The call.
    #[serde(default)]
    pub call_id: Option<String>,
    /// The tool.
    #[serde(default)]
    pub tool_name: Option<String>,
    /// The new text.
    #[serde(default)]
    pub input_text_delta: Option<String>,
}
impl EventData for ActionInputAppended {
    const KIND: &'static str = "action.input.appended";
}

/// `actions.requested`: the model requested tool calls (hookrt adds `call_id` and `tool` to each action for its decision).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionsRequested {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// `[{kind, callId, toolName, input, ...}]`.
    #[serde(default)]
    pub actions: Option<Value>,
    /// Labels per call.
    #[serde(default)]
    pub presentation: Option<Value>,
}
impl EventData for ActionsRequested {
    const KIND: &'static str = "actions.requested";
}

/// `action.partial`: a streaming tool's preliminary result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionPartial {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// `{callId, toolName, output, ...}`.
    #[serde(default)]
    pub result: Option<Value>,
}
impl EventData for ActionPartial {
    const KIND: &'static str = "action.partial";
}

/// `action.result`: a tool call returned.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionResult {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// `{callId, toolName, output, isError?}`.
    #[serde(default)]
    pub result: Option<Value>,
    /// `completed`, `failed` or `rejected`.
    #[serde(default)]
    pub status: Option<String>,
    /// `{code, message}` when it failed.
    #[serde(default)]
    pub error: Option<Value>,
}
impl EventData for ActionResult {
    const KIND: &'static str = "action.result";
}

/// `input.requested`: the run paused for human input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequested {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// `[{requestId, kind, prompt, action, options?, ...}]`.
    #[serde(default)]
    pub requests: Option<Value>,
    /// The child task that asks, when proxied.
    #[serde(default)]
    pub task_id: Option<String>,
}
impl EventData for InputRequested {
    const KIND: &'static str = "input.requested";
}

/// `input.resolved`: the server accepted answers to input requests.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputResolved {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// `[{requestId, kind, outcome, response?}]`.
    #[serde(default)]
    pub resolutions: Option<Value>,
}
impl EventData for InputResolved {
    const KIND: &'static str = "input.resolved";
}

/// `approval.candidate`: one responder's approval candidate changed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalCandidate {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// The candidate.
    #[serde(default)]
    pub candidate_id: Option<String>,
    /// The request.
    #[serde(default)]
    pub request_id: Option<String>,
    /// `pending`, `rejected`, `failed`, `timed-out` or `stale`.
    #[serde(default)]
    pub outcome: Option<String>,
    /// Who responds.
    #[serde(default)]
    pub responder_principal_id: Option<String>,
    /// Why, when given.
    #[serde(default)]
    pub reason: Option<String>,
}
impl EventData for ApprovalCandidate {
    const KIND: &'static str = "approval.candidate";
}

/// `approval.settled`: an approval request settled.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalSettled {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// The request.
    #[serde(default)]
    pub request_id: Option<String>,
    /// `approved` or `cancelled`.
    #[serde(default)]
    pub outcome: Option<String>,
    /// Who responded.
    #[serde(default)]
    pub responder_principal_id: Option<String>,
}
impl EventData for ApprovalSettled {
    const KIND: &'static str = "approval.settled";
}

/// `task.started`: a call started a task (an agent's carries its child session).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStarted {
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The task (an agent's id for agents).
    #[serde(default)]
    pub task_id: Option<String>,
    /// The delegating call.
    #[serde(default)]
    pub call_id: Option<String>,
    /// The agent or workflow.
    #[serde(default)]
    pub name: Option<String>,
    /// `agent` or `workflow`.
    #[serde(default)]
    pub kind: Option<String>,
    /// `foreground`/`background` (or `attached`/`detached`).
    #[serde(default)]
    pub mode: Option<String>,
    /// `{sessionId, streamPath}` of an agent's child session.
    #[serde(default)]
    pub child: Option<Value>,
}
impl EventData for TaskStarted {
    const KIND: &'static str = "task.started";
}

/// `task.detached`: a waited task moved to the background.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskDetached {
    /// The task.
    #[serde(default)]
    pub task_id: Option<String>,
    /// The call.
    #[serde(default)]
    pub call_id: Option<String>,
    /// `steer` or `timeout`.
    #[serde(default)]
    pub reason: Option<String>,
}
impl EventData for TaskDetached {
    const KIND: &'static str = "task.detached";
}

/// `task.settled`: a task reached its first outcome.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSettled {
    /// The turn, when within one.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The task.
    #[serde(default)]
    pub task_id: Option<String>,
    /// The call.
    #[serde(default)]
    pub call_id: Option<String>,
    /// `completed`, `failed` or `cancelled`.
    #[serde(default)]
    pub status: Option<String>,
    /// What it returned.
    #[serde(default)]
    pub output: Option<Value>,
    /// `{code, message}` when it failed.
    #[serde(default)]
    pub error: Option<Value>,
    /// Its token usage.
    #[serde(default)]
    pub usage: Option<Value>,
}
impl EventData for TaskSettled {
    const KIND: &'static str = "task.settled";
}

/// `task.ended`: a task ended after its last outcome.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskEnded {
    /// The task.
    #[serde(default)]
    pub task_id: Option<String>,
}
impl EventData for TaskEnded {
    const KIND: &'static str = "task.ended";
}

/// `agent.started`: a workflow opened a child agent session.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStarted {
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The task.
    #[serde(default)]
    pub task_id: Option<String>,
    /// The call.
    #[serde(default)]
    pub call_id: Option<String>,
    /// The agent.
    #[serde(default)]
    pub name: Option<String>,
    /// The child session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Where its stream is read.
    #[serde(default)]
    pub stream_path: Option<String>,
}
impl EventData for AgentStarted {
    const KIND: &'static str = "agent.started";
}

/// `compaction.requested`: history compaction began.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionRequested {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The model that compacts.
    #[serde(default)]
    pub model_id: Option<String>,
    /// Input tokens before compaction.
    #[serde(default)]
    pub usage_input_tokens: Option<u64>,
}
impl EventData for CompactionRequested {
    const KIND: &'static str = "compaction.requested";
}

/// `compaction.completed`: a compaction checkpoint was written.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionCompleted {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The model that compacted.
    #[serde(default)]
    pub model_id: Option<String>,
}
impl EventData for CompactionCompleted {
    const KIND: &'static str = "compaction.completed";
}

/// `context.cleared`: the model-message history was cleared.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextCleared {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
}
impl EventData for ContextCleared {
    const KIND: &'static str = "context.cleared";
}

/// `authorization.required`: a connection needs the user to sign in.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationRequired {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// The connection.
    #[serde(default)]
    pub name: Option<String>,
    /// What it is for.
    #[serde(default)]
    pub description: Option<String>,
    /// `{url?, userCode?, ...}`.
    #[serde(default)]
    pub authorization: Option<Value>,
}
impl EventData for AuthorizationRequired {
    const KIND: &'static str = "authorization.required";
}

/// `authorization.completed`: a sign-in resolved.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCompleted {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// The connection.
    #[serde(default)]
    pub name: Option<String>,
    /// `authorized`, `declined`, `failed` or `timed-out`.
    #[serde(default)]
    pub outcome: Option<String>,
    /// Why, when given.
    #[serde(default)]
    pub reason: Option<String>,
}
impl EventData for AuthorizationCompleted {
    const KIND: &'static str = "authorization.completed";
}

/// `step.completed`: a model call finished.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepCompleted {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// Why the model stopped.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Its token usage.
    #[serde(default)]
    pub usage: Option<Value>,
}
impl EventData for StepCompleted {
    const KIND: &'static str = "step.completed";
}

/// `step.failed`: a model call failed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepFailed {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The model call within the turn.
    #[serde(default)]
    pub step_index: Option<u64>,
    /// The error code.
    #[serde(default)]
    pub code: Option<String>,
    /// What failed.
    #[serde(default)]
    pub message: Option<String>,
    /// More about it.
    #[serde(default)]
    pub details: Option<Value>,
}
impl EventData for StepFailed {
    const KIND: &'static str = "step.failed";
}

/// `subagent.called`: a parent started a subagent session (stream versions before 25).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentCalled {
    /// The turn's ordinal in the session.
    #[serde(default)]
    pub sequence: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The call.
    #[serde(default)]
    pub call_id: Option<String>,
    /// The child session.
    #[serde(default)]
    pub child_session_id: Option<String>,
    /// The subagent.
    #[serde(default)]
    pub name: Option<String>,
    /// The tool that called it.
    #[serde(default)]
    pub tool_name: Option<String>,
}
impl EventData for SubagentCalled {
    const KIND: &'static str = "subagent.called";
}

/// `subagent.started`: an inline subagent began (stream versions before 25).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentStarted {
    /// The call.
    #[serde(default)]
    pub call_id: Option<String>,
    /// The subagent.
    #[serde(default)]
    pub subagent_name: Option<String>,
}
impl EventData for SubagentStarted {
    const KIND: &'static str = "subagent.started";
}

/// `subagent.event`: one event of a subagent, wrapped (stream versions before 25).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentEvent {
    /// The call.
    #[serde(default)]
    pub call_id: Option<String>,
    /// The subagent.
    #[serde(default)]
    pub subagent_name: Option<String>,
    /// `{type, data}` of the child's event.
    #[serde(default)]
    pub event: Option<Value>,
}
impl EventData for SubagentEvent {
    const KIND: &'static str = "subagent.event";
}

/// `subagent.completed`: a subagent finished (stream versions before 25).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentCompleted {
    /// The call.
    #[serde(default)]
    pub call_id: Option<String>,
    /// The subagent.
    #[serde(default)]
    pub subagent_name: Option<String>,
    /// What it answered.
    #[serde(default)]
    pub output: Option<String>,
}
impl EventData for SubagentCompleted {
    const KIND: &'static str = "subagent.completed";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eve_data_parses_camel_case_and_tolerates_missing_fields() {
        let d: MessageCompleted = serde_json::from_str(
            r#"{"message":"Sunny and 72°F.","finishReason":"stop","sequence":0,"stepIndex":0,"turnId":"turn_0"}"#,
        )
        .unwrap();
        assert_eq!(d.message.as_deref(), Some("Sunny and 72°F."));
        assert_eq!(d.finish_reason.as_deref(), Some("stop"));
        assert_eq!((d.sequence, d.step_index), (Some(0), Some(0)));
        let d: TaskStarted =
            serde_json::from_str(r#"{"taskId":"t1","child":{"sessionId":"s2"}}"#).unwrap();
        assert_eq!(d.child.unwrap()["sessionId"], "s2");
        let _: SessionCompleted = serde_json::from_str("{}").unwrap();
    }
}
