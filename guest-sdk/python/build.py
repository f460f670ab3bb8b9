"""Builds one Python hook into a component for hookrt's define-hook world.

hookrt runs it (`<toolchain>/bin/python -I <sdk>/python/build.py`) in an empty private
folder, with only PATH, HOME and TMPDIR in its environment (HOME = TMPDIR = a private
folder), and one JSON request on stdin:

    {"toolchain": "<venv holding bin/componentize-py>",
     "sdk": "<guest-sdk/python>", "wit": "<guest-sdk/wit/v0.4.0/hook.wit>",
     "path": "<the hook's path, for messages>", "out": "<the component to write>",
     "files": [{"name": "__init__.py", "origin": "<path, for messages>", "text": "..."}]}

A single-file hook arrives as one file named `__init__.py`; a package hook as all its
`.py` files, named relative to its folder. hookrt read them: this script never opens
the agent folder, and nothing of the hook runs on the host. Steps:

1. parse each file with `ast` (never executed): a syntax error is `origin:line:col: ...`;
2. check its imports (`IMPORTS_ALLOWED`): `hookrt`, the hook's own modules and the
   standard-library modules that work in the sandbox; every other import is refused,
   all at once, each with its reason and the fix;
3. keep only the host imports the hook uses in a copy of the world (`log` always;
   `state`, `metrics` and the grants `exec` ... `write` when a file imports them from
   `hookrt`);
4. write the app (`hook/`: the files; `hookrt/`: the SDK; `hookrt_app.py`: the entry)
   and run componentize-py on it. componentize-py runs the hook's top level here, at
   build time, inside its own Wasmtime (pre-initialisation); an exception there is
   reported naming the hook's file and line.

Success: one JSON line on stdout, `{"imports": ["log", ...], "ms": <build ms>}`.
Failure: the message on stderr, exit status 1.
"""

import ast
import json
import keyword
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import time

# The world's host imports that need a grant and that a star import of `hookrt` brings;
# `log` is always kept.
HOST_IMPORTS = ("metrics", "state")
# World 0.4.0's grants: kept only when a file names one (`from hookrt import exec`,
# `hookrt.read`); a star import brings none of them.
GRANT_IMPORTS = ("exec", "read", "transcript", "secret", "notify", "write")
WORLD = "define-hook"
ENTRY = "hookrt_app"
PACKAGE = "hook"
SDK = "hookrt"
# The CPython inside the component (componentize-py 0.25.1).
COMPONENT_PYTHON = "3.14"

# Standard-library modules a hook may import: they work in the sandbox, which has no
# filesystem, network, processes, threads or terminal (file, socket and process calls
# of `os`, `io` and `pathlib` fail there with OSError). `sqlite3` works in memory only;
# `random`, `secrets`, `uuid`, `time` and `datetime` work with the randomness and clock
# the runtime gives.
IMPORTS_ALLOWED = frozenset(
    """__future__ abc annotationlib argparse array ast atexit base64 bdb binascii bisect
    builtins cProfile calendar cmath codecs codeop collections colorsys compression
    configparser contextlib contextvars copy copyreg csv dataclasses datetime decimal
    difflib dis doctest email encodings enum errno faulthandler fnmatch fractions
    functools gc genericpath getopt gettext graphlib gzip hashlib heapq hmac html http
    inspect io ipaddress itertools json keyword linecache locale logging marshal math
    mimetypes ntpath nturl2path numbers opcode operator optparse os pathlib pickle
    pickletools platform plistlib posix posixpath pprint profile pstats pydoc_data
    pyexpat queue quopri random re reprlib sched secrets shlex sqlite3 sre_compile
    sre_constants sre_parse stat statistics string stringprep struct symtable sys
    sysconfig tarfile textwrap this time timeit token tokenize tomllib trace traceback
    tracemalloc types typing unicodedata unittest urllib uuid warnings wave weakref xml
    zipfile zlib""".split()
)

_NO_NETWORK = "no network in the sandbox (hookrt grants no sockets)"
_NO_FILES = "no filesystem in the sandbox"
_NO_THREADS = "no processes or threads in the sandbox: a hook handles one event at a time"
_NOT_BUILT = f"not in the component's CPython {COMPONENT_PYTHON} (not built for WASI)"
_NO_TERMINAL = "no terminal, user or browser in the sandbox"
_BUILD_TIME = "a hook's modules are found at build time: import each by name, `import x`"

# Standard-library modules (and submodules) refused, with the reason.
IMPORTS_REFUSED = {
    **dict.fromkeys(
        "socket ssl select selectors socketserver http.client http.server urllib.request "
        "urllib.robotparser ftplib imaplib poplib smtplib xmlrpc wsgiref".split(),
        _NO_NETWORK,
    ),
    "asyncio": "no event loop in the sandbox (it needs sockets): handlers are synchronous",
    **dict.fromkeys("subprocess multiprocessing concurrent threading".split(), _NO_THREADS),
    "signal": "nothing sends a hook signals",
    **dict.fromkeys(
        "tempfile shutil glob fileinput filecmp shelve dbm mailbox netrc tabnanny "
        "py_compile compileall zipapp".split(),
        _NO_FILES,
    ),
    "zoneinfo": "no time-zone database in the sandbox: use datetime.timezone with a fixed offset",
    **dict.fromkeys(
        "bz2 lzma ctypes curses fcntl grp pwd mmap resource syslog readline termios tty pty "
        "msvcrt nt winreg winsound tkinter turtle turtledemo idlelib compression.bz2 "
        "compression.lzma compression.zstd".split(),
        _NOT_BUILT,
    ),
    **dict.fromkeys("getpass pdb code cmd pydoc rlcompleter antigravity webbrowser".split(), _NO_TERMINAL),
    **dict.fromkeys("importlib pkgutil runpy zipimport modulefinder pyclbr site".split(), _BUILD_TIME),
    **dict.fromkeys("venv ensurepip".split(), "a hook installs no packages"),
}
_PRIVATE = "a private module of the standard library: import its public module"
_BINDINGS = "the generated bindings are the SDK's: use `hookrt` (log, metrics, state)"
_BINDING_MODULES = {"wit_world", "componentize_py_types", "componentize_py_runtime",
                    "componentize_py_async_support", "poll_loop"}
FIX = (
    'a Python hook may import "hookrt" (the SDK), its own modules and the standard-library '
    "modules that work in the sandbox (listed in docs/python.md); put the code in the hook, "
    "or build the hook into a component yourself and drop the .wasm into hooks/"
)
# Modules imported first at run time need a filesystem the sandbox lacks, so the entry
# imports, at build time, these and every standard-library module the hook names.
ALWAYS_PRELOADED = ("_strptime",)  # datetime.strptime, time.strptime


class BuildError(Exception):
    """A failure to report as it is, on stderr."""


def main() -> int:
    started = time.monotonic()
    try:
        request = read_request(sys.stdin.read())
        files = request["files"]
        trees = parse(files)
        used = check_imports(files, trees)
        with tempfile.TemporaryDirectory(prefix="hookrt-py-") as work:
            wit_dir = filtered_wit(request["wit"], used.host, work)
            app = write_app(request, used, work)
            componentize(request, wit_dir, app, work)
    except BuildError as err:
        print(err, file=sys.stderr)
        return 1
    imports = ["log", *sorted(used.host)]
    print(json.dumps({"imports": imports, "ms": round((time.monotonic() - started) * 1000)}))
    return 0


def read_request(text: str) -> dict:
    """The request, checked: hookrt wrote it, so a bad one is hookrt's bug."""
    try:
        request = json.loads(text)
        for key in ("toolchain", "sdk", "wit", "path", "out"):
            if not isinstance(request[key], str):
                raise ValueError(f"`{key}` is not a string")
        files = request["files"]
        if not isinstance(files, list) or not files:
            raise ValueError("`files` is not a non-empty list")
        names = set()
        for f in files:
            name, origin, source = f["name"], f["origin"], f["text"]
            if not all(isinstance(v, str) for v in (name, origin, source)):
                raise ValueError(f"a file entry has a non-string field: {sorted(f)}")
            if module_of(name) is None:
                raise ValueError(f"file name {name!r} is not a module path (a/b.py, identifiers only)")
            if name in names:
                raise ValueError(f"file {name!r} twice")
            names.add(name)
        if "__init__.py" not in names:
            raise ValueError("no `__init__.py` among the files")
    except (ValueError, KeyError, TypeError) as err:
        raise BuildError(f"hookrt's Python build request is malformed: {err}") from None
    return request


def module_of(name: str) -> "str | None":
    """`util.py` -> `hook.util`, `__init__.py` -> `hook`, `sub/__init__.py` -> `hook.sub`."""
    if not name.endswith(".py") or name.startswith("/"):
        return None
    parts = name[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return None
    return ".".join([PACKAGE, *parts])


def parse(files: list) -> list:
    """Each file's syntax tree; every syntax error at once."""
    trees, problems = [], []
    for f in files:
        try:
            trees.append(ast.parse(f["text"], filename=f["origin"]))
        except SyntaxError as err:
            problems.append(f"{f['origin']}:{err.lineno}:{err.offset}: {err.msg}")
        except ValueError as err:  # e.g. a NUL byte
            problems.append(f"{f['origin']}: {err}")
    if problems:
        version = ".".join(map(str, sys.version_info[:2]))
        note = ""
        if version != COMPONENT_PYTHON:
            note = f"\n(checked with the build's Python {version}; hooks run on {COMPONENT_PYTHON})"
        raise BuildError("\n".join(problems) + note)
    return trees


class Used:
    """What the hook's files import: host imports, standard-library modules."""

    def __init__(self):
        self.host = set()
        self.stdlib = set()
        self.modules = []


def check_imports(files: list, trees: list) -> Used:
    """The imports of every file, checked; every refused one at once."""
    used = Used()
    own = {module_of(f["name"]) for f in files}
    used.modules = sorted(own)
    packages = {m.rsplit(".", i)[0] for m in own for i in range(m.count(".") + 1)}
    problems = []
    for f, tree in zip(files, trees):
        module = module_of(f["name"])
        package = module if f["name"].endswith("__init__.py") else module.rpartition(".")[0]
        sdk_names = set()
        for node in ast.walk(tree):
            found = []  # (module name, names imported from it)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found.append((alias.name, ()))
                    if alias.name.split(".")[0] == SDK:
                        sdk_names.add(alias.asname or SDK)
            elif isinstance(node, ast.ImportFrom):
                names = tuple(a.name for a in node.names)
                if node.level:
                    base = package.split(".")
                    if node.level - 1 >= len(base):
                        problems.append(f"{f['origin']}:{node.lineno}: relative import goes above the hook's package")
                        continue
                    base = base[: len(base) - (node.level - 1)]
                    found.append((".".join(base + ([node.module] if node.module else [])), names))
                else:
                    found.append((node.module, names))
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in sdk_names
                and node.attr in HOST_IMPORTS + GRANT_IMPORTS
            ):
                used.host.add(node.attr)
            for name, names in found:
                problem = check_module(name, names, own | packages, used)
                if problem:
                    problems.append(f"{f['origin']}:{node.lineno}: {problem}")
    if problems:
        refused = any("is not allowed" in p for p in problems)
        raise BuildError("\n".join(problems) + (f"\n  fix: {FIX}" if refused else ""))
    return used


def check_module(name: str, names: tuple, own: set, used: Used) -> "str | None":
    """Why importing `name` (and `names` from it) is refused, or None; records what it uses."""
    top = name.split(".")[0]
    if top == SDK:
        sub = name.split(".")[1:2]
        for host in HOST_IMPORTS + GRANT_IMPORTS:
            star = "*" in names and host in HOST_IMPORTS
            if sub == [host] or (not sub and (host in names or star)):
                used.host.add(host)
        return None
    if top == PACKAGE:
        if name not in own:
            return f'import "{name}": the hook has no module `{name[len(PACKAGE) + 1:] or name}`'
        return None
    if top in _BINDING_MODULES:
        return f'import "{name}" is not allowed: {_BINDINGS}'
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        reason = IMPORTS_REFUSED.get(".".join(parts[:i]))
        if reason:
            return f'import "{name}" is not allowed: {reason}'
    if top != "__future__" and top.startswith("_"):
        return f'import "{name}" is not allowed: {_PRIVATE}'
    if top not in IMPORTS_ALLOWED:
        return f'import "{name}" is not allowed: not a standard-library module (a hook gets no other packages)'
    used.stdlib.add(name)  # a package's submodules are preloaded too: `from email import utils`
    return None


def filtered_wit(wit_file: str, used: set, work: str) -> str:
    """A copy of the world whose `import`s are only the host interfaces the hook uses."""
    try:
        with open(wit_file, encoding="utf-8") as f:
            text = f.read()
    except OSError as err:
        raise BuildError(f"cannot read the world {wit_file}: {err}") from None
    for name in HOST_IMPORTS + GRANT_IMPORTS:
        line = re.compile(rf"^\s*import {name};\s*$", re.M)
        if not line.search(text):
            raise BuildError(f"{wit_file} has no `import {name};` in its world: the SDK and the WIT disagree")
        if name not in used:
            text = line.sub("", text)
    out = os.path.join(work, "wit")
    os.mkdir(out)
    with open(os.path.join(out, "hook.wit"), "w", encoding="utf-8") as f:
        f.write(text)
    return out


def write_app(request: dict, used: Used, work: str) -> str:
    """The app folder: the hook as package `hook`, the SDK, and the entry module."""
    app = os.path.join(work, "app")
    for f in request["files"]:
        path = os.path.join(app, PACKAGE, *f["name"].split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as out:
            out.write(f["text"])
    sdk = os.path.join(request["sdk"], SDK)
    if not os.path.isfile(os.path.join(sdk, "__init__.py")):
        raise BuildError(f"the Python SDK is not at {sdk}")
    shutil.copytree(sdk, os.path.join(app, SDK), ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    with open(os.path.join(app, f"{ENTRY}.py"), "w", encoding="utf-8") as out:
        out.write(entry_module(request["files"], used))
    return app


def entry_module(files: list, used: Used) -> str:
    """The component's entry: preloads, the hook, and the world's exports."""
    init = next(f for f in files if f["name"] == "__init__.py")
    if init["origin"].replace("\\", "/").endswith("/__init__.py"):
        folder = posixpath.basename(posixpath.dirname(init["origin"].replace("\\", "/")))
        shown = {f["name"]: f"{folder}/{f['name']}" for f in files}
    else:
        shown = {"__init__.py": posixpath.basename(init["origin"].replace("\\", "/"))}
    preload = sorted(set(ALWAYS_PRELOADED) | used.stdlib)
    skip = sorted(IMPORTS_REFUSED)
    lines = [
        '"""The component\'s entry, written by hookrt\'s build (guest-sdk/python/build.py)."""',
        "",
        "from hookrt.world import make_world, preload",
        "",
        f"preload({preload!r}, skip={skip!r})",
        "",
        f"import {PACKAGE}",
        *(f"import {m}" for m in used.modules if m != PACKAGE),
        "",
        f"WitWorld = make_world({PACKAGE}, files={shown!r})",
        "",
    ]
    return "\n".join(lines)


def componentize(request: dict, wit_dir: str, app: str, work: str) -> None:
    """Runs componentize-py on the app and writes the component to `out`."""
    tool = os.path.join(request["toolchain"], "bin", "componentize-py")
    if not os.access(tool, os.X_OK):
        raise BuildError(f"the Python toolchain at {request['toolchain']} has no bin/componentize-py: install it again")
    # componentize-py adds a site-packages folder to the hook's module path, writable at
    # build time: without VIRTUAL_ENV it asks the `python` on PATH for its own. An empty
    # private one keeps every host site-packages out of reach of the hook's top level.
    venv = os.path.join(work, "venv")
    os.makedirs(os.path.join(venv, "lib", f"python{COMPONENT_PYTHON}", "site-packages"))
    env = {k: os.environ[k] for k in ("PATH", "HOME", "TMPDIR") if k in os.environ}
    env["VIRTUAL_ENV"] = venv
    component = os.path.join(work, "hook.wasm")
    command = [tool, "-q", "-d", wit_dir, "-w", WORLD, "componentize", "-p", app, ENTRY, "-o", component]
    try:
        # componentize-py runs the hook's top level in a process of its own: it stays in
        # this script's process group, which hookrt kills whole at its build timeout.
        run = subprocess.run(command, cwd=app, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    except OSError as err:
        raise BuildError(f"cannot run {tool}: {err}") from None
    if run.returncode != 0 or not os.path.isfile(component):
        raise BuildError(build_failure(request, run.stderr + run.stdout))
    part = request["out"] + ".part"
    try:
        shutil.copyfile(component, part)
        os.replace(part, request["out"])
    except OSError as err:
        raise BuildError(f"cannot write {request['out']}: {err}") from None


_FRAME = re.compile(r'^  File "([^"]+)", line (\d+), in (.+)$')
_APP_FILE = re.compile(rf"/\d+/{PACKAGE}/(.+)")


def build_failure(request: dict, output: str) -> str:
    """componentize-py's report, as the hook's author needs it: what the hook's top level
    (or the SDK, finding the hook) raised, and where in the hook's files."""
    inner = output.partition("AssertionError: ")[2].partition("\n\nCaused by:")[0]
    if "Traceback (most recent call last):" not in inner:
        tail = "\n".join(output.strip().splitlines()[-30:])
        return f"{request['path']}: componentize-py failed:\n{tail}"
    last = inner.split("Traceback (most recent call last):\n")[-1]
    origins = {f["name"]: f["origin"] for f in request["files"]}
    frames, end = [], 0
    lines = last.splitlines()
    for i, line in enumerate(lines):
        m = _FRAME.match(line)
        if not m:
            continue
        end = i + 1
        while end < len(lines) and lines[end].startswith("    "):  # its code and carets
            end += 1
        own = _APP_FILE.fullmatch(m.group(1))  # componentize-py mounts the app at /0
        file = origins.get(own.group(1)) if own else None
        code = lines[i + 1].strip() if i + 1 < len(lines) and lines[i + 1].startswith("    ") else ""
        if file:
            frames.append((file, m.group(2), m.group(3), code))
    error = lines[end:]
    message = "\n".join(error).strip() or inner.strip()
    kind, _, text = message.partition(": ")
    if kind.endswith("HookError"):
        return f"{request['path']}: {text}"
    if not frames:
        return f"{request['path']}: building the hook failed: {message}"
    file, line, _, _ = frames[-1]
    shown = "\n".join(f"    {f}:{n}, in {fn}: {code}" for f, n, fn, code in frames)
    return f"{file}:{line}: {message}\n  the hook's top level runs when it is built; it raised at:\n{shown}"


if __name__ == "__main__":
    sys.exit(main())
