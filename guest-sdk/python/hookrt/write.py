"""Writing one declared place (world 0.4.0): `write.append("line\\n")` to the declared
file, or `write.write_file("report.md", text)` inside the declared folder. Needs the
`write` grant, whose table names the place and its size cap, and
`from hookrt import write` in the hook file. Raises `WriteError` (`denied`,
`too-large`, `failed`)."""

from .grant import WriteError, binding, call

try:
    from wit_world.imports import write as _host
except ImportError:  # built without the import, or not inside a built hook
    _host = None


def _bytes(data: "bytes | str") -> bytes:
    return data.encode() if isinstance(data, str) else bytes(data)


def append(data: "bytes | str") -> None:
    """Appends `data` (bytes, or a str as UTF-8) to the declared file."""
    call(WriteError, "", binding(_host, "write").append, _bytes(data))


def write_file(path: str, data: "bytes | str") -> None:
    """Writes `data` as the whole file at `path`, relative to the declared folder."""
    call(WriteError, repr(path), binding(_host, "write").write_file, path, _bytes(data))
