"""What a handler answers, and how the SDK turns it into the world's `response`.

The answer a method returns follows its event's class (as in the Rust SDK's
`response.rs`):

- observe kinds, `any` and the `*_observed` methods: anything, ignored (return None);
- `actions_requested`: a list with one approval per requested call, in order:
  `ABSTAIN`, `ALLOW`, `Ask(question)`, `Deny(reason)`;
- `actions_requested_rewrite`: a list of `CallAnswer(approval, rewrite=None)`, where
  `rewrite` is the call's whole new input (a dict); a bare approval keeps the input;
- `file_edit_requested`: `NOT_HANDLED`, `APPLIED` or `Failed(message)`;
- `step_completed`, `turn_completed`: the whole edited agent input (a dict, the
  data's `state` changed) or None to keep it;
- the block gates (`prompt_submitted`, `compaction_requested`, `task_created`,
  `config_changed`): `PASS` or `Block(reason)`;
- `turn_stopping`: `STOP` or `Continue(what_next)`;
- `permission_requested`: `ABSTAIN`, `ALLOW` or `PermissionDeny(message,
  interrupt=False)` (`Deny(reason)` too); `permission_requested_rewrite` also
  `AllowRewritten(input)`.

None from any method means "nothing to say" (abstain, not handled, no edit, pass).
A wrong answer fails the delivery with a message naming what was expected.
"""

import dataclasses
import json

from .error import HookError
from .events import handled_kind


@dataclasses.dataclass(frozen=True)
class Abstain:
    """No opinion: other hooks decide (or, for a permission request, the human is asked)."""


@dataclasses.dataclass(frozen=True)
class Allow:
    """The call may run (a permission request: allowed without asking)."""


@dataclasses.dataclass(frozen=True)
class Ask:
    """A human must confirm the call; `question` is shown to them."""

    question: str


@dataclasses.dataclass(frozen=True)
class Deny:
    """The call must not run; `reason` says why."""

    reason: str


ABSTAIN = Abstain()
ALLOW = Allow()

# One requested call's approval.
Approval = Abstain | Allow | Ask | Deny


@dataclasses.dataclass(frozen=True)
class CallAnswer:
    """An approval for one requested call, with the call's whole new input (a dict)
    or None to keep it. Only from `actions_requested_rewrite`; rewrites chain in
    registration order and a deny by any hook drops them all."""

    approval: Approval
    rewrite: dict | None = None


@dataclasses.dataclass(frozen=True)
class NotHandled:
    """This hook does not own the file edit; the next hook (or the agent) writes."""


@dataclasses.dataclass(frozen=True)
class Applied:
    """This hook applied and saved the edit; the agent must not write again."""


@dataclasses.dataclass(frozen=True)
class Failed:
    """This hook owns the edit and it failed: the agent aborts its write and reports `message`."""

    message: str


NOT_HANDLED = NotHandled()
APPLIED = Applied()


@dataclasses.dataclass(frozen=True)
class Pass:
    """No opinion on a gate: the agent goes on as it would."""


@dataclasses.dataclass(frozen=True)
class Block:
    """Stop what a block gate announces (prompt, compaction, task, config change); `reason` is shown to the user."""

    reason: str


@dataclasses.dataclass(frozen=True)
class Stop:
    """turn.stopping: the turn stops, as the agent wants."""


@dataclasses.dataclass(frozen=True)
class Continue:
    """turn.stopping: the turn goes on; `what_next` is what the model is told (at most
    `max_continues` in a row, the loop governor)."""

    what_next: str


PASS = Pass()
STOP = Stop()


@dataclasses.dataclass(frozen=True)
class AllowRewritten:
    """A permission request allowed without asking, with the call's whole input replaced
    by `input` (a dict). Only from `permission_requested_rewrite`."""

    input: dict


@dataclasses.dataclass(frozen=True)
class PermissionDeny:
    """A permission request refused without asking; `interrupt` also stops the turn."""

    message: str
    interrupt: bool = False


BLOCK_GATES = ("prompt.submitted", "compaction.requested", "task.created", "config.changed")
EDIT_KINDS = ("step.completed", "turn.completed")

_APPROVALS = "ALLOW, ABSTAIN, Ask(question) or Deny(reason)"


def to_wit(wit, key: str, method: str, out):
    """The WIT `response` for what the method `method` (subscribed as `key`) returned.

    `wit` is the generated `wit_world.imports.types` module.
    """
    if out is None or key == "*" or key.startswith("observe:"):
        return wit.Response_None_()
    rewriting = key.startswith("rewrite:")
    kind = handled_kind(key)
    if kind == "actions.requested":
        if not isinstance(out, (list, tuple)):
            what = "CallAnswer(approval, rewrite=None)" if rewriting else f"approval ({_APPROVALS})"
            raise HookError(f"{method} returned {_show(out)}: return a list with one {what} per requested call")
        if rewriting:
            return wit.Response_Calls([_call(wit, a, i) for i, a in enumerate(out)])
        return wit.Response_Approvals([_approval(wit, a, i) for i, a in enumerate(out)])
    if kind == "permission.requested":
        return wit.Response_Permission(_permission(wit, out, method, rewriting))
    if kind == "file.edit.requested":
        return wit.Response_FileEdit(_file_edit(wit, out, method))
    if kind in EDIT_KINDS:
        if not isinstance(out, dict):
            raise HookError(
                f"{method} returned {_show(out)}: return the whole edited agent input "
                "(a dict: the data's `state`, changed) or None to keep it"
            )
        return wit.Response_Edit(_json(out, f"the agent input {method} returned"))
    if kind == "turn.stopping":
        if isinstance(out, Stop):
            return wit.Response_Gate(wit.Gate_Pass())
        if isinstance(out, Continue) and isinstance(out.what_next, str):
            return wit.Response_Gate(wit.Gate_ContinueTurn(out.what_next))
        raise HookError(f"{method} returned {_show(out)}: return STOP or Continue(what_next)")
    if kind in BLOCK_GATES:
        if isinstance(out, Pass):
            return wit.Response_Gate(wit.Gate_Pass())
        if isinstance(out, Block) and isinstance(out.reason, str):
            return wit.Response_Gate(wit.Gate_Block(out.reason))
        raise HookError(f"{method} returned {_show(out)}: return PASS or Block(reason)")
    return wit.Response_None_()  # observe kinds ignore what a method returns


def _approval(wit, a, index):
    if isinstance(a, Abstain):
        return wit.Approval_Abstain()
    if isinstance(a, Allow):
        return wit.Approval_Allow()
    if isinstance(a, Ask) and isinstance(a.question, str):
        return wit.Approval_Ask(a.question)
    if isinstance(a, Deny) and isinstance(a.reason, str):
        return wit.Approval_Deny(a.reason)
    hint = " (a CallAnswer rewrites: return it from actions_requested_rewrite)" if isinstance(a, CallAnswer) else ""
    raise HookError(f"approval #{index} is {_show(a)}: return {_APPROVALS}{hint}")


def _call(wit, a, index):
    if isinstance(a, (Abstain, Allow, Ask, Deny)):
        a = CallAnswer(a)
    if not isinstance(a, CallAnswer):
        raise HookError(
            f"call answer #{index} is {_show(a)}: actions_requested_rewrite returns one "
            "CallAnswer(approval, rewrite=None) per requested call, e.g. CallAnswer(ALLOW, {\"command\": \"ls\"})"
        )
    rewrite = None if a.rewrite is None else _rewrite(a.rewrite, f"the rewrite of call #{index}")
    return wit.CallAnswer(_approval(wit, a.approval, index), rewrite)


def _rewrite(value, what):
    if not isinstance(value, dict):
        raise HookError(
            f"{what} is {_show(value)}, not a dict: a rewrite is the call's whole new input "
            "(a dict like the one in the event's data); leave it None to keep the input"
        )
    return _json(value, what)


def _file_edit(wit, out, method):
    if isinstance(out, NotHandled):
        return wit.FileEdit_NotHandled()
    if isinstance(out, Applied):
        return wit.FileEdit_Applied()
    if isinstance(out, Failed) and isinstance(out.message, str):
        return wit.FileEdit_Failed(out.message)
    raise HookError(f"{method} returned {_show(out)}: return NOT_HANDLED, APPLIED or Failed(message)")


def _permission(wit, out, method, rewriting):
    if isinstance(out, Abstain):
        return wit.Permission_Abstain()
    if isinstance(out, Allow):
        return wit.Permission_Allow(None)
    if isinstance(out, Deny) and isinstance(out.reason, str):
        return wit.Permission_Deny(wit.Denial(out.reason, False))
    if isinstance(out, PermissionDeny) and isinstance(out.message, str) and isinstance(out.interrupt, bool):
        return wit.Permission_Deny(wit.Denial(out.message, out.interrupt))
    if isinstance(out, AllowRewritten) and rewriting:
        return wit.Permission_Allow(_rewrite(out.input, "the rewritten permission request's input"))
    if rewriting:
        expected = "ABSTAIN, ALLOW, AllowRewritten(input) or PermissionDeny(message, interrupt=False)"
    else:
        expected = (
            "ABSTAIN, ALLOW or PermissionDeny(message, interrupt=False) "
            "(rewriting the input takes permission_requested_rewrite)"
        )
    raise HookError(f"{method} returned {_show(out)}: return {expected}")


def _json(value, what):
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as err:
        raise HookError(f"{what} is not JSON: {err}") from None


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
