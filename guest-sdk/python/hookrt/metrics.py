"""Metrics aggregated per hook by the host. Needs the `metrics` grant, and
`from hookrt import metrics` in the hook file."""

from .error import HookError
from .imports import missing

try:
    from wit_world.imports import metrics as _host
except ImportError:  # built without the import, or not inside a built hook
    _host = None


def _labels(labels) -> list:
    return [(str(k), str(v)) for k, v in (labels or {}).items()]


def counter(name: str, delta: int = 1, labels: dict | None = None) -> None:
    """Adds `delta` (a whole number >= 0) to the counter `name` with `labels`."""
    if _host is None:
        raise missing("metrics")
    if isinstance(delta, bool) or not isinstance(delta, int) or delta < 0:
        raise HookError(f"metrics.counter({name!r}): delta must be a whole number >= 0, not {delta!r}")
    _host.counter(name, delta, _labels(labels))


def gauge(name: str, value: float, labels: dict | None = None) -> None:
    """Sets the gauge `name` with `labels` to `value`."""
    if _host is None:
        raise missing("metrics")
    _host.gauge(name, float(value), _labels(labels))
