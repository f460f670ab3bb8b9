"""Per-hook key-value state kept by the host across deliveries and restarts (512-byte
keys, 64 KiB values, 1 MiB per hook). Needs the `state` grant, and
`from hookrt import state` in the hook file. Instance memory is only a cache: keep here
what must last."""

import json

from .error import HookError
from .imports import missing

try:
    from wit_world.imports import state as _host
except ImportError:  # built without the import, or not inside a built hook
    _host = None

try:
    from componentize_py_types import Err as _Err
except ImportError:
    _Err = None


def _binding():
    if _host is None:
        raise missing("state")
    return _host


def get(key: str) -> bytes | None:
    """The bytes stored under `key`, or None."""
    return _binding().get(key)


def set(key: str, value: "bytes | str") -> None:
    """Stores `value` (bytes, or a str as UTF-8) under `key`; raises when a size cap would be exceeded."""
    host = _binding()
    data = value.encode() if isinstance(value, str) else bytes(value)
    try:
        host.set(key, data)
    except Exception as err:
        if _Err is not None and isinstance(err, _Err):
            raise HookError(f"state.set({key!r}): {err.value}") from None
        raise


def delete(key: str) -> None:
    """Removes `key` (no error when absent)."""
    _binding().delete(key)


def get_json(key: str, default=None):
    """The value under `key` parsed as JSON, or `default`."""
    data = get(key)
    return default if data is None else json.loads(data)


def set_json(key: str, value) -> None:
    """Stores `value` as JSON under `key`."""
    set(key, json.dumps(value, separators=(",", ":")))
