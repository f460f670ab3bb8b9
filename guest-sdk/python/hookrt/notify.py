"""A desktop notification (world 0.4.0): `notify.send("Tests", "all green")`. Needs the
`notify` grant, and `from hookrt import notify` in the hook file; rate-limited per hook.
Raises `NotifyError` (`rate-limited`, `unavailable`)."""

from .error import HookError
from .grant import NotifyError, binding, call

try:
    from wit_world.imports import notify as _host
except ImportError:  # built without the import, or not inside a built hook
    _host = None

URGENCIES = ("low", "normal", "critical")


def send(title: str, body: str, urgency: str = "normal") -> None:
    """Shows a notification (title and body bounded by the host); `urgency` is `low`,
    `normal` or `critical`."""
    host = binding(_host, "notify")
    if urgency not in URGENCIES:
        raise HookError(f"notify.send: urgency {urgency!r} is not one of {', '.join(URGENCIES)}")
    call(NotifyError, "", host.send, str(title), str(body), getattr(host.Urgency, urgency.upper()))
