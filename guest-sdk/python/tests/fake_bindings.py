"""Stand-ins for the modules componentize-py generates (`wit_world`,
`componentize_py_types`), with the same names and shapes, so the SDK runs in host
CPython. `install()` puts them in `sys.modules`; call it before importing `hookrt`.
What the host imports receive is recorded in `calls`."""

import dataclasses
import enum
import sys
import types

calls = []
store = {}


def install():
    if "wit_world" in sys.modules:
        return
    cpt = types.ModuleType("componentize_py_types")

    @dataclasses.dataclass(frozen=True)
    class Err(Exception):
        value: object

    cpt.Err = Err
    sys.modules["componentize_py_types"] = cpt

    wit = types.ModuleType("wit_world.imports.types")
    wit.Durability = enum.Enum("Durability", "ACCEPTED PERSISTED")
    wit.EventClass = enum.Enum("EventClass", "OBSERVE DECISION EDIT GATE")
    records = {
        "Coordinates": "agent session turn step sequence subagent",
        "Envelope": "schema_version id kind timestamp coordinates attempt idempotency_key durability data",
        "Transport": "kind detail",
        "Context": "handler slug budget_ms class_ agent session scope transport",
        "CallAnswer": "approval rewrite",
        "Denial": "message interrupt",
        "Reply": "response context",
    }
    for name, fields in records.items():
        setattr(wit, name, dataclasses.make_dataclass(name, fields.split()))
    cases = {
        "Scope": "Primary Subagent* Aggregate",
        "Approval": "Abstain Allow Ask* Deny*",
        "FileEdit": "NotHandled Applied Failed*",
        "Gate": "Pass Block* ContinueTurn*",
        "Permission": "Abstain Allow* Deny*",
        "Response": "None_ Approvals* FileEdit* Edit* Calls* Gate* Permission*",
    }
    for variant, names in cases.items():
        for case in names.split():
            name = f"{variant}_{case.rstrip('*')}"
            fields = ["value"] if case.endswith("*") else []
            setattr(wit, name, dataclasses.make_dataclass(name, fields))

    log = types.ModuleType("wit_world.imports.log")
    log.Level = enum.Enum("Level", "TRACE DEBUG INFO WARN ERROR")
    log.Field = dataclasses.make_dataclass("Field", ["key", "value"])
    log.log = lambda level, message, fields: calls.append(("log", level.name.lower(), message, fields))

    metrics = types.ModuleType("wit_world.imports.metrics")
    metrics.counter = lambda name, delta, labels: calls.append(("counter", name, delta, labels))
    metrics.gauge = lambda name, value, labels: calls.append(("gauge", name, value, labels))

    state = types.ModuleType("wit_world.imports.state")

    def state_set(key, value):
        if len(value) > 64:
            raise Err("value over the cap")
        store[key] = value

    state.get = store.get
    state.set = state_set
    state.delete = lambda key: store.pop(key, None) and None

    imports = types.ModuleType("wit_world.imports")
    imports.types, imports.log, imports.metrics, imports.state = wit, log, metrics, state
    world = types.ModuleType("wit_world")
    world.imports = imports
    sys.modules.update({
        "wit_world": world,
        "wit_world.imports": imports,
        "wit_world.imports.types": wit,
        "wit_world.imports.log": log,
        "wit_world.imports.metrics": metrics,
        "wit_world.imports.state": state,
    })


def envelope(kind, data, id="evt_1", attempt=1, key=None, session="ses_1"):
    """A WIT envelope of `kind` with `data` (a dict, or JSON text)."""
    import json

    wit = sys.modules["wit_world.imports.types"]
    return wit.Envelope(
        1, id, kind, "2026-11-30T09:00:00Z",
        wit.Coordinates("coder", session, "turn_1", None, 4, None),
        attempt, key or f"{session}/{id}", wit.Durability.ACCEPTED,
        data if isinstance(data, str) else json.dumps(data),
    )


def context(handler, scope=None):
    """A WIT context for a delivery to `handler`."""
    wit = sys.modules["wit_world.imports.types"]
    return wit.Context(
        handler, "guard", 200, wit.EventClass.DECISION, "coder", "ses_1",
        scope or wit.Scope_Primary(), wit.Transport("cli", None),
    )
