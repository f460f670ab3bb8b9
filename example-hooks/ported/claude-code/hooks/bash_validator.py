# Ported from anthropic-example-bash-validator: github.com/anthropics/claude-code@5cfc0a1 examples/hooks/bash_command_validator_example.py
# Blocks Bash commands (PreToolUse on Bash) that use `grep` (not in a pipe) or
# `find -name`, and tells the model to use ripgrep instead, as the original does by
# printing its rules' messages and exiting 2. No grant: a decision on the event's input.

import re

from hookrt import ABSTAIN, Deny, Hook

RULES = [
    (re.compile(r"^grep\b(?!.*\|)"), "Use 'rg' (ripgrep) instead of 'grep' for better performance and features"),
    (
        re.compile(r"^find\s+\S+\s+-name\b"),
        "Use 'rg --files | rg pattern' or 'rg --files -g pattern' instead of 'find -name' for better performance",
    ),
]


def issues(command):
    return [message for pattern, message in RULES if pattern.search(command)]


class BashValidator(Hook):
    def actions_requested(self, data, event, ctx):
        answers = []
        for call in data.actions:
            command = call.input.get("command", "") if isinstance(call.input, dict) else ""
            found = issues(command) if call.tool == "Bash" else []
            answers.append(Deny("\n".join(f"• {m}" for m in found)) if found else ABSTAIN)
        return answers
