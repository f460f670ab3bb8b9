"""What world 0.4.0's grant modules (`exec`, `read`, `transcript`, `secret`, `notify`,
`write`) share: `GrantError` and one subclass per grant, raised when the host refuses a
call or it fails, and `call`, which turns the host's `Err` into one."""

import re

from .error import HookError
from .imports import missing

try:
    from componentize_py_types import Err as _Err
except ImportError:  # not inside a built hook
    _Err = None


class GrantError(HookError):
    """A grant's call refused or failed: `grant` (`"exec"`), `kind` (the WIT error's
    case, `"not-allowed"`), `detail` (the host's text, or None) and `size` (the byte
    count of a `too-large`, or None). Uncaught, it fails the delivery with its message,
    e.g. `exec "fmt": not allowed: the table names no such program`."""

    def __init__(self, grant: str, subject: str, kind: str, detail: "str | None" = None,
                 size: "int | None" = None):
        said = detail if detail is not None else (None if size is None else f"{size} bytes")
        where = f"{grant} {subject}" if subject else grant
        super().__init__(f"{where}: {kind.replace('-', ' ')}" + (f": {said}" if said else ""))
        self.grant, self.kind, self.detail, self.size = grant, kind, detail, size


class ExecError(GrantError):
    """`exec.run` did not run the program: `not-allowed`, `bad-argument`, `busy`, `failed`."""


class ReadError(GrantError):
    """A `read` refused or failed: `denied`, `not-found`, `too-large`, `failed`."""


class TranscriptError(GrantError):
    """The transcript cannot be read: `none` (the event names none), `denied`, `failed`."""


class SecretError(GrantError):
    """A `secret.send` not sent or failed: `unknown`, `origin-refused`, `unavailable`, `failed`."""


class NotifyError(GrantError):
    """A notification not shown: `rate-limited`, `unavailable`."""


class WriteError(GrantError):
    """A `write` refused or failed: `denied`, `too-large`, `failed`."""


def _kind(case) -> str:
    """`ExecError_NotAllowed` -> `not-allowed`; `TranscriptError_None_` -> `none`."""
    name = type(case).__name__.partition("_")[2].rstrip("_")
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def binding(host, name: str):
    """The generated bindings of grant `name`, or the error saying how to get them."""
    if host is None:
        raise missing(name)
    return host


def call(error: type, subject: str, f, *args):
    """`f(*args)`, with the host's `Err` raised as `error` (a GrantError subclass)."""
    try:
        return f(*args)
    except Exception as err:
        if _Err is None or not isinstance(err, _Err):
            raise
        case = err.value
        value = getattr(case, "value", None)
        grant = error.__name__.removesuffix("Error").lower()
        if isinstance(value, int) and not isinstance(value, bool):
            raise error(grant, subject, _kind(case), size=value) from None
        raise error(grant, subject, _kind(case), value if isinstance(value, str) else None) from None
