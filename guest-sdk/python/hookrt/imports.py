"""The host imports that need a grant (`state`, `metrics`, and world 0.4.0's `exec`,
`read`, `transcript`, `secret`, `notify`, `write`): their generated bindings, or a clear
error where the hook was built without them."""

import sys

from .error import HookError


# The grants declared with a table of their own in hookrt.toml (world 0.4.0's).
TABLED = ("exec", "read", "transcript", "secret", "notify", "write")


def missing(name: str) -> HookError:
    """The error for a use of `hookrt.<name>` without its bindings."""
    if sys.platform != "wasi":
        return HookError(f"hookrt.{name} works only inside a built hook (componentize-py generates its bindings)")
    if name in TABLED:
        grant = f'its table, [hooks."<slug>".grants.{name}] (docs/configuration.md)'
    else:
        grant = f'grants = ["log", "{name}"]'
    return HookError(
        f"this hook was built without the `{name}` import: write `from hookrt import {name}` at the "
        f"top of the hook file (that is how the build sees it is used), and grant it in hookrt.toml: "
        f"{grant}"
    )
