"""World 0.4.0's grants in the Python SDK (`exec`, `read`, `transcript`, `secret`,
`notify`, `write`) against stand-ins of componentize-py's bindings (`fake_bindings`):
what each passes to the host, what it returns, and each host refusal raised as the
grant's `GrantError` subclass, which fails a delivery with its message as it is.

Run: python3 -m unittest discover -s guest-sdk/python/tests
"""

import unittest

from support import Err, fb, handle, world
from hookrt import (ExecError, GrantError, Hook, HookError, NotifyError, ReadError, SecretError,
                    TranscriptError, WriteError, exec, notify, read, secret, transcript, write)


class Exec(unittest.TestCase):
    def setUp(self):
        fb.calls.clear()

    def test_a_run_names_the_program_and_fills_the_placeholders(self):
        out = exec.run("fmt", {"file": "src/a.py"}, mode="check")
        self.assertEqual(fb.calls, [("exec", "fmt", [("file", "src/a.py"), ("mode", "check")])])
        self.assertEqual(out, exec.Output(0, False, b"out", b"err", False, 7))
        self.assertTrue(out.ok)
        self.assertEqual((out.stdout_text, out.stderr_text), ("out", "err"))
        self.assertFalse(exec.run("fmt", file="bad.py").ok)  # it ran, and failed: no exception

    def test_a_refusal_is_an_exec_error_with_its_kind(self):
        with self.assertRaises(ExecError) as err:
            exec.run("curl", url="x")
        e = err.exception
        self.assertEqual((e.grant, e.kind, e.detail), ("exec", "not-allowed", "the table names no program `curl`"))
        self.assertEqual(str(e), "exec 'curl': not allowed: the table names no program `curl`")
        self.assertIsInstance(e, GrantError)
        self.assertIsInstance(e, HookError)

    def test_a_value_that_is_not_text_is_refused_before_the_host(self):
        with self.assertRaises(ExecError) as err:
            exec.run("fmt", file=3)
        self.assertEqual(err.exception.kind, "bad-argument")
        self.assertEqual(fb.calls, [])

    def test_an_uncaught_refusal_fails_the_delivery_with_its_message(self):
        class Formatter(Hook):
            def session_started(self, data, event, ctx):
                exec.run("rm", path="/")

        exports = world(Formatter)
        with self.assertRaises(Err) as err:
            handle(exports, "session.started", {"agent_name": "coder"})
        self.assertEqual(err.exception.value, "session.started: exec 'rm': not allowed: the table names no program `rm`")


class Read(unittest.TestCase):
    def test_files_text_and_folders(self):
        self.assertEqual(read.read_file("README.md"), b"# demo\n")
        self.assertEqual(read.read_text("src/a.py"), "x = 1\n")
        self.assertEqual(read.list_dir(), ["README.md", "src/a.py"])

    def test_each_refusal_keeps_its_kind_and_detail(self):
        cases = {".env": ("denied", ".env matches the deny pattern .env*", None),
                 "big.bin": ("too-large", None, 2_000_000), "nope": ("not-found", None, None)}
        for path, (kind, detail, size) in cases.items():
            with self.assertRaises(ReadError) as err:
                read.read_file(path)
            self.assertEqual((err.exception.kind, err.exception.detail, err.exception.size), (kind, detail, size))
        with self.assertRaises(ReadError) as err:
            read.read_text("big.bin")
        self.assertEqual(str(err.exception), "read 'big.bin': too large: 2000000 bytes")


class Transcript(unittest.TestCase):
    def tearDown(self):
        fb.transcript = None

    def test_the_tail_and_its_lines(self):
        fb.transcript = b'{"a":1}\n{"b":2}\n'
        self.assertEqual(transcript.tail(8), b'{"b":2}\n')
        self.assertEqual(transcript.tail_lines(100), ['{"a":1}', '{"b":2}'])

    def test_no_transcript_is_the_none_kind(self):
        with self.assertRaises(TranscriptError) as err:
            transcript.tail(10)
        self.assertEqual((err.exception.kind, str(err.exception)), ("none", "transcript: none"))


class Secret(unittest.TestCase):
    def setUp(self):
        fb.calls.clear()

    def test_the_request_goes_to_the_host_with_the_secrets_name_only(self):
        r = secret.send("ntfy", "POST", "https://ntfy.sh/builds", {"Title": "CI"}, body="done")
        (_, name, request), = fb.calls
        self.assertEqual(name, "ntfy")
        self.assertEqual((request.method, request.url, request.headers, request.body),
                         ("POST", "https://ntfy.sh/builds", [("Title", "CI")], b"done"))
        self.assertEqual((r.status, r.headers, r.text), (200, [("content-type", "text/plain")], "sent"))

    def test_an_unknown_secret_is_a_secret_error(self):
        with self.assertRaises(SecretError) as err:
            secret.send("github", "GET", "https://api.github.com/")
        self.assertEqual((err.exception.kind, err.exception.detail), ("unknown", "github"))


class Notify(unittest.TestCase):
    def tearDown(self):
        fb.shown.clear()

    def test_urgency_is_the_worlds_enum_and_flooding_is_rate_limited(self):
        notify.send("Tests", "all green")
        notify.send("Build", "broken", urgency="critical")
        self.assertEqual(fb.shown, [("Tests", "all green", "normal"), ("Build", "broken", "critical")])
        with self.assertRaises(NotifyError) as err:
            notify.send("again", "")
        self.assertEqual((err.exception.kind, str(err.exception)), ("rate-limited", "notify: rate limited"))

    def test_an_unknown_urgency_is_refused_before_the_host(self):
        with self.assertRaises(HookError) as err:
            notify.send("t", "b", urgency="urgent")
        self.assertNotIsInstance(err.exception, GrantError)
        self.assertEqual(fb.shown, [])


class Write(unittest.TestCase):
    def setUp(self):
        fb.calls.clear()

    def test_text_and_bytes_are_written_as_bytes(self):
        write.append("line\n")
        write.write_file("report.md", b"# report")
        self.assertEqual(fb.calls, [("append", b"line\n"), ("write_file", "report.md", b"# report")])

    def test_a_path_out_of_the_declared_place_is_denied(self):
        with self.assertRaises(WriteError) as err:
            write.write_file("../x", "y")
        self.assertEqual(str(err.exception), "write '../x': denied: ../x leaves the declared folder")


if __name__ == "__main__":
    unittest.main()
