"""What a Python hook's methods answer, as the world's values: every answer of every
class, the defaults, what observers return, and the message of a wrong answer.

Run: python3 -m unittest discover -s guest-sdk/python/tests
"""

import unittest

from support import TWO_CALLS, Err, handle, wit, world
from hookrt import (
    ABSTAIN,
    ALLOW,
    APPLIED,
    NOT_HANDLED,
    PASS,
    STOP,
    AllowRewritten,
    Ask,
    Block,
    CallAnswer,
    Continue,
    Deny,
    Failed,
    Hook,
    PermissionDeny,
)
import hookrt


class Answers(unittest.TestCase):
    def test_decisions_gates_and_edits_become_their_wit_responses(self):
        class All(Hook):
            def actions_requested(self, data, event, ctx):
                return [Deny("no"), Ask("sure?")]

            def actions_requested_rewrite(self, data, event, ctx):
                return [CallAnswer(ALLOW, {"command": "ls"}), ABSTAIN]

            def file_edit_requested(self, data, event, ctx):
                return Failed("locked") if data.path == "a" else APPLIED

            def prompt_submitted(self, data, event, ctx):
                return Block("no SQL") if "DROP" in data.prompt else PASS

            def turn_stopping(self, data, event, ctx):
                return STOP if data.continued else Continue("run the tests")

            def permission_requested(self, data, event, ctx):
                return PermissionDeny("never", interrupt=True) if data.tool == "rm" else ALLOW

            def permission_requested_rewrite(self, data, event, ctx):
                return AllowRewritten({**data.input, "sandboxed": True})

            def step_completed(self, data, event, ctx):
                return {**data.state, "extras": {"guard": 1}}

        exports = world(All)
        r = lambda key, data: handle(exports, key, data).response  # noqa: E731
        self.assertEqual(r("actions.requested", TWO_CALLS),
                         wit.Response_Approvals([wit.Approval_Deny("no"), wit.Approval_Ask("sure?")]))
        self.assertEqual(r("rewrite:actions.requested", TWO_CALLS), wit.Response_Calls([
            wit.CallAnswer(wit.Approval_Allow(), '{"command":"ls"}'), wit.CallAnswer(wit.Approval_Abstain(), None)]))
        edit = {"content": "x", "global_storage": False}
        self.assertEqual(r("file.edit.requested", {**edit, "path": "a"}),
                         wit.Response_FileEdit(wit.FileEdit_Failed("locked")))
        self.assertEqual(r("file.edit.requested", {**edit, "path": "b"}), wit.Response_FileEdit(wit.FileEdit_Applied()))
        self.assertEqual(r("prompt.submitted", {"prompt": "DROP TABLE x"}), wit.Response_Gate(wit.Gate_Block("no SQL")))
        self.assertEqual(r("prompt.submitted", {"prompt": "hi"}), wit.Response_Gate(wit.Gate_Pass()))
        self.assertEqual(r("turn.stopping", {}), wit.Response_Gate(wit.Gate_ContinueTurn("run the tests")))
        self.assertEqual(r("turn.stopping", {"continued": True}), wit.Response_Gate(wit.Gate_Pass()))
        self.assertEqual(r("permission.requested", {"tool": "rm"}),
                         wit.Response_Permission(wit.Permission_Deny(wit.Denial("never", True))))
        self.assertEqual(r("permission.requested", {"tool": "ls"}), wit.Response_Permission(wit.Permission_Allow(None)))
        self.assertEqual(r("rewrite:permission.requested", {"tool": "sh", "input": {"cmd": "ls"}}),
                         wit.Response_Permission(wit.Permission_Allow('{"cmd":"ls","sandboxed":true}')))
        self.assertEqual(r("step.completed", {"index": 0, "finish_reason": "stop", "state": {"messages": []}}),
                         wit.Response_Edit('{"messages":[],"extras":{"guard":1}}'))

    def test_defaults_abstain_pass_stop_and_keep(self):
        class Defaults(Hook):
            pass

        hook = Defaults()
        data = hookrt.ActionsRequested(actions=[hookrt.RequestedAction(call_id="c", tool="t")] * 2)
        self.assertEqual(hook.actions_requested(data, None, None), [ABSTAIN, ABSTAIN])
        self.assertEqual(hook.actions_requested_rewrite(data, None, None), [CallAnswer(ABSTAIN)] * 2)
        self.assertEqual(hook.file_edit_requested(None, None, None), NOT_HANDLED)
        for method in ("prompt_submitted", "task_created", "config_changed", "compaction_requested"):
            self.assertEqual(getattr(hook, method)(None, None, None), PASS)
        self.assertEqual(hook.turn_stopping(None, None, None), STOP)
        self.assertEqual(hook.permission_requested_rewrite(None, None, None), ABSTAIN)
        self.assertIsNone(hook.step_completed(None, None, None))

    def test_observers_and_none_say_nothing(self):
        class Quiet(Hook):
            def actions_requested_observed(self, data, event, ctx):
                return [Deny("ignored")]

            def session_started(self, data, event, ctx):
                return "ignored"

            def actions_requested(self, data, event, ctx):
                return None

        exports = world(Quiet)
        for key, data in [("observe:actions.requested", TWO_CALLS), ("session.started", {"agent_name": "a"}),
                          ("actions.requested", TWO_CALLS)]:
            self.assertEqual(handle(exports, key, data).response, wit.Response_None_(), key)

    def test_a_wrong_answer_fails_the_delivery_saying_what_was_expected(self):
        answers = {}

        class Wrong(Hook):
            def actions_requested(self, data, event, ctx):
                return answers["approvals"]

            def prompt_submitted(self, data, event, ctx):
                return STOP

            def turn_stopping(self, data, event, ctx):
                return Block("x")

            def permission_requested(self, data, event, ctx):
                return AllowRewritten({"a": 1})

            def actions_requested_rewrite(self, data, event, ctx):
                return [CallAnswer(ALLOW, ["ls"])]

            def file_edit_requested(self, data, event, ctx):
                return "applied"

            def turn_completed(self, data, event, ctx):
                return [1]

        exports = world(Wrong)

        def error(key, data):
            with self.assertRaises(Err) as err:
                handle(exports, key, data)
            return err.exception.value

        answers["approvals"] = ALLOW
        self.assertEqual(error("actions.requested", TWO_CALLS),
                         "actions.requested: actions_requested returned Allow(): return a list with one approval "
                         "(ALLOW, ABSTAIN, Ask(question) or Deny(reason)) per requested call")
        answers["approvals"] = [ALLOW, CallAnswer(ALLOW, {"x": 1})]
        self.assertEqual(error("actions.requested", TWO_CALLS),
                         "actions.requested: approval #1 is CallAnswer(approval=Allow(), rewrite={'x': 1}): return "
                         "ALLOW, ABSTAIN, Ask(question) or Deny(reason) (a CallAnswer rewrites: return it from "
                         "actions_requested_rewrite)")
        self.assertEqual(error("prompt.submitted", {"prompt": "p"}),
                         "prompt.submitted: prompt_submitted returned Stop(): return PASS or Block(reason)")
        self.assertEqual(error("turn.stopping", {}),
                         "turn.stopping: turn_stopping returned Block(reason='x'): return STOP or Continue(what_next)")
        self.assertIn("return ABSTAIN, ALLOW or PermissionDeny(message, interrupt=False) (rewriting the input takes "
                      "permission_requested_rewrite)", error("permission.requested", {"tool": "t"}))
        self.assertEqual(error("rewrite:actions.requested", TWO_CALLS),
                         "rewrite:actions.requested: the rewrite of call #0 is ['ls'], not a dict: a rewrite is the "
                         "call's whole new input (a dict like the one in the event's data); leave it None to keep "
                         "the input")
        self.assertEqual(error("file.edit.requested", {"path": "p", "content": "c", "global_storage": True}),
                         "file.edit.requested: file_edit_requested returned 'applied': return NOT_HANDLED, APPLIED "
                         "or Failed(message)")
        self.assertIn("turn_completed returned [1]: return the whole edited agent input",
                      error("turn.completed", {"steps": 1}))


if __name__ == "__main__":
    unittest.main()
