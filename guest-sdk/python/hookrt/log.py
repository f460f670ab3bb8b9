"""Structured logging to the host (always granted): `log.info("message", key=value)`.

A field's value is rendered as text: a str as it is, anything else as JSON (`true`,
`3`, `["a", "b"]`). A delivery keeps at most its `output_bytes` of log text (shared
with stdout/stderr, where `print` goes); lines past it are dropped.
"""

import json
import sys

try:
    from wit_world.imports import log as _host
except ImportError:  # not inside a built hook (a unit test in CPython)
    _host = None


def _text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _emit(level: str, message, fields: dict) -> None:
    if _host is None:
        shown = " ".join(f"{k}={_text(v)}" for k, v in fields.items())
        print(f"[{level}] {message} {shown}".rstrip(), file=sys.stderr)
        return
    _host.log(
        getattr(_host.Level, level.upper()),
        str(message),
        [_host.Field(str(key), _text(value)) for key, value in fields.items()],
    )


def trace(message, /, **fields) -> None:
    """Very detailed diagnostics."""
    _emit("trace", message, fields)


def debug(message, /, **fields) -> None:
    """Diagnostics useful while writing a hook."""
    _emit("debug", message, fields)


def info(message, /, **fields) -> None:
    """Normal operation."""
    _emit("info", message, fields)


def warn(message, /, **fields) -> None:
    """Something unexpected that the hook recovered from."""
    _emit("warn", message, fields)


def error(message, /, **fields) -> None:
    """Something failed."""
    _emit("error", message, fields)
