# Ported from anthropic-docs-protect-files: https://code.claude.com/docs/en/hooks-guide (file protection hook, python one-liner)
# Blocks Claude Code's edits and writes (PreToolUse on Edit|Write) whose path contains
# `.env`, `package-lock.json` or `.git/`, as the guide's one-liner does by exiting 2.
# No grant: a decision on the event's input.

from hookrt import ABSTAIN, Deny, Hook

PROTECTED = [".env", "package-lock.json", ".git/"]
EDIT_TOOLS = {"Edit", "Write", "MultiEdit"}


class ProtectFiles(Hook):
    def actions_requested(self, data, event, ctx):
        answers = []
        for call in data.actions:
            path = call.input.get("file_path", "") if isinstance(call.input, dict) else ""
            hit = next((p for p in PROTECTED if p in path), None)
            if call.tool in EDIT_TOOLS and hit:
                answers.append(Deny(f"{path} is protected ({hit}): edit it by hand"))
            else:
                answers.append(ABSTAIN)
        return answers
