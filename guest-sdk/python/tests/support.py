"""What the SDK's tests share: componentize-py's bindings stood in for (`fake_bindings`,
installed before `hookrt` is imported), and a hook module's world to deliver to."""

import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import fake_bindings as fb  # noqa: E402

fb.install()

import hookrt  # noqa: E402

Err = sys.modules["componentize_py_types"].Err
wit = sys.modules["wit_world.imports.types"]
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

TWO_CALLS = {"actions": [
    {"call_id": "c1", "tool": "run_shell", "input": {"command": "rm -rf /"}},
    {"call_id": "c2", "tool": "read_file", "input": {"path": "a"}},
]}


def world(hook_class, config="{}", file=__file__):
    """The world's exports for a module defining `hook_class` (in `file`), configured."""
    module = types.ModuleType("hook")
    module.__file__ = file  # the hook's files are the test's: failures name them
    hook_class.__module__ = "hook"
    module.Hook = hookrt.Hook  # what `from hookrt import Hook` leaves in a hook module
    setattr(module, hook_class.__name__, hook_class)
    exports = hookrt.make_world(module, files={"__init__.py": "guard.py"})()
    exports.configure(config)
    return exports


def handle(exports, key, data, kind=None):
    """Delivers `data` of `kind` (the key's) to the handler `key`."""
    kind = kind or key.partition(":")[2] or key
    return exports.handle(fb.envelope(kind, data), fb.context(key))
