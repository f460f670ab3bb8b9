# Ported from disler-pre-tool-use: github.com/disler/claude-code-hooks-mastery@052ad1c .claude/hooks/pre_tool_use.py
# Blocks dangerous `rm -rf` variants and any access to `.env` files (not
# `.env.sample`) by Claude Code's tools (PreToolUse), as the original does by exiting 2,
# and logs every call it sees: the original appends each input to
# logs/pre_tool_use.json; here that is the hook's log, which the journal keeps.

import re

from hookrt import ABSTAIN, Deny, Hook, log

RM_RF = [
    re.compile(r"\brm\s+.*-[a-z]*r[a-z]*f"),
    re.compile(r"\brm\s+.*-[a-z]*f[a-z]*r"),
    re.compile(r"\brm\s+--recursive\s+--force"),
    re.compile(r"\brm\s+--force\s+--recursive"),
    re.compile(r"\brm\s+-r\s+.*-f"),
    re.compile(r"\brm\s+-f\s+.*-r"),
]
DANGEROUS_PATHS = [
    re.compile(r"/"),
    re.compile(r"/\*"),
    re.compile(r"~"),
    re.compile(r"~/"),
    re.compile(r"\$HOME"),
    re.compile(r"\.\."),
    re.compile(r"\*"),
    re.compile(r"\.\s*$"),
]
ENV_IN_COMMAND = [
    re.compile(r"\b\.env\b(?!\.sample)"),
    re.compile(r"cat\s+.*\.env\b(?!\.sample)"),
    re.compile(r"echo\s+.*>\s*\.env\b(?!\.sample)"),
    re.compile(r"touch\s+.*\.env\b(?!\.sample)"),
    re.compile(r"cp\s+.*\.env\b(?!\.sample)"),
    re.compile(r"mv\s+.*\.env\b(?!\.sample)"),
]
FILE_TOOLS = {"Read", "Edit", "MultiEdit", "Write", "Bash"}


def dangerous_rm(command):
    normalized = " ".join(command.lower().split())
    if any(p.search(normalized) for p in RM_RF):
        return True
    if re.search(r"\brm\s+.*-[a-z]*r", normalized):
        return any(p.search(normalized) for p in DANGEROUS_PATHS)
    return False


def env_access(tool, tool_input):
    if tool not in FILE_TOOLS:
        return False
    if tool in {"Read", "Edit", "MultiEdit", "Write"}:
        path = tool_input.get("file_path", "")
        return ".env" in path and not path.endswith(".env.sample")
    command = tool_input.get("command", "")
    return any(p.search(command) for p in ENV_IN_COMMAND)


class PreToolUse(Hook):
    def actions_requested(self, data, event, ctx):
        answers = []
        for call in data.actions:
            tool_input = call.input if isinstance(call.input, dict) else {}
            log.info("pre_tool_use", event_id=event.id, session=event.coordinates.session, tool=call.tool)
            if env_access(call.tool, tool_input):
                answers.append(
                    Deny(
                        "BLOCKED: Access to .env files containing sensitive data is prohibited\n"
                        "Use .env.sample for template files instead"
                    )
                )
            elif call.tool == "Bash" and dangerous_rm(tool_input.get("command", "")):
                answers.append(Deny("BLOCKED: Dangerous rm command detected and prevented"))
            else:
                answers.append(ABSTAIN)
        return answers
