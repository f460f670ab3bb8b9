"""Running a program the hook's `exec` table allows (world 0.4.0): `exec.run("fmt",
file=path)`. Needs the `exec` grant and its table in hookrt.toml, pinned by hookrt.lock,
and `from hookrt import exec` in the hook file. No shell, ever: the hook names a program
of the table and fills its template's placeholders; the host checks each value against
its placeholder's type and runs the program in the project folder under the kernel
sandbox."""

from dataclasses import dataclass

from .grant import ExecError, binding, call

try:
    from wit_world.imports import exec as _host
except ImportError:  # built without the import, or not inside a built hook
    _host = None


@dataclass(frozen=True)
class Output:
    """What one run gave back."""

    status: "int | None"
    """The exit code; None when the program was killed (time limit, signal)."""
    timed_out: bool
    stdout: bytes
    """At most the table's `output_bytes`."""
    stderr: bytes
    truncated: bool
    """Whether stdout or stderr was cut at the cap."""
    duration_ms: int

    @property
    def ok(self) -> bool:
        """Whether it exited with status 0."""
        return self.status == 0

    @property
    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")


def run(program: str, args: "dict[str, str] | None" = None, /, **placeholders: str) -> Output:
    """Runs `program` (a name in the table) with its template's placeholders filled from
    `args` and `placeholders` (`run("fmt", file="src/a.py")`). Raises `ExecError` when it
    did not run (`not-allowed`, `bad-argument`, `busy`, `failed`); a program that ran and
    failed is an `Output` whose `ok` is False."""
    host = binding(_host, "exec")
    pairs = []
    for key, value in {**(args or {}), **placeholders}.items():
        if not isinstance(value, str):
            raise ExecError("exec", repr(program), "bad-argument", f"placeholder `{key}` is {value!r}, not a str")
        pairs.append((str(key), value))
    o = call(ExecError, repr(program), host.run, program, pairs)
    return Output(o.status, o.timed_out, bytes(o.stdout), bytes(o.stderr), o.truncated, o.duration_ms)
