"""The `Hook` base class: one method per event kind, and `METHODS`, the table of
methods and the subscriptions they stand for (the Rust SDK's `hook.rs`, same names,
same order).

A hook subclasses `Hook` and overrides the methods of the events it handles; the
methods it overrides are its subscriptions, in the order of `METHODS`. Every method
takes `(self, data, event, ctx)` (`any` takes `(self, event, ctx)`): `data` is the
kind's dataclass (`hookrt.events`, a dict for Eve's stream kinds), `event` the
`Event` (its `data` a dict), `ctx` the `Context`. What a method returns follows its
event's class (`hookrt.response`).

- `<kind>` methods (`actions_requested`, `prompt_submitted`, ...) answer.
- `*_observed` methods (`observe:<kind>`) watch a decision, edit or gate event without
  a vote: what they return or raise counts for nothing in the resolution.
- `*_rewrite` methods (`rewrite:<kind>`) vote and may rewrite the call's input.
- `any` (`*`) sees every event of the hook's scope, after the specific handlers.

A subclass may set `Config` to a dataclass: the hook's `config` table from
`hookrt.toml` is parsed into it (an unknown key or a wrong type refuses the hook at
load) before `configure(config)` runs; without it `configure` gets the dict.
"""

import difflib

from .event import Context, Event
from .events import (
    ActionResult,
    ActionsRequested,
    ConfigChanged,
    FileEditRequested,
    InputReceived,
    InputRequested,
    MessageCompleted,
    MessageReceived,
    PermissionRequested,
    PromptSubmitted,
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
)
from .response import (
    ABSTAIN,
    NOT_HANDLED,
    PASS,
    STOP,
    Abstain,
    Allow,
    AllowRewritten,
    Applied,
    Approval,
    Block,
    CallAnswer,
    Continue,
    Failed,
    NotHandled,
    Pass,
    PermissionDeny,
    Stop,
)

FileEdit = NotHandled | Applied | Failed

METHODS = [
    ("any", "*"),
    ("session_started", "session.started"),
    ("session_completed", "session.completed"),
    ("session_failed", "session.failed"),
    ("turn_started", "turn.started"),
    ("turn_failed", "turn.failed"),
    ("step_started", "step.started"),
    ("message_received", "message.received"),
    ("message_completed", "message.completed"),
    ("action_result", "action.result"),
    ("input_requested", "input.requested"),
    ("input_received", "input.received"),
    ("actions_requested", "actions.requested"),
    ("file_edit_requested", "file.edit.requested"),
    ("prompt_submitted", "prompt.submitted"),
    ("turn_stopping", "turn.stopping"),
    ("permission_requested", "permission.requested"),
    ("task_created", "task.created"),
    ("config_changed", "config.changed"),
    ("step_completed", "step.completed"),
    ("turn_completed", "turn.completed"),
    ("session_waiting", "session.waiting"),
    ("turn_waiting", "turn.waiting"),
    ("turn_cancelled", "turn.cancelled"),
    ("step_failed", "step.failed"),
    ("reasoning_appended", "reasoning.appended"),
    ("reasoning_completed", "reasoning.completed"),
    ("message_appended", "message.appended"),
    ("result_completed", "result.completed"),
    ("action_input_appended", "action.input.appended"),
    ("action_partial", "action.partial"),
    ("input_resolved", "input.resolved"),
    ("approval_candidate", "approval.candidate"),
    ("approval_settled", "approval.settled"),
    ("task_started", "task.started"),
    ("task_detached", "task.detached"),
    ("task_settled", "task.settled"),
    ("task_ended", "task.ended"),
    ("agent_started", "agent.started"),
    ("compaction_requested", "compaction.requested"),
    ("compaction_completed", "compaction.completed"),
    ("context_cleared", "context.cleared"),
    ("authorization_required", "authorization.required"),
    ("authorization_completed", "authorization.completed"),
    ("subagent_called", "subagent.called"),
    ("subagent_started", "subagent.started"),
    ("subagent_event", "subagent.event"),
    ("subagent_completed", "subagent.completed"),
    ("actions_requested_observed", "observe:actions.requested"),
    ("file_edit_requested_observed", "observe:file.edit.requested"),
    ("step_completed_observed", "observe:step.completed"),
    ("turn_completed_observed", "observe:turn.completed"),
    ("prompt_submitted_observed", "observe:prompt.submitted"),
    ("turn_stopping_observed", "observe:turn.stopping"),
    ("permission_requested_observed", "observe:permission.requested"),
    ("task_created_observed", "observe:task.created"),
    ("config_changed_observed", "observe:config.changed"),
    ("compaction_requested_observed", "observe:compaction.requested"),
    ("actions_requested_rewrite", "rewrite:actions.requested"),
    ("permission_requested_rewrite", "rewrite:permission.requested"),
]


class Hook:
    """A hook: override the methods of the events it handles.

    Every method has a default that does nothing (abstains, does not handle, does
    not edit, passes, lets the turn stop, keeps the input), but only the methods a
    subclass overrides are subscribed: the runtime never calls the others.

        from hookrt import Hook, Deny, ABSTAIN

        class Guard(Hook):
            def actions_requested(self, data, event, ctx):
                return [Deny("never rm -rf") if "rm -rf" in str(a.input) else ABSTAIN
                        for a in data.actions]
    """

    # The dataclass the `config` table is parsed into before `configure`; None: a dict.
    Config = None

    def configure(self, config) -> None:
        """Called once per fresh instance, before its first delivery, with the parsed
        config. Raising refuses the hook at load with the message."""

    def any(self, event: Event, ctx: Context) -> None:
        """`*`: every event of the hook's scope, after the specific handlers of every
        hook. An observer: its answer and its failure never decide."""

    def session_started(self, data: SessionStarted, event: Event, ctx: Context) -> None:
        """`session.started` (observe)."""

    def session_completed(self, data: SessionCompleted, event: Event, ctx: Context) -> None:
        """`session.completed` (observe)."""

    def session_failed(self, data: SessionFailed, event: Event, ctx: Context) -> None:
        """`session.failed` (observe)."""

    def turn_started(self, data: TurnStarted, event: Event, ctx: Context) -> None:
        """`turn.started` (observe)."""

    def turn_failed(self, data: TurnFailed, event: Event, ctx: Context) -> None:
        """`turn.failed` (observe)."""

    def step_started(self, data: StepStarted, event: Event, ctx: Context) -> None:
        """`step.started` (observe)."""

    def message_received(self, data: MessageReceived, event: Event, ctx: Context) -> None:
        """`message.received` (observe)."""

    def message_completed(self, data: MessageCompleted, event: Event, ctx: Context) -> None:
        """`message.completed` (observe)."""

    def action_result(self, data: ActionResult, event: Event, ctx: Context) -> None:
        """`action.result` (observe)."""

    def input_requested(self, data: InputRequested, event: Event, ctx: Context) -> None:
        """`input.requested` (observe)."""

    def input_received(self, data: InputReceived, event: Event, ctx: Context) -> None:
        """`input.received` (observe)."""

    def actions_requested(
        self, data: ActionsRequested, event: Event, ctx: Context
    ) -> "list[Approval]":
        """`actions.requested` (decision): one approval per requested call, in order (ALLOW,
        ABSTAIN, Ask(question), Deny(reason)). A failure counts by the hook's `on_failure`
        (default `deny`: fails closed).
        """
        return [ABSTAIN] * len(data.actions)

    def file_edit_requested(
        self, data: FileEditRequested, event: Event, ctx: Context
    ) -> "FileEdit":
        """`file.edit.requested` (decision): own the write (APPLIED, Failed(message)) or not
        (NOT_HANDLED). A failure counts by the hook's `on_failure` (default `deny`: the
        write is aborted).
        """
        return NOT_HANDLED

    def prompt_submitted(self, data: PromptSubmitted, event: Event, ctx: Context) -> "Pass | Block":
        """`prompt.submitted` (gate): a user prompt is submitted, before the model sees it;
        `Block(reason)` keeps it from the model (the reason is shown to the user). A failure
        counts by the hook's `on_failure` (default `deny`: the prompt is blocked).
        """
        return PASS

    def turn_stopping(self, data: TurnStopping, event: Event, ctx: Context) -> "Stop | Continue":
        """`turn.stopping` (gate): the agent is about to end its turn; `Continue(what_next)`
        keeps it going, telling the model what to do next, at most `max_continues` times in
        a row (the loop governor). A failure never keeps a turn going.
        """
        return STOP

    def permission_requested(
        self, data: PermissionRequested, event: Event, ctx: Context
    ) -> "Abstain | Allow | PermissionDeny":
        """`permission.requested` (decision): the agent is about to ask a human to allow a
        call; ALLOW or PermissionDeny(message) without asking, or ABSTAIN (the human is
        asked). Rewriting the input takes `permission_requested_rewrite`. A failure counts
        by the hook's `on_failure` (default `deny`).
        """
        return ABSTAIN

    def task_created(self, data: TaskCreated, event: Event, ctx: Context) -> "Pass | Block":
        """`task.created` (gate): a task of the agent's is about to be created; `Block(reason)`
        stops it. A failure counts by the hook's `on_failure`.
        """
        return PASS

    def config_changed(self, data: ConfigChanged, event: Event, ctx: Context) -> "Pass | Block":
        """`config.changed` (gate): the agent's settings changed and are about to apply;
        `Block(reason)` keeps them from applying. A failure counts by the hook's
        `on_failure`.
        """
        return PASS

    def step_completed(self, data: StepCompleted, event: Event, ctx: Context) -> "dict | None":
        """`step.completed` (edit): return the whole edited agent input (`data.state`, a dict,
        changed) to replace it, None to keep it.
        """
        return None

    def turn_completed(self, data: TurnCompleted, event: Event, ctx: Context) -> "dict | None":
        """`turn.completed` (edit): return the whole edited agent input (`data.state`, a dict,
        changed) to replace it, None to keep it.
        """
        return None

    def session_waiting(self, data: dict, event: Event, ctx: Context) -> None:
        """`session.waiting` (observe, Eve's stream only): the session parks until the next
        user message.
        """

    def turn_waiting(self, data: dict, event: Event, ctx: Context) -> None:
        """`turn.waiting` (observe, Eve's stream only): an open turn parks for input or tasks.

        """

    def turn_cancelled(self, data: dict, event: Event, ctx: Context) -> None:
        """`turn.cancelled` (observe, Eve's stream only): a turn is cancelled; not a failure.

        """

    def step_failed(self, data: dict, event: Event, ctx: Context) -> None:
        """`step.failed` (observe, Eve's stream only): a model step fails."""

    def reasoning_appended(self, data: dict, event: Event, ctx: Context) -> None:
        """`reasoning.appended` (observe, Eve's stream only): a delta of the model's reasoning.

        """

    def reasoning_completed(self, data: dict, event: Event, ctx: Context) -> None:
        """`reasoning.completed` (observe, Eve's stream only): a reasoning block is final.

        """

    def message_appended(self, data: dict, event: Event, ctx: Context) -> None:
        """`message.appended` (observe, Eve's stream only): a delta of the assistant's text.

        """

    def result_completed(self, data: dict, event: Event, ctx: Context) -> None:
        """`result.completed` (observe, Eve's stream only): a structured result of an output-
        schema turn.
        """

    def action_input_appended(self, data: dict, event: Event, ctx: Context) -> None:
        """`action.input.appended` (observe, Eve's stream only): a delta of a tool call's raw
        input text, before it is requested.
        """

    def action_partial(self, data: dict, event: Event, ctx: Context) -> None:
        """`action.partial` (observe, Eve's stream only): a preliminary result of a streaming
        tool.
        """

    def input_resolved(self, data: dict, event: Event, ctx: Context) -> None:
        """`input.resolved` (observe, Eve's stream only): the server accepted answers to input
        requests (Eve; hookrt's own streams say input.received).
        """

    def approval_candidate(self, data: dict, event: Event, ctx: Context) -> None:
        """`approval.candidate` (observe, Eve's stream only): one responder's approval
        candidate changed.
        """

    def approval_settled(self, data: dict, event: Event, ctx: Context) -> None:
        """`approval.settled` (observe, Eve's stream only): an approval request settled."""

    def task_started(self, data: dict, event: Event, ctx: Context) -> None:
        """`task.started` (observe, Eve's stream only): an agent or workflow call started a
        task, maybe a child session.
        """

    def task_detached(self, data: dict, event: Event, ctx: Context) -> None:
        """`task.detached` (observe, Eve's stream only): a waited task moved to the background.

        """

    def task_settled(self, data: dict, event: Event, ctx: Context) -> None:
        """`task.settled` (observe, Eve's stream only): a task reached its first outcome."""

    def task_ended(self, data: dict, event: Event, ctx: Context) -> None:
        """`task.ended` (observe, Eve's stream only): a task ended after its last outcome.

        """

    def agent_started(self, data: dict, event: Event, ctx: Context) -> None:
        """`agent.started` (observe, Eve's stream only): a workflow opened a child agent
        session.
        """

    def compaction_requested(self, data: dict, event: Event, ctx: Context) -> "Pass | Block":
        """`compaction.requested` (gate, Eve's data): history compaction is about to start;
        `Block(reason)` stops it. A failure counts by the hook's `on_failure` (default
        `deny`: the compaction does not happen).
        """
        return PASS

    def compaction_completed(self, data: dict, event: Event, ctx: Context) -> None:
        """`compaction.completed` (observe, Eve's stream only): a compaction checkpoint was
        written.
        """

    def context_cleared(self, data: dict, event: Event, ctx: Context) -> None:
        """`context.cleared` (observe, Eve's stream only): the model-message history was
        cleared.
        """

    def authorization_required(self, data: dict, event: Event, ctx: Context) -> None:
        """`authorization.required` (observe, Eve's stream only): a connection needs the user
        to sign in.
        """

    def authorization_completed(self, data: dict, event: Event, ctx: Context) -> None:
        """`authorization.completed` (observe, Eve's stream only): a sign-in resolved."""

    def subagent_called(self, data: dict, event: Event, ctx: Context) -> None:
        """`subagent.called` (observe, Eve's stream only): a parent started a subagent session
        (Eve's streams before version 25).
        """

    def subagent_started(self, data: dict, event: Event, ctx: Context) -> None:
        """`subagent.started` (observe, Eve's stream only): an inline subagent began (Eve's
        streams before version 25).
        """

    def subagent_event(self, data: dict, event: Event, ctx: Context) -> None:
        """`subagent.event` (observe, Eve's stream only): one event of a subagent, wrapped by
        its parent (Eve's streams before version 25).
        """

    def subagent_completed(self, data: dict, event: Event, ctx: Context) -> None:
        """`subagent.completed` (observe, Eve's stream only): a subagent finished (Eve's
        streams before version 25).
        """

    def actions_requested_observed(
        self, data: ActionsRequested, event: Event, ctx: Context
    ) -> None:
        """`actions.requested` watched without a vote (`observe:actions.requested`): the hook's
        answer and failure count for nothing in the tool approval.
        """

    def file_edit_requested_observed(
        self, data: FileEditRequested, event: Event, ctx: Context
    ) -> None:
        """`file.edit.requested` watched without owning or refusing the write."""

    def step_completed_observed(self, data: StepCompleted, event: Event, ctx: Context) -> None:
        """`step.completed` watched without editing (a failure rolls nothing back)."""

    def turn_completed_observed(self, data: TurnCompleted, event: Event, ctx: Context) -> None:
        """`turn.completed` watched without editing (a failure rolls nothing back)."""

    def prompt_submitted_observed(self, data: PromptSubmitted, event: Event, ctx: Context) -> None:
        """`prompt.submitted` watched without a say (a failure blocks nothing)."""

    def turn_stopping_observed(self, data: TurnStopping, event: Event, ctx: Context) -> None:
        """`turn.stopping` watched without a say (it never keeps a turn going)."""

    def permission_requested_observed(
        self, data: PermissionRequested, event: Event, ctx: Context
    ) -> None:
        """`permission.requested` watched without allowing or denying."""

    def task_created_observed(self, data: TaskCreated, event: Event, ctx: Context) -> None:
        """`task.created` watched without a say (a failure blocks nothing)."""

    def config_changed_observed(self, data: ConfigChanged, event: Event, ctx: Context) -> None:
        """`config.changed` watched without a say (a failure blocks nothing)."""

    def compaction_requested_observed(self, data: dict, event: Event, ctx: Context) -> None:
        """`compaction.requested` watched without a say (a failure blocks nothing)."""

    def actions_requested_rewrite(
        self, data: ActionsRequested, event: Event, ctx: Context
    ) -> "list[CallAnswer]":
        """`actions.requested` with rewrites (`rewrite:actions.requested`): one
        CallAnswer(approval, rewrite=None) per requested call, in order, `rewrite` being the
        call's whole new input (a dict). Rewrites chain in registration order; a deny by any
        hook drops them all. The default keeps every call as it is and abstains. A failure
        counts by the hook's `on_failure` (default `deny`).
        """
        return [CallAnswer(ABSTAIN)] * len(data.actions)

    def permission_requested_rewrite(
        self, data: PermissionRequested, event: Event, ctx: Context
    ) -> "Abstain | Allow | AllowRewritten | PermissionDeny":
        """`permission.requested` with a rewrite (`rewrite:permission.requested`):
        AllowRewritten(input) allows the call with its whole input replaced; the rewrite
        applies only when the merged answer is an allow.
        """
        return ABSTAIN


_DEFAULTS = {name: getattr(Hook, name) for name, _ in METHODS}


def subscriptions(hook_class: type) -> list:
    """The subscriptions of the methods `hook_class` overrides, in the order of `METHODS`."""
    return [key for name, key in METHODS if getattr(hook_class, name) is not _DEFAULTS[name]]


def misspelled(hook_class: type) -> list:
    """`(method, handler it looks like)` for each public method of `hook_class` that is
    not a handler but is named almost like one (`session_start`)."""
    names = [name for name, _ in METHODS]
    found = []
    for klass in hook_class.__mro__:
        if klass is Hook or klass is object:
            continue
        for attr, value in vars(klass).items():
            if attr.startswith("_") or attr in _DEFAULTS or attr == "configure" or not callable(value):
                continue
            close = difflib.get_close_matches(attr, names, n=1, cutoff=0.88)
            if close:
                found.append((attr, close[0]))
    return found
