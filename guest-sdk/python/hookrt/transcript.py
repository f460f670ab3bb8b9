"""The session's transcript, read-only (world 0.4.0): `transcript.tail_lines(64_000)`.
Needs the `transcript` grant, and `from hookrt import transcript` in the hook file: only
the file the agent named for this event, only where that agent keeps transcripts,
bounded. Raises `TranscriptError` (`none`: the event names no transcript; `denied`,
`failed`)."""

from .grant import TranscriptError, binding, call

try:
    from wit_world.imports import transcript as _host
except ImportError:  # built without the import, or not inside a built hook
    _host = None


def tail(max_bytes: int) -> bytes:
    """The last `max_bytes` bytes of the transcript (whole lines), at most the grant's cap."""
    host = binding(_host, "transcript")
    return bytes(call(TranscriptError, "", host.tail, max(0, int(max_bytes))))


def tail_lines(max_bytes: int) -> "list[str]":
    """The last lines of the transcript (at most `max_bytes` of them), one str each."""
    return [line for line in tail(max_bytes).decode("utf-8", "replace").split("\n") if line]
