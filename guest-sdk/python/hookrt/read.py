"""The project folder, read-only (world 0.4.0): `read.read_text("pyproject.toml")`. Needs
the `read` grant, and `from hookrt import read` in the hook file. Paths are relative to
the project (the host decides which folder that is, never an event); deny patterns
(`.env*`, keys, `.git/config`, the agent's settings) and size caps refuse a read with
`ReadError` (`denied`, `not-found`, `too-large`, `failed`)."""

from .grant import ReadError, binding, call

try:
    from wit_world.imports import read as _host
except ImportError:  # built without the import, or not inside a built hook
    _host = None


def read_file(path: str) -> bytes:
    """The whole content of the file at `path`."""
    return bytes(call(ReadError, repr(path), binding(_host, "read").read_file, path))


def read_text(path: str) -> str:
    """The file at `path` as UTF-8 text."""
    return read_file(path).decode("utf-8")


def list_dir(path: str = ".") -> "list[str]":
    """The names in the folder at `path` (the project's root by default), sorted;
    denied names are left out."""
    return list(call(ReadError, repr(path), binding(_host, "read").list_dir, path))
