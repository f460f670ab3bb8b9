# Secret scan: warns when a tool result or a model message looks like it carries a
# leaked secret (cloud keys, private keys, API tokens). It logs the event, the call and
# which kinds of secret it saw, never the secret itself, and counts findings per kind in
# `state`. A Python hook, built by hookrt with componentize-py (docs/python.md).
#
# It only observes: a false positive costs a log line, never a tool call.

import re
from dataclasses import dataclass, field

from hookrt import Hook, log, state

# Compiled at the top level: it runs once, when the hook is built, so every fresh
# instance starts with these ready.
PATTERNS = {
    "aws_access_key": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "private_key": re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
    "github_token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}"),
    "slack_token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    "live_api_key": re.compile(r"\b[rs]k[-_]live[-_][A-Za-z0-9]{16,}"),
    "key_assignment": re.compile(r"\b[A-Z0-9_]*(?:API_KEY|SECRET|TOKEN|PASSWORD)\s*[=:]\s*\S{8,}"),
}


def strings(value):
    """Every string in a JSON value (a tool's output is often an object)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


@dataclass
class Settings:
    # More patterns, name = regular expression: { internal = "itk_[0-9a-f]{32}" }.
    patterns: dict[str, str] = field(default_factory=dict)


class SecretScan(Hook):
    Config = Settings

    def configure(self, config: Settings):
        self.patterns = dict(PATTERNS)
        for name, pattern in config.patterns.items():
            try:
                self.patterns[name] = re.compile(pattern)
            except re.error as err:
                raise ValueError(f"pattern `{name}` is not a regular expression: {err}") from None

    def action_result(self, data, event, ctx):
        texts = [*strings(data.output), data.error or ""]
        self.scan(texts, event, call_id=data.call_id, tool=data.tool)

    def message_completed(self, data, event, ctx):
        self.scan([data.content], event, message_id=data.message_id)

    def scan(self, texts, event, **where):
        found = sorted(name for name, p in self.patterns.items() if any(p.search(t) for t in texts))
        if not found:
            return
        log.warn("possible secret", event_id=event.id, kinds=",".join(found), **where)
        counts = state.get_json("findings", {})
        for name in found:
            counts[name] = counts.get(name, 0) + 1
        state.set_json("findings", counts)
