# Ported from anthropic-plugin-security-patterns: github.com/anthropics/claude-code@5cfc0a1 plugins/security-guidance/hooks/security_reminder_hook.py
# Before Claude Code edits or writes a file (PreToolUse on Edit|Write|MultiEdit), look
# for risky patterns in the new content (eval, new Function, child_process.exec,
# innerHTML, document.write, dangerouslySetInnerHTML, pickle, os.system) or a GitHub
# Actions workflow, and the first time a rule fires for a file in a session, refuse
# the call with the rule's reminder (the original exits 2): the model reads it and
# tries again, and the second time passes. The original keeps what it warned about
# in ~/.claude/security_warnings_state_<session>.json; here that is `state`.

from hookrt import ABSTAIN, Deny, Hook, state

RULES = [
    (
        "github_actions_workflow",
        lambda path, text: ".github/workflows/" in path and path.endswith((".yml", ".yaml")),
        "You are editing a GitHub Actions workflow. Never put untrusted input (issue titles, "
        "PR bodies, commit messages, head_ref) straight into run: commands: pass it through "
        "an env: variable and quote it.",
    ),
    (
        "child_process_exec",
        lambda path, text: any(s in text for s in ("child_process.exec", "execSync(", "exec(")),
        "child_process.exec runs a shell: a value from the user becomes a command injection. "
        "Use execFile / spawn with an argument array instead.",
    ),
    (
        "new_function_injection",
        lambda path, text: "new Function" in text,
        "new Function() with dynamic strings is code injection: avoid it.",
    ),
    (
        "eval_injection",
        lambda path, text: "eval(" in text,
        "eval() runs arbitrary code: use JSON.parse or a safe parser for data.",
    ),
    (
        "react_dangerously_set_html",
        lambda path, text: "dangerouslySetInnerHTML" in text,
        "dangerouslySetInnerHTML with untrusted content is XSS: sanitize it (e.g. DOMPurify) or render text.",
    ),
    (
        "document_write_xss",
        lambda path, text: "document.write" in text,
        "document.write with untrusted content is XSS: build DOM nodes instead.",
    ),
    (
        "innerHTML_xss",
        lambda path, text: ".innerHTML =" in text or ".innerHTML=" in text,
        "Assigning innerHTML from untrusted content is XSS: use textContent or sanitize it.",
    ),
    (
        "pickle_deserialization",
        lambda path, text: "pickle" in text,
        "pickle runs code while it loads: never unpickle untrusted data; use JSON.",
    ),
    (
        "os_system_injection",
        lambda path, text: "os.system" in text or "from os import system" in text,
        "os.system runs a shell: use subprocess.run with an argument list.",
    ),
]

EDIT_TOOLS = {"Edit", "Write", "MultiEdit"}


def new_content(tool, tool_input):
    if tool == "Write":
        return tool_input.get("content", "")
    if tool == "Edit":
        return tool_input.get("new_string", "")
    return "\n".join(e.get("new_string", "") for e in tool_input.get("edits", []) if isinstance(e, dict))


class SecurityReminder(Hook):
    def actions_requested(self, data, event, ctx):
        return [self.decide(call, event) for call in data.actions]

    def decide(self, call, event):
        if call.tool not in EDIT_TOOLS or not isinstance(call.input, dict):
            return ABSTAIN
        path = call.input.get("file_path", "")
        text = new_content(call.tool, call.input)
        key = f"warned/{event.coordinates.session}"
        warned = state.get_json(key, [])
        for rule, matches, reminder in RULES:
            seen = f"{path}-{rule}"
            if matches(path, text) and seen not in warned:
                state.set_json(key, warned + [seen])
                return Deny(f"⚠️ Security Warning: {reminder}")
        return ABSTAIN
