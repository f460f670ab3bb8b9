"""Typed data of the event kinds hookrt's own streams carry, one dataclass per kind.

The same classes and fields as the Rust SDK's `guest-sdk/src/events.rs` (a test
compares them): an `Option` field there is `X | None = None` here, a
`#[serde(default)]` one has its default. Unknown fields are ignored, so a newer
host can add fields without breaking a hook. The kinds only Eve's stream carries
(`session.waiting`, `reasoning.appended`, ..., `compaction.requested`) have no
class: their methods receive the data as a plain dict.

The agent input state of `step.completed` / `turn.completed` (`state`) is a plain
dict: an edit returns it whole, and fields this SDK does not know must survive.
"""

import dataclasses
from typing import Any, Literal

__all__ = [
    "DATA",
    "Usage",
    "RequestedAction",
    "PriorMessage",
    "SessionStarted",
    "SessionCompleted",
    "SessionFailed",
    "TurnStarted",
    "TurnStopping",
    "TurnCompleted",
    "TurnFailed",
    "StepStarted",
    "StepCompleted",
    "MessageReceived",
    "PromptSubmitted",
    "MessageCompleted",
    "ActionsRequested",
    "ActionResult",
    "InputRequested",
    "InputReceived",
    "FileEditRequested",
    "PermissionRequested",
    "TaskCreated",
    "ConfigChanged",
]


def handled_kind(subscription: str) -> str:
    """The event kind a subscription handles: its own, or the kind after
    `observe:` / `rewrite:` (`*` stays `*`), as the runtime's `handled_kind`."""
    return subscription.partition(":")[2] or subscription

def dataclass(cls):
    """A dataclass whose fields are keyword-only, so they keep the Rust struct's order
    (a required field may follow an optional one)."""
    return dataclasses.dataclass(cls, kw_only=True)


@dataclass
class Usage:
    """Token counts reported by the model."""

    input_tokens: int
    output_tokens: int


@dataclass
class SessionStarted:
    """session.started - a session (conversation) began."""

    agent_name: str
    model: str | None = None


@dataclass
class SessionCompleted:
    """session.completed - the session ended normally."""

    turns: int


@dataclass
class SessionFailed:
    """session.failed - the session ended with an error."""

    reason: str
    # Slug of the critical hook whose failure ended the session, if one did.
    hook: str | None = None
    # Id of the event whose delivery failed, if a hook failure caused this.
    event_id: str | None = None
    # How the failing delivery ended (trap, out_of_fuel, timeout, error, ...).
    outcome: str | None = None
    # The failure message (the hook's error text or the trap), never event data.
    message: str | None = None


@dataclass
class TurnStarted:
    """turn.started - the agent began a turn."""

    input_message_id: str | None = None


@dataclass
class TurnStopping:
    """turn.stopping (gate) - the agent is about to end its turn; answer STOP or Continue."""

    # Whether this stop follows a hook's continue; False resets the loop governor's count.
    continued: bool = False
    # The model's last message of the turn. May hold secrets - do not log it.
    last_message: str | None = None


@dataclass
class TurnCompleted:
    """turn.completed (edit) - a turn ended normally."""

    steps: int
    usage: Usage | None = None
    # The agent input state at the end of the turn (a dict); an edit returns it changed.
    state: dict[str, Any] | None = None


@dataclass
class TurnFailed:
    """turn.failed - a turn ended with an error (also raised when a critical hook fails)."""

    reason: str
    hook: str | None = None
    event_id: str | None = None
    outcome: str | None = None
    message: str | None = None


@dataclass
class StepStarted:
    """step.started - one model call (and its tool calls) began."""

    index: int


@dataclass
class StepCompleted:
    """step.completed (edit) - a step ended, after its tool results were committed."""

    index: int
    # Why the model stopped, e.g. tool_calls or stop.
    finish_reason: str
    # The agent input state (a dict); an edit returns it changed.
    state: dict[str, Any] | None = None


@dataclass
class MessageReceived:
    """message.received - a message arrived from the user (or a channel)."""

    message_id: str
    role: str
    # May hold secrets - do not log it.
    content: str


@dataclass
class PriorMessage:
    """One message of the conversation before a prompt."""

    # Who wrote it: user or assistant.
    role: str
    # Its text: text blocks, attachments' extracted text, tool results and calls.
    text: str


@dataclass
class PromptSubmitted:
    """prompt.submitted (gate) - a user prompt, before the model sees it; answer PASS or Block."""

    # May hold secrets - do not log it.
    prompt: str
    source: str | None = None
    # The conversation before it, oldest first, where the source sends it
    # (Anthropic's inference hooks do). May hold secrets - do not log it.
    history: list[PriorMessage] | None = None


@dataclass
class MessageCompleted:
    """message.completed - the model finished a message."""

    message_id: str
    role: str
    # May hold secrets - do not log it.
    content: str
    finish_reason: str | None = None
    usage: Usage | None = None


@dataclass
class RequestedAction:
    """One tool call the model asked for."""

    # Ties the call to its action.result.
    call_id: str
    tool: str
    # The tool's input as the model wrote it (as rewritten so far, for a rewrite method).
    input: Any = None


@dataclass
class ActionsRequested:
    """actions.requested (decision) - the model asked for tool calls; answer one approval each."""

    actions: list[RequestedAction]


@dataclass
class ActionResult:
    """action.result - one tool call finished."""

    call_id: str
    tool: str
    status: Literal["ok", "error"]
    # The tool's output when it succeeded. May hold secrets - do not log it.
    output: Any | None = None
    error: str | None = None
    duration_ms: int | None = None


@dataclass
class InputRequested:
    """input.requested - the agent asked a human for input."""

    request_id: str
    prompt: str


@dataclass
class InputReceived:
    """input.received - a human answered an input request."""

    request_id: str
    answer: str


@dataclass
class FileEditRequested:
    """file.edit.requested (decision) - the agent wants to write a file."""

    # Relative to the agent's workspace.
    path: str
    content: str
    # The content before the edit, when the file existed.
    before_content: str | None = None
    # Whether the file lives in storage shared across sessions.
    global_storage: bool


@dataclass
class PermissionRequested:
    """permission.requested (decision) - the agent is about to ask a human to allow a call."""

    tool: str
    # The call's input, as rewritten so far. May hold secrets - do not log it.
    input: Any = None
    call_id: str | None = None
    # The agent's own suggestions for the human, as it sends them.
    suggestions: Any | None = None


@dataclass
class TaskCreated:
    """task.created (gate) - a task of the agent's is about to be created."""

    task_id: str
    subject: str
    description: str | None = None


@dataclass
class ConfigChanged:
    """config.changed (gate) - the agent's settings changed and are about to apply."""

    # Which settings changed, as the agent names them (e.g. user_settings).
    source: str
    path: str | None = None


# The data class of every kind hookrt's own streams carry (origin `hookrt`).
DATA = {
    "session.started": SessionStarted,
    "session.completed": SessionCompleted,
    "session.failed": SessionFailed,
    "turn.started": TurnStarted,
    "turn.stopping": TurnStopping,
    "turn.completed": TurnCompleted,
    "turn.failed": TurnFailed,
    "step.started": StepStarted,
    "step.completed": StepCompleted,
    "message.received": MessageReceived,
    "prompt.submitted": PromptSubmitted,
    "message.completed": MessageCompleted,
    "actions.requested": ActionsRequested,
    "action.result": ActionResult,
    "input.requested": InputRequested,
    "input.received": InputReceived,
    "file.edit.requested": FileEditRequested,
    "permission.requested": PermissionRequested,
    "task.created": TaskCreated,
    "config.changed": ConfigChanged,
}
