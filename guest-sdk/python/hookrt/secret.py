"""A request carrying a host secret the hook never sees (world 0.4.0):
`secret.send("ntfy", "POST", "https://ntfy.sh/builds", body="done")`. Needs the `secret`
grant, whose table names the secret, the origins it may go to and where it goes, and
`from hookrt import secret` in the hook file. Raises `SecretError` (`unknown`,
`origin-refused`, `unavailable`, `failed`); its text never holds the value."""

from dataclasses import dataclass

from .grant import SecretError, binding, call

try:
    from wit_world.imports import secret as _host
except ImportError:  # built without the import, or not inside a built hook
    _host = None


@dataclass(frozen=True)
class Response:
    """What came back (the body capped as `http`'s is)."""

    status: int
    headers: "list[tuple[str, str]]"
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def send(name: str, method: str, url: str, headers: "dict[str, str] | None" = None,
         body: "bytes | str" = b"") -> Response:
    """Sends `method url` with `headers` and `body` (bytes, or a str as UTF-8), the secret
    `name` put where its table says. The URL's origin must be one the secret is bound to."""
    host = binding(_host, "secret")
    data = body.encode() if isinstance(body, str) else bytes(body)
    request = host.Request(method, url, [(str(k), str(v)) for k, v in (headers or {}).items()], data)
    r = call(SecretError, repr(name), host.send, name, request)
    return Response(r.status, list(r.headers), bytes(r.body))
