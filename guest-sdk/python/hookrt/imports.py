"""The host imports that need a grant (`state`, `metrics`): their generated bindings, or
a clear error where the hook was built without them."""

import sys

from .error import HookError


def missing(name: str) -> HookError:
    """The error for a use of `hookrt.<name>` without its bindings."""
    if sys.platform != "wasi":
        return HookError(f"hookrt.{name} works only inside a built hook (componentize-py generates its bindings)")
    return HookError(
        f"this hook was built without the `{name}` import: write `from hookrt import {name}` at the "
        f"top of the hook file (that is how the build sees it is used), and grant it in hookrt.toml: "
        f'grants = ["log", "{name}"]'
    )
