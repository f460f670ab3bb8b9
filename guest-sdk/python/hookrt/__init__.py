"""hookrt's Python SDK: the `Hook` base class, typed events and answers, `log`,
`metrics`, `state`, `add_context`, `idempotency_key`, and world 0.4.0's grants `exec`,
`read`, `transcript`, `secret`, `notify` and `write`.

A hook file (`hooks/NAME.py`, or a package `hooks/NAME/__init__.py`) subclasses
`Hook` and overrides the methods of the events it handles:

    from hookrt import Hook, Deny, ABSTAIN, log

    class Guard(Hook):
        def actions_requested(self, data, event, ctx):
            answers = []
            for call in data.actions:
                if call.tool == "run_shell" and "rm -rf" in (call.input or {}).get("command", ""):
                    log.warn("denied", event_id=event.id, call_id=call.call_id)
                    answers.append(Deny("recursive forced deletes are not allowed"))
                else:
                    answers.append(ABSTAIN)
            return answers

hookrt builds it with componentize-py (`guest-sdk/python/build.py`) into a component
for the `define-hook` world of `wit/v0.4.0/hook.wit`; this package produces the
world's exports (`world.make_world`). Modules, one concept each:

- `hook`: `Hook`, `METHODS` (method -> subscription, as the Rust SDK's);
- `events`: the data classes, `DATA` (kind -> class); `event`: `Event`, `Context`;
- `response`: the answers (`ALLOW`, `Deny(...)`, `Block(...)`, ...);
- `log`, `metrics`, `state`: the host imports; `context`: `add_context`;
- `exec`, `read`, `transcript`, `secret`, `notify`, `write`: world 0.4.0's grants, each
  imported by name (`from hookrt import exec`; a star import brings none of them), and
  `grant`: `GrantError` and its subclass per grant;
- `idempotency`: `idempotency_key`; `typed`: JSON into dataclasses (config, data);
- `world`: the world's exports.
"""

from . import exec, log, metrics, notify, read, secret, state, transcript, write
from .context import add_context
from .error import HookError
from .grant import ExecError, GrantError, NotifyError, ReadError, SecretError, TranscriptError, WriteError
from .event import Context, Coordinates, Event, Scope, Transport
from .events import (
    DATA,
    ActionResult,
    ActionsRequested,
    ConfigChanged,
    FileEditRequested,
    InputReceived,
    InputRequested,
    MessageCompleted,
    MessageReceived,
    PermissionRequested,
    PriorMessage,
    PromptSubmitted,
    RequestedAction,
    SessionCompleted,
    SessionFailed,
    SessionStarted,
    StepCompleted,
    StepStarted,
    TaskCreated,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    TurnStopping,
    Usage,
)
from .hook import METHODS, Hook
from .idempotency import idempotency_key
from .response import (
    ABSTAIN,
    ALLOW,
    APPLIED,
    NOT_HANDLED,
    PASS,
    STOP,
    AllowRewritten,
    Approval,
    Ask,
    Block,
    CallAnswer,
    Continue,
    Deny,
    Failed,
    PermissionDeny,
)
from .world import make_world

__version__ = "0.4.0"

__all__ = [
    "Hook", "METHODS", "Event", "Context", "Coordinates", "Scope", "Transport", "HookError",
    "GrantError", "ExecError", "ReadError", "TranscriptError", "SecretError", "NotifyError", "WriteError",
    "ABSTAIN", "ALLOW", "Ask", "Deny", "Approval", "CallAnswer", "NOT_HANDLED", "APPLIED", "Failed",
    "PASS", "Block", "STOP", "Continue", "AllowRewritten", "PermissionDeny",
    "log", "metrics", "state", "add_context", "idempotency_key", "make_world",
    "DATA", "Usage", "RequestedAction", "PriorMessage", "SessionStarted", "SessionCompleted",
    "SessionFailed", "TurnStarted", "TurnStopping", "TurnCompleted", "TurnFailed",
    "StepStarted", "StepCompleted", "MessageReceived", "PromptSubmitted",
    "MessageCompleted", "ActionsRequested", "ActionResult", "InputRequested",
    "InputReceived", "FileEditRequested", "PermissionRequested", "TaskCreated",
    "ConfigChanged",
]
