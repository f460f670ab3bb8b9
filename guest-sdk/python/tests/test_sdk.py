"""The Python SDK in host CPython, against stand-ins of componentize-py's generated
bindings (`fake_bindings`): the methods table and typed data against the Rust SDK,
subscriptions, failures, typed config, context for the model, the envelope, host
imports and idempotency keys. Answers: `test_answers.py`.

Run: python3 -m unittest discover -s guest-sdk/python/tests
"""

import dataclasses
import os
import re
import sys
import types
import unittest
from unittest import mock

from support import REPO, TWO_CALLS, Err, handle, wit, world
from support import fb, hookrt
from hookrt import ABSTAIN, Block, Hook, log, metrics, state
from hookrt.hook import subscriptions
from hookrt.idempotency import fnv1a, key_from


class MethodsTable(unittest.TestCase):
    def test_methods_match_the_rust_sdks_table_in_order(self):
        with open(os.path.join(REPO, "guest-sdk", "src", "hook.rs"), encoding="utf-8") as f:
            rust = f.read()
        rows = re.findall(r"^\s*(\w+), \"([^\"]+)\", [\w:]+, ", rust[rust.index("handlers! {"):], re.M)
        self.assertEqual(hookrt.METHODS, [("any", "*"), *rows])

    def test_every_method_is_named_after_its_subscription_and_has_a_default(self):
        for method, key in hookrt.METHODS:
            prefix, _, kind = key.rpartition(":")
            expected = {"observe": "{}_observed", "rewrite": "{}_rewrite", "": "{}"}[prefix]
            self.assertEqual(method, "any" if key == "*" else expected.format(kind.replace(".", "_")))
            self.assertTrue(callable(getattr(Hook, method)), method)
        handlers = {n for n, v in vars(Hook).items() if callable(v) and not n.startswith("_")}
        self.assertEqual(handlers - {"configure"}, {m for m, _ in hookrt.METHODS})


class Data(unittest.TestCase):
    def test_data_classes_have_the_rust_structs_fields(self):
        with open(os.path.join(REPO, "guest-sdk", "src", "events.rs"), encoding="utf-8") as f:
            rust = f.read()
        structs = {}
        for name, body in re.findall(r"^pub struct (\w+) \{\n(.*?)^\}", rust, re.M | re.S):
            structs[name] = [f + ("?" if t.startswith("Option<") else "")
                             for f, t in re.findall(r"^\s+pub (\w+): ([^\n]+),$", body, re.M)]
        kinds = dict(re.findall(r'^kind!\((\w+) => "([^"]+)"\);', rust, re.M))
        self.assertEqual(sorted(hookrt.DATA), sorted(kinds.values()))
        for cls in [*hookrt.DATA.values(), hookrt.Usage, hookrt.RequestedAction]:
            fields = [f.name + ("?" if "None" in str(f.type) and f.default is None else "")
                      for f in dataclasses.fields(cls)]
            self.assertEqual(fields, structs[cls.__name__], cls.__name__)

    def test_typed_data_is_parsed_and_unknown_fields_are_ignored(self):
        seen = []

        class Watch(Hook):
            def actions_requested_observed(self, data, event, ctx):
                seen.append(data)

            def message_completed(self, data, event, ctx):
                seen.append(data)

        exports = world(Watch)
        handle(exports, "observe:actions.requested", {**TWO_CALLS, "future": 1})
        handle(exports, "message.completed", {"message_id": "m", "role": "assistant", "content": "hi",
                                              "usage": {"input_tokens": 3, "output_tokens": 4, "x": 0}})
        calls, message = seen
        self.assertEqual(calls.actions[0], hookrt.RequestedAction(call_id="c1", tool="run_shell",
                                                                  input={"command": "rm -rf /"}))
        self.assertEqual((message.finish_reason, message.usage), (None, hookrt.Usage(input_tokens=3, output_tokens=4)))

    def test_data_that_does_not_fit_fails_the_delivery_naming_the_field(self):
        class Watch(Hook):
            def action_result(self, data, event, ctx):
                pass

        exports = world(Watch)
        with self.assertRaises(Err) as err:
            handle(exports, "action.result", {"call_id": "c", "tool": "t", "status": "done"})
        self.assertEqual(err.exception.value,
                         "action.result: event evt_1 (`action.result`): invalid data: "
                         "`status` is a string \"done\", expected 'ok' or 'error'")
        with self.assertRaises(Err) as err:
            handle(exports, "action.result", {"call_id": "c", "status": "ok"})
        self.assertIn("missing key `tool` (str)", err.exception.value)

    def test_eve_kinds_and_any_get_the_data_as_a_dict(self):
        seen = []

        class Watch(Hook):
            def compaction_requested(self, data, event, ctx):
                seen.append(data)
                return Block("not now")

            def any(self, event, ctx):
                seen.append((event.kind, event.data, event.coordinates.sequence, ctx.handler))

        exports = world(Watch)
        reply = handle(exports, "compaction.requested", {"trigger": "auto"})
        self.assertEqual(reply.response, wit.Response_Gate(wit.Gate_Block("not now")))
        handle(exports, "*", {"a": 1}, kind="custom.thing")
        self.assertEqual(seen, [{"trigger": "auto"}, ("custom.thing", {"a": 1}, 4, "*")])


class Subscriptions(unittest.TestCase):
    def test_subscriptions_are_the_overridden_methods_in_table_order(self):
        class Base(Hook):
            def any(self, event, ctx):
                pass

        class Mine(Base):
            def permission_requested_rewrite(self, data, event, ctx):
                return ABSTAIN

            def actions_requested_observed(self, data, event, ctx):
                pass

            def session_started(self, data, event, ctx):
                pass

            def _helper(self):
                pass

        self.assertEqual(subscriptions(Mine), ["*", "session.started", "observe:actions.requested",
                                               "rewrite:permission.requested"])
        self.assertEqual(world(Mine).subscriptions(), subscriptions(Mine))

    def test_a_delivery_to_a_key_not_subscribed_fails(self):
        class Mine(Hook):
            def session_started(self, data, event, ctx):
                pass

        with self.assertRaises(Err) as err:
            handle(world(Mine), "message.completed", {})
        self.assertEqual(err.exception.value, "no handler for `message.completed`")

    def test_the_hook_is_found_or_the_module_is_refused_with_the_fix(self):
        class A(Hook):
            def any(self, event, ctx):
                pass

        class B(A):
            pass

        module = types.ModuleType("hook")
        with self.assertRaisesRegex(hookrt.HookError, r"^no hook found: define one subclass of hookrt.Hook"):
            hookrt.make_world(module)
        A.__module__ = B.__module__ = "hook"
        module.A, module.B = A, B
        with self.assertRaisesRegex(hookrt.HookError, r"^2 subclasses of hookrt.Hook \(A, B\): keep one, "
                                                      r"or choose with `hook = A\(\)` at the top level$"):
            hookrt.make_world(module)
        module.hook = B()
        self.assertEqual(hookrt.make_world(module)().subscriptions(), ["*"])

    def test_a_method_named_almost_like_a_handler_is_refused(self):
        class Typo(Hook):
            def session_start(self, data, event, ctx):
                pass

        with self.assertRaisesRegex(hookrt.HookError, r"^`Typo.session_start` looks like `session_started`"):
            world(Typo)

    def test_a_hook_that_handles_nothing_is_refused(self):
        class Idle(Hook):
            pass

        with self.assertRaisesRegex(hookrt.HookError, r"^`Idle` handles no event"):
            world(Idle)


class Failures(unittest.TestCase):
    def test_an_exception_becomes_the_deliverys_error_with_its_place(self):
        class Broken(Hook):
            def session_started(self, data, event, ctx):
                ctx.add_context("never sent")
                return {}["missing"]

            def session_completed(self, data, event, ctx):
                raise hookrt.HookError("plain message")

        exports = world(Broken, file=__file__)
        with self.assertRaises(Err) as err:
            handle(exports, "session.started", {"agent_name": "a"})
        self.assertRegex(err.exception.value,
                         r"^session.started: KeyError: 'missing' \(test_sdk.py:\d+, in session_started\)$")
        with self.assertRaises(Err) as err:
            handle(exports, "session.completed", {"turns": 1})
        self.assertEqual(err.exception.value, "session.completed: plain message")

    def test_memory_error_is_not_caught_so_the_call_traps(self):
        class Balloon(Hook):
            def configure(self, config):
                if config.get("now"):
                    raise MemoryError

            def session_started(self, data, event, ctx):
                raise MemoryError

        exports = world(Balloon)
        with self.assertRaises(MemoryError):
            handle(exports, "session.started", {"agent_name": "a"})
        with self.assertRaises(MemoryError):
            exports.configure('{"now": true}')

    def test_exit_and_recursion_are_errors_like_any_other(self):
        class Odd(Hook):
            def session_started(self, data, event, ctx):
                raise SystemExit(3)

            def session_completed(self, data, event, ctx):
                return self.session_completed(data, event, ctx)

        exports = world(Odd, file=__file__)
        with self.assertRaises(Err) as err:
            handle(exports, "session.started", {"agent_name": "a"})
        self.assertRegex(err.exception.value, r"^session.started: SystemExit: 3 \(")
        with self.assertRaises(Err) as err:
            handle(exports, "session.completed", {"turns": 1})
        self.assertRegex(err.exception.value, r"^session.completed: RecursionError: maximum recursion depth")


class Config(unittest.TestCase):
    @dataclasses.dataclass
    class Limits:
        max_calls: int
        blocked: list[str] = dataclasses.field(default_factory=list)
        mode: str | None = None

    def hook(self):
        seen = []

        class Limited(Hook):
            Config = self.Limits

            def configure(self, config):
                if config.max_calls < 1:
                    raise ValueError("max_calls must be at least 1")
                seen.append(config)

            def any(self, event, ctx):
                pass

        return Limited, seen

    def configure(self, text):
        Limited, seen = self.hook()
        try:
            world(Limited, text, file=__file__)
        except Err as err:
            return err.value
        return seen[0]

    def test_typed_config_is_parsed_before_configure(self):
        self.assertEqual(self.configure('{"max_calls": 2, "blocked": ["rm"]}'), self.Limits(2, ["rm"], None))

    def test_a_config_that_does_not_fit_names_the_key_and_the_class(self):
        fix = "; fix the hook's config table in hookrt.toml"
        self.assertEqual(self.configure('{"max_calls": 2, "max_call": 3}'),
                         "configure: config does not fit `Limits`: unknown key `max_call` (the keys of Limits: "
                         "`blocked`, `max_calls`, `mode`)" + fix)
        self.assertEqual(self.configure('{"max_calls": "2"}'),
                         "configure: config does not fit `Limits`: `max_calls` is a string \"2\", expected int" + fix)
        self.assertEqual(self.configure('{"max_calls": 2, "blocked": ["a", true]}'),
                         "configure: config does not fit `Limits`: `blocked[1]` is true, expected str" + fix)
        self.assertEqual(self.configure("{}"),
                         "configure: config does not fit `Limits`: missing key `max_calls` (int)" + fix)

    def test_configure_refuses_with_its_message(self):
        self.assertRegex(self.configure('{"max_calls": 0}'),
                         r"^configure: ValueError: max_calls must be at least 1 \(test_sdk.py:\d+, in configure\)$")

    def test_without_config_class_configure_gets_the_dict(self):
        seen = []

        class Plain(Hook):
            def configure(self, config):
                seen.append(config)

            def any(self, event, ctx):
                pass

        world(Plain, '{"anything": [1, 2]}')
        self.assertEqual(seen, [{"anything": [1, 2]}])


class ModelContext(unittest.TestCase):
    def test_context_pieces_join_and_a_failed_delivery_adds_none(self):
        class Talk(Hook):
            def session_started(self, data, event, ctx):
                ctx.add_context("first")
                hookrt.add_context("")
                hookrt.add_context("second")

            def session_completed(self, data, event, ctx):
                hookrt.add_context("lost")
                raise ValueError("boom")

            def turn_started(self, data, event, ctx):
                pass

        exports = world(Talk)
        self.assertEqual(handle(exports, "session.started", {"agent_name": "a"}).context, "first\nsecond")
        with self.assertRaises(Err):
            handle(exports, "session.completed", {"turns": 1})
        self.assertIsNone(handle(exports, "turn.started", {}).context)
        with self.assertRaisesRegex(TypeError, "add_context takes a str, not int"):
            hookrt.add_context(3)


class Envelope(unittest.TestCase):
    def test_event_and_context_carry_the_envelope_and_the_delivery(self):
        seen = []

        class Look(Hook):
            def any(self, event, ctx):
                seen.append((event, ctx))

        exports = world(Look)
        scope = wit.Scope_Subagent("researcher")
        exports.handle(fb.envelope("custom.x", "{}", id="evt_9", attempt=2), fb.context("*", scope))
        event, ctx = seen[0]
        self.assertEqual((event.id, event.kind, event.attempt, event.is_retry, event.durability,
                          event.idempotency_key, event.coordinates.turn),
                         ("evt_9", "custom.x", 2, True, "accepted", "ses_1/evt_9", "turn_1"))
        self.assertEqual((ctx.handler, ctx.slug, ctx.budget_ms, ctx.event_class, ctx.scope, ctx.transport),
                         ("*", "guard", 200, "decision", hookrt.Scope("subagent", "researcher"),
                          hookrt.Transport("cli", None)))

    def test_idempotency_keys_match_the_rust_sdk(self):
        # Computed with guest-sdk/src/idempotency.rs's `key_from`.
        self.assertEqual(key_from("ses_1/evt_1", "notify"), "dd9268d847dd57f29aa8d860b53d2bd7")
        self.assertEqual(key_from("ses_1/evt_1", "ticket"), "dbc9f901625bbd972e8cf8c1b226219e")
        self.assertEqual(key_from("ses_7f3a/evt_0005", "päge ✓"), "5b065d9562c4c6b002716618231fc1f7")
        self.assertNotEqual(key_from("ab", "c"), key_from("a", "bc"))
        self.assertEqual(fnv1a(0xCBF29CE484222325, b"a"), 0xAF63DC4C8601EC8C)  # FNV-1a 64 reference
        event = hookrt.Event.from_json('{"id": "evt_1", "kind": "k", "coordinates": {"agent": "a", "session": "ses_1"}}')
        self.assertEqual(hookrt.idempotency_key(event, "notify"), "dd9268d847dd57f29aa8d860b53d2bd7")


class HostImports(unittest.TestCase):
    def setUp(self):
        fb.calls.clear()
        fb.store.clear()

    def test_log_renders_fields_as_text(self):
        log.warn("denied", event_id="evt_1", n=3, ok=True, none=None, tools=["a"], message="m")
        (_, level, message, fields), = fb.calls
        self.assertEqual((level, message), ("warn", "denied"))
        self.assertEqual([(f.key, f.value) for f in fields],
                         [("event_id", "evt_1"), ("n", "3"), ("ok", "true"), ("none", "null"),
                          ("tools", '["a"]'), ("message", "m")])

    def test_metrics_take_labels_and_refuse_a_negative_delta(self):
        metrics.counter("events", labels={"kind": "x"})
        metrics.gauge("depth", 2, {"q": "a"})
        self.assertEqual(fb.calls, [("counter", "events", 1, [("kind", "x")]), ("gauge", "depth", 2.0, [("q", "a")])])
        with self.assertRaisesRegex(hookrt.HookError, r"delta must be a whole number >= 0, not -1"):
            metrics.counter("events", -1)

    def test_state_keeps_bytes_text_and_json(self):
        state.set("a", "héllo")
        self.assertEqual(state.get("a"), "héllo".encode())
        state.set_json("counts", {"x": 1})
        self.assertEqual(state.get_json("counts"), {"x": 1})
        self.assertEqual(state.get_json("nothing", {}), {})
        state.delete("a")
        self.assertIsNone(state.get("a"))
        with self.assertRaisesRegex(hookrt.HookError, r"^state.set\('big'\): value over the cap$"):
            state.set("big", b"x" * 100)

    def test_a_host_import_built_without_says_how_to_get_it(self):
        with mock.patch.object(state, "_host", None), mock.patch.object(sys, "platform", "wasi"):
            with self.assertRaises(hookrt.HookError) as err:
                state.get("a")
        self.assertEqual(str(err.exception),
                         "this hook was built without the `state` import: write `from hookrt import state` at the "
                         "top of the hook file (that is how the build sees it is used), and grant it in "
                         'hookrt.toml: grants = ["log", "state"]')


if __name__ == "__main__":
    unittest.main()
