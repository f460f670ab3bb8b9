"""The world's exports (`configure`, `subscriptions`, `handle`) for a hook module:
`make_world(module)`, which the build's entry module calls at build time.

It finds the hook (the one `hookrt.Hook` subclass the module defines, or a module-level
`hook` instance of one), creates its instance then, at build time, so that every fresh
instance of the component starts from it, and returns the `WitWorld` class
componentize-py exports.

Failures: an exception in a method becomes the delivery's error,
`<handler>: <Type>: <message> (<file>:<line>, in <method>)` (a `HookError`: its message
alone); one in `configure` refuses the hook at load, `configure: ...`. A `MemoryError`
is not caught: the call traps and the runtime reports `out_of_memory`.
"""

import importlib
import json
import os
import pkgutil
import sys
import traceback

from . import context as _context
from .error import HookError
from .event import Context, Event, parse_data
from .events import DATA, handled_kind
from .hook import METHODS, Hook, misspelled, subscriptions
from .response import to_wit
from .typed import Misfit, from_json, prepare

_METHOD_OF = {key: name for name, key in METHODS}
_EXAMPLE = """
    from hookrt import Hook, log

    class MyHook(Hook):
        def session_started(self, data, event, ctx):
            log.info("session started", agent=data.agent_name)
"""


def find_hook(module) -> Hook:
    """The hook `module` defines: its module-level `hook` instance, else an instance of
    the one `Hook` subclass defined in it (or in its package's modules)."""
    instance = getattr(module, "hook", None)
    if isinstance(instance, Hook):
        return instance
    package = module.__name__
    found = []
    for value in vars(module).values():
        if (
            isinstance(value, type)
            and issubclass(value, Hook)
            and value is not Hook
            and (value.__module__ == package or value.__module__.startswith(package + "."))
            and value not in found
        ):
            found.append(value)
    if not found:
        raise HookError(f"no hook found: define one subclass of hookrt.Hook, e.g.\n{_EXAMPLE}")
    if len(found) > 1:
        names = ", ".join(c.__name__ for c in found)
        raise HookError(
            f"{len(found)} subclasses of hookrt.Hook ({names}): keep one, "
            f"or choose with `hook = {found[0].__name__}()` at the top level"
        )
    return found[0]()


def make_world(module, files: dict | None = None):
    """The `WitWorld` class for the hook `module` defines.

    `files` maps the hook package's file names (`__init__.py`) to the names its
    author knows (`guard.py`), for the locations in error messages.
    """
    from componentize_py_types import Err
    from wit_world.imports import types as wit

    hook = find_hook(module)
    keys = subscriptions(type(hook))
    name = type(hook).__name__
    typos = misspelled(type(hook))
    if typos:
        listed = "; ".join(f"`{name}.{attr}` looks like `{like}`" for attr, like in typos)
        raise HookError(f"{listed}: rename it to the handler it means, or to `_{typos[0][0]}` if it is a helper")
    if not keys:
        raise HookError(
            f"`{name}` handles no event: override at least one method of hookrt.Hook (hookrt.METHODS lists them)"
        )
    for key in keys:  # made now, at build time, every fresh instance starts with them
        data_class = DATA.get(handled_kind(key))
        if data_class is not None:
            prepare(data_class)
    if getattr(type(hook), "Config", None) is not None:
        prepare(type(hook).Config)
    folder = getattr(module, "__file__", None)
    root = os.path.dirname(folder) + os.sep if folder else None
    runner = Runner(hook, keys, wit, root, files or {})
    runner.warm()

    class WitWorld:
        def configure(self, config: str) -> None:
            runner.configure(config, Err)

        def subscriptions(self) -> list:
            return list(keys)

        def handle(self, envelope, context):
            return runner.handle(envelope, context, Err)

    return WitWorld


class Runner:
    """Runs one hook instance's calls and turns their outcomes into the world's."""

    def __init__(self, hook: Hook, keys: list, wit, root: "str | None", files: dict):
        self.hook = hook
        self.keys = frozenset(keys)
        self.wit = wit
        self.root = root  # the hook package's folder: its frames are the ones to show
        self.files = files

    def configure(self, text: str, err_type) -> None:
        try:
            self.hook.configure(parse_config(type(self.hook), json.loads(text)))
        except MemoryError:
            raise
        except (Exception, SystemExit) as err:
            raise err_type(f"configure: {self.describe(err)}") from None
        finally:
            _context.discard()  # context belongs to deliveries

    def handle(self, envelope, context, err_type):
        key = context.handler
        if key not in self.keys:
            raise err_type(f"no handler for `{key}`")
        _context.discard()
        try:
            response = self.run(key, envelope, context)
            return self.wit.Reply(response, _context.take())
        except MemoryError:
            raise  # the call traps: the runtime reports out_of_memory
        except (Exception, SystemExit) as err:
            _context.discard()  # a failed delivery adds nothing
            raise err_type(f"{key}: {self.describe(err)}") from None

    def warm(self) -> None:
        """Runs the SDK's side of a delivery once at build time (not the hook's code), so
        that a fresh instance starts with it warm."""
        wit = self.wit
        coordinates = wit.Coordinates("agent", "session", None, None, 0, None)
        for key in self.keys:
            kind = handled_kind(key)
            envelope = wit.Envelope(1, "warm", kind, "", coordinates, 1, "", wit.Durability.ACCEPTED, "{}")
            context = wit.Context(
                key, "", 0, wit.EventClass.OBSERVE, "", "", wit.Scope_Primary(), wit.Transport("", None)
            )
            event = Event.from_wit(envelope)
            Context.from_wit(context)
            try:
                parse_data(kind, event, DATA.get(kind))
            except HookError:
                pass
            wit.Reply(to_wit(wit, key, _METHOD_OF[key], None), _context.take())

    def run(self, key: str, envelope, context):
        event = Event.from_wit(envelope)
        ctx = Context.from_wit(context)
        if key == "*":
            self.hook.any(event, ctx)
            return self.wit.Response_None_()
        method = _METHOD_OF[key]
        kind = handled_kind(key)
        data = parse_data(kind, event, DATA.get(kind))
        out = getattr(self.hook, method)(data, event, ctx)
        return to_wit(self.wit, key, method, out)

    def describe(self, err: BaseException) -> str:
        """What failed, and where in the hook's own files."""
        if isinstance(err, HookError):
            return str(err)
        text = str(err)
        what = f"{type(err).__name__}: {text}" if text else type(err).__name__
        if self.root is None:
            return what
        frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename.startswith(self.root)]
        if not frames:
            return what
        last = frames[-1]
        inner = last.filename[len(self.root):].replace(os.sep, "/")
        return f"{what} ({self.files.get(inner, inner)}:{last.lineno}, in {last.name})"


def parse_config(hook_class: type, raw):
    """The config as the hook's `Config` (the dict itself without one)."""
    config_class = getattr(hook_class, "Config", None)
    if config_class is None:
        return raw
    try:
        return from_json(config_class, raw, strict=True)
    except Misfit as err:
        name = getattr(config_class, "__name__", repr(config_class))
        raise HookError(f"config does not fit `{name}`: {err}; fix the hook's config table in hookrt.toml") from None


def preload(names, skip=()) -> None:
    """Imports the standard-library modules `names`, and every submodule of those that
    are packages (but `skip` and `__main__`s): at run time a hook has no filesystem, so
    a module not imported at build time cannot be imported later."""
    for name in names:
        module = importlib.import_module(name)
        for info in pkgutil.walk_packages(getattr(module, "__path__", []), name + ".", onerror=lambda _: None):
            sub = info.name
            if sub.endswith(".__main__") or any(sub == s or sub.startswith(s + ".") for s in skip):
                continue
            if {"test", "tests", "idle_test"} & set(sub.split(".")):
                continue
            try:
                importlib.import_module(sub)
            except Exception:  # a submodule that cannot load here is one the hook cannot use
                sys.modules.pop(sub, None)
