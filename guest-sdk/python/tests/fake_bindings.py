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
    for name, module in grants(Err).items():
        setattr(imports, name, module)
        sys.modules[f"wit_world.imports.{name}"] = module


# What the grant stand-ins hold: the project's files, the transcript, notifications shown.
files = {"README.md": b"# demo\n", "src/a.py": b"x = 1\n"}
transcript = None
shown = []


def _variant(module, name, cases):
    for case in cases.split():
        cls = f"{name}_{case.rstrip('*')}"
        setattr(module, cls, dataclasses.make_dataclass(cls, ["value"] if case.endswith("*") else []))


def grants(Err):
    """Stand-ins of world 0.4.0's six grant interfaces, as componentize-py names them."""
    exec_ = types.ModuleType("wit_world.imports.exec")
    exec_.Output = dataclasses.make_dataclass(
        "Output", "status timed_out stdout stderr truncated duration_ms".split())
    _variant(exec_, "ExecError", "NotAllowed* BadArgument* Busy Failed*")

    def run(program, args):
        calls.append(("exec", program, args))
        if program != "fmt":
            raise Err(exec_.ExecError_NotAllowed(f"the table names no program `{program}`"))
        return exec_.Output(1 if dict(args).get("file") == "bad.py" else 0, False, b"out", b"err", False, 7)

    exec_.run = run

    read = types.ModuleType("wit_world.imports.read")
    _variant(read, "ReadError", "Denied* NotFound TooLarge* Failed*")

    def read_file(path):
        if path.startswith(".env"):
            raise Err(read.ReadError_Denied(f"{path} matches the deny pattern .env*"))
        if path == "big.bin":
            raise Err(read.ReadError_TooLarge(2_000_000))
        if path not in files:
            raise Err(read.ReadError_NotFound())
        return files[path]

    read.read_file = read_file
    read.list_dir = lambda path: sorted(files)

    tr = types.ModuleType("wit_world.imports.transcript")
    _variant(tr, "TranscriptError", "None_ Denied* Failed*")

    def tail(max_bytes):
        if transcript is None:
            raise Err(tr.TranscriptError_None_())
        return transcript[-max_bytes:]

    tr.tail = tail

    secret = types.ModuleType("wit_world.imports.secret")
    secret.Request = dataclasses.make_dataclass("Request", "method url headers body".split())
    secret.Response = dataclasses.make_dataclass("Response", "status headers body".split())
    _variant(secret, "SecretError", "Unknown* OriginRefused* Unavailable* Failed*")

    def send(name, request):
        calls.append(("secret", name, request))
        if name != "ntfy":
            raise Err(secret.SecretError_Unknown(name))
        return secret.Response(200, [("content-type", "text/plain")], b"sent")

    secret.send = send

    notify = types.ModuleType("wit_world.imports.notify")
    notify.Urgency = enum.Enum("Urgency", "LOW NORMAL CRITICAL")
    _variant(notify, "NotifyError", "RateLimited Unavailable*")

    def notify_send(title, body, urgency):
        if len(shown) >= 2:
            raise Err(notify.NotifyError_RateLimited())
        shown.append((title, body, urgency.name.lower()))

    notify.send = notify_send

    write = types.ModuleType("wit_world.imports.write")
    _variant(write, "WriteError", "Denied* TooLarge* Failed*")

    def write_file(path, data):
        if ".." in path:
            raise Err(write.WriteError_Denied(f"{path} leaves the declared folder"))
        calls.append(("write_file", path, data))

    write.append = lambda data: calls.append(("append", data))
    write.write_file = write_file
    return {"exec": exec_, "read": read, "transcript": tr, "secret": secret, "notify": notify, "write": write}


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
