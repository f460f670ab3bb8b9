"""The Python build driver (`guest-sdk/python/build.py`) without componentize-py: its
request, the import check, the filtered world, the entry module and how a failed
build is reported. `FakeToolchain` stands in for componentize-py and records what it
was given.

Run: python3 -m unittest discover -s guest-sdk/python/tests
"""

import importlib.util
import io
import json
import os
import stat
import sys
import tempfile
import textwrap
import unittest
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SDK = os.path.dirname(HERE)
WIT = os.path.join(SDK, "..", "wit", "v0.4.0", "hook.wit")

spec = importlib.util.spec_from_file_location("hookrt_build", os.path.join(SDK, "build.py"))
build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)

# Modules of older standard libraries that CPython 3.14 no longer has.
REMOVED_BEFORE_314 = set(
    "aifc asynchat asyncore audioop cgi cgitb chunk crypt distutils imghdr imp lib2to3 mailcap "
    "msilib nis nntplib ossaudiodev pipes smtpd sndhdr spwd sunau telnetlib uu xdrlib".split()
)


def files(**sources):
    """Request files from `name=text` (`pkg__util` names `pkg/util.py`)."""
    out = []
    for name, text in sources.items():
        path = name.replace("__", "/") + ".py" if name != "init" else "__init__.py"
        out.append({"name": path, "origin": f"/agent/hooks/guard/{path}", "text": textwrap.dedent(text)})
    return out


def check(**sources):
    fs = files(**sources)
    return build.check_imports(fs, build.parse(fs))


class Imports(unittest.TestCase):
    def test_the_sdk_the_hooks_own_modules_and_the_working_stdlib_are_allowed(self):
        used = check(
            init="""
            import json, re
            from hookrt import Hook, log
            from . import util
            from .util import helper
            from hook.util import helper as h2
            from __future__ import annotations
            def later():
                import fractions
                from email import utils
            """,
            util="def helper(): pass\n",
        )
        self.assertEqual(used.host, set())
        self.assertEqual(used.stdlib, {"json", "re", "__future__", "fractions", "email"})
        self.assertEqual(used.modules, ["hook", "hook.util"])

    def test_every_refused_import_is_reported_at_once_with_its_reason_and_the_fix(self):
        with self.assertRaises(build.BuildError) as err:
            check(init="""
            import socket, requests
            from urllib.request import urlopen
            import _socket
            import wit_world
            from .missing import x
            from .. import up
            def f():
                import subprocess
            """)
        origin = "/agent/hooks/guard/__init__.py"
        self.assertEqual(str(err.exception).splitlines(), [
            f'{origin}:2: import "socket" is not allowed: no network in the sandbox (hookrt grants no sockets)',
            f'{origin}:2: import "requests" is not allowed: not a standard-library module (a hook gets no other packages)',
            f'{origin}:3: import "urllib.request" is not allowed: no network in the sandbox (hookrt grants no sockets)',
            f'{origin}:4: import "_socket" is not allowed: a private module of the standard library: import its public module',
            f'{origin}:5: import "wit_world" is not allowed: the generated bindings are the SDK\'s: use `hookrt` (log, metrics, state)',
            f'{origin}:6: import "hook.missing": the hook has no module `missing`',
            f"{origin}:7: relative import goes above the hook's package",
            f'{origin}:9: import "subprocess" is not allowed: no processes or threads in the sandbox: a hook handles one event at a time',
            f"  fix: {build.FIX}",
        ])

    def test_host_imports_are_seen_however_the_hook_names_them(self):
        self.assertEqual(check(init="from hookrt import state\n").host, {"state"})
        self.assertEqual(check(init="from hookrt import *\n").host, {"state", "metrics"})
        self.assertEqual(check(init="from hookrt.metrics import counter\n").host, {"metrics"})
        self.assertEqual(check(init="import hookrt.state\n").host, {"state"})
        self.assertEqual(check(init="import hookrt as h\nh.metrics.counter('x')\n").host, {"metrics"})
        self.assertEqual(check(init="import hookrt\nhookrt.log.info('x')\n").host, set())
        self.assertEqual(check(init="from hookrt import Hook\n", util="from hookrt import state\n").host, {"state"})

    def test_a_grant_is_seen_only_where_a_file_names_it(self):
        self.assertEqual(check(init="from hookrt import exec\n").host, {"exec"})
        self.assertEqual(check(init="from hookrt import read, write, Hook\n").host, {"read", "write"})
        self.assertEqual(check(init="from hookrt.notify import send\n").host, {"notify"})
        self.assertEqual(check(init="import hookrt\nhookrt.transcript.tail(9)\n").host, {"transcript"})
        self.assertEqual(check(init="import hookrt.secret\n").host, {"secret"})
        # A star import brings `state` and `metrics`, never a grant the table must declare.
        self.assertEqual(check(init="from hookrt import *\n").host, {"state", "metrics"})

    def test_every_standard_library_module_is_allowed_or_refused_with_a_reason(self):
        tops = {name.split(".")[0] for name in build.IMPORTS_REFUSED if "." not in name}
        self.assertEqual(build.IMPORTS_ALLOWED & tops, set())
        public = {n for n in sys.stdlib_module_names if not n.startswith("_")}
        unknown = public - build.IMPORTS_ALLOWED - tops - REMOVED_BEFORE_314
        self.assertEqual(unknown, set(), "classify these modules in build.py")

    def test_a_syntax_error_names_the_file_line_and_column(self):
        with self.assertRaises(build.BuildError) as err:
            build.parse(files(init="def f(:\n    pass\n"))
        self.assertTrue(str(err.exception).startswith("/agent/hooks/guard/__init__.py:1:7: "), err.exception)

    def test_file_names_become_modules_of_the_hook_package(self):
        self.assertEqual(build.module_of("__init__.py"), "hook")
        self.assertEqual(build.module_of("util.py"), "hook.util")
        self.assertEqual(build.module_of("sub/__init__.py"), "hook.sub")
        self.assertEqual(build.module_of("sub/x.py"), "hook.sub.x")
        for bad in ("/abs.py", "../up.py", "a-b.py", "class.py", "x.txt"):
            self.assertIsNone(build.module_of(bad), bad)


class World(unittest.TestCase):
    def test_the_world_keeps_only_the_host_imports_used(self):
        with tempfile.TemporaryDirectory() as work:
            out = build.filtered_wit(WIT, {"state"}, work)
            with open(os.path.join(out, "hook.wit"), encoding="utf-8") as f:
                text = f.read()
        self.assertIn("    import log;\n", text)
        self.assertIn("    import state;\n", text)
        self.assertNotIn("import metrics;", text)
        self.assertIn("interface metrics {", text)  # the interface stays, only the import goes

    def test_a_grant_used_keeps_its_import_and_the_others_go(self):
        with tempfile.TemporaryDirectory() as work:
            out = build.filtered_wit(WIT, {"exec"}, work)
            with open(os.path.join(out, "hook.wit"), encoding="utf-8") as f:
                text = f.read()
        self.assertIn("    import exec;\n", text)
        for name in ("state", "metrics", "read", "transcript", "secret", "notify", "write"):
            self.assertNotIn(f"import {name};", text)

    def test_the_entry_preloads_what_the_hook_imports_and_names_its_files(self):
        used = check(init="from .util import f\nimport json\n", util="def f(): pass\n")
        entry = build.entry_module(files(init="", util=""), used)
        self.assertIn("preload(['_strptime', 'json'], skip=[", entry)
        self.assertIn("import hook\nimport hook.util\n", entry)
        self.assertIn("WitWorld = make_world(hook, files={'__init__.py': 'guard/__init__.py', "
                      "'util.py': 'guard/util.py'})", entry)
        single = [{"name": "__init__.py", "origin": "/agent/hooks/guard.py", "text": ""}]
        self.assertIn("files={'__init__.py': 'guard.py'}", build.entry_module(single, build.Used()))


class FakeToolchain:
    """A toolchain whose componentize-py records its arguments, environment and app, then
    writes a component (or prints `stderr` and fails)."""

    def __init__(self, root, stderr=None):
        self.root = root
        self.record = os.path.join(root, "record.json")
        os.makedirs(os.path.join(root, "bin"))
        tool = os.path.join(root, "bin", "componentize-py")
        fail = f"sys.stderr.write({stderr!r}); sys.exit(1)" if stderr else ""
        with open(tool, "w") as f:
            f.write(textwrap.dedent(f"""\
                #!{sys.executable}
                import json, os, sys
                args = sys.argv[1:]
                app = args[args.index("-p") + 1]
                wit = open(os.path.join(args[args.index("-d") + 1], "hook.wit")).read()
                entry = open(os.path.join(app, "hookrt_app.py")).read()
                listing = sorted(os.path.relpath(os.path.join(d, n), app) for d, _, ns in os.walk(app) for n in ns)
                json.dump({{"args": args, "env": dict(os.environ), "cwd": os.getcwd(), "app": app,
                           "wit": wit, "entry": entry, "files": listing}}, open({self.record!r}, "w"))
                {fail}
                open(args[args.index("-o") + 1], "wb").write(b"\\0asm component")
                """))
        os.chmod(tool, os.stat(tool).st_mode | stat.S_IXUSR)

    def recorded(self):
        with open(self.record) as f:
            return json.load(f)


class Driver(unittest.TestCase):
    def run_build(self, toolchain, out, sources):
        request = {"toolchain": toolchain.root, "sdk": SDK, "wit": WIT, "path": "hooks/guard.py", "out": out,
                   "files": sources}
        stdout, stderr = io.StringIO(), io.StringIO()
        env = {"PATH": os.environ.get("PATH", ""), "HOME": toolchain.root, "TMPDIR": toolchain.root}
        with mock.patch.object(sys, "stdin", io.StringIO(json.dumps(request))), mock.patch.dict(
            os.environ, env, clear=True
        ), redirect_stdout(stdout), redirect_stderr(stderr):
            code = build.main()
        return code, stdout.getvalue(), stderr.getvalue()

    def test_a_build_writes_the_component_and_answers_its_imports(self):
        with tempfile.TemporaryDirectory() as tmp:
            toolchain = FakeToolchain(os.path.join(tmp, "toolchain"))
            out = os.path.join(tmp, "guard.wasm")
            source = [{"name": "__init__.py", "origin": "/agent/hooks/guard.py",
                       "text": "from hookrt import Hook, state\nclass G(Hook):\n    def any(self, e, c): pass\n"}]
            code, stdout, stderr = self.run_build(toolchain, out, source)
            self.assertEqual((code, stderr), (0, ""))
            answer = json.loads(stdout)
            self.assertEqual(answer["imports"], ["log", "state"])
            self.assertIsInstance(answer["ms"], int)
            with open(out, "rb") as f:
                self.assertEqual(f.read(), b"\0asm component")
            seen = toolchain.recorded()
        self.assertEqual(seen["args"][:4], ["-q", "-d", seen["args"][2], "-w"])
        self.assertEqual(seen["args"][4:7], ["define-hook", "componentize", "-p"])
        self.assertEqual(seen["args"][8], "hookrt_app")
        self.assertNotIn("--stub-wasi", seen["args"])
        self.assertEqual(seen["cwd"], seen["app"])
        # Only these, and a private empty site-packages instead of any host one (LC_CTYPE:
        # the fake's own Python sets it, coercing the C locale).
        self.assertEqual(sorted(set(seen["env"]) - {"LC_CTYPE"}), ["HOME", "PATH", "TMPDIR", "VIRTUAL_ENV"])
        venv = seen["env"]["VIRTUAL_ENV"]
        self.assertTrue(venv.startswith(tempfile.gettempdir()) and venv.endswith("/venv"), venv)
        self.assertNotIn("import metrics;", seen["wit"])
        self.assertIn("hook/__init__.py", seen["files"])
        self.assertIn("hookrt/world.py", seen["files"])
        self.assertIn("hookrt_app.py", seen["files"])

    def test_a_refused_import_fails_before_componentize_py_runs(self):
        with tempfile.TemporaryDirectory() as tmp:
            toolchain = FakeToolchain(os.path.join(tmp, "toolchain"))
            source = [{"name": "__init__.py", "origin": "/agent/hooks/guard.py", "text": "import socket\n"}]
            code, stdout, stderr = self.run_build(toolchain, os.path.join(tmp, "x.wasm"), source)
            self.assertFalse(os.path.exists(toolchain.record))
        self.assertEqual((code, stdout), (1, ""))
        self.assertTrue(stderr.startswith('/agent/hooks/guard.py:1: import "socket" is not allowed'), stderr)

    def test_an_exception_of_the_hooks_top_level_names_its_file_and_line(self):
        report = textwrap.dedent("""\
            Traceback (most recent call last):
              File "/toolchain/bin/componentize-py", line 8, in <module>
                sys.exit(script())
                         ^^^^^^^^
            AssertionError: Traceback (most recent call last):
              File "/0/hookrt_app.py", line 7, in <module>
                import hook.util
              File "/0/hook/util.py", line 3, in <module>
                LIMIT = int("ten")
                        ^^^^^^^^^^
            ValueError: invalid literal for int() with base 10: 'ten'


            Caused by:
                ValueError: invalid literal for int() with base 10: 'ten'
            """)
        with tempfile.TemporaryDirectory() as tmp:
            toolchain = FakeToolchain(os.path.join(tmp, "toolchain"), stderr=report)
            source = [{"name": "__init__.py", "origin": "/agent/hooks/guard/__init__.py", "text": ""},
                      {"name": "util.py", "origin": "/agent/hooks/guard/util.py", "text": ""}]
            out = os.path.join(tmp, "x.wasm")
            code, _, stderr = self.run_build(toolchain, out, source)
            self.assertFalse(os.path.exists(out))
        self.assertEqual(code, 1)
        self.assertEqual(stderr, (
            "/agent/hooks/guard/util.py:3: ValueError: invalid literal for int() with base 10: 'ten'\n"
            "  the hook's top level runs when it is built; it raised at:\n"
            '    /agent/hooks/guard/util.py:3, in <module>: LIMIT = int("ten")\n'
        ))

    def test_the_sdk_refusing_the_module_is_reported_as_it_says(self):
        report = ("AssertionError: Traceback (most recent call last):\n"
                  '  File "/0/hookrt_app.py", line 9, in <module>\n'
                  "    WitWorld = make_world(hook)\n"
                  "hookrt.error.HookError: no hook found: define one subclass of hookrt.Hook, e.g.\n\n"
                  "    class MyHook(Hook): ...\n\n\nCaused by:\n    x\n")
        failure = build.build_failure({"path": "hooks/guard.py", "files": []}, report)
        self.assertEqual(failure, "hooks/guard.py: no hook found: define one subclass of hookrt.Hook, e.g.\n\n"
                                  "    class MyHook(Hook): ...")

    def test_a_malformed_request_is_refused_as_hookrts_bug(self):
        for request in ("{", '{"toolchain": 1}', json.dumps({
            "toolchain": "t", "sdk": "s", "wit": "w", "path": "p", "out": "o",
            "files": [{"name": "../x.py", "origin": "o", "text": ""}],
        })):
            with self.assertRaises(build.BuildError) as err:
                build.read_request(request)
            self.assertTrue(str(err.exception).startswith("hookrt's Python build request is malformed: "))


if __name__ == "__main__":
    unittest.main()
