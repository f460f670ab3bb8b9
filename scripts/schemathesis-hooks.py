# Schemathesis hooks for scripts/schemathesis: the few rules of hookrt serve
# that JSON Schema cannot state, so docs/openapi.json states them in words and
# the fuzzer is kept from generating "schema-valid" requests that break them
# (each would be a false `positive_data_acceptance` failure):
#
# - id, agent, session, turn, step, subagent: at most 256 bytes of UTF-8
#   (`maxLength` counts characters);
# - a tool approval names each `call_id` once;
# - `format=eve` makes the body Eve's NDJSON lines, not envelopes, and needs
#   `agent` and `session` (a dependency between parameters). Eve's stream has
#   its own tests (tests/all/eve.rs) and fuzz target (tests/fuzz eve);
# - `format=json|jsonl|ndjson` overrides the Content-Type, so a JSON body
#   sent with `format=jsonl` is read as lines (a dependency between a
#   parameter and the media type);
# - an agent's hook input's `session_id`, `sessionId`, `conversation_id`,
#   `generation_id`, `turn_id` and `tool_use_id`, and the `agent` parameter,
#   become ids: at most 256 bytes too;
# - Copilot's input does not name its event (the `event` parameter does),
#   so its tool results need `toolName` when `event` says they are one (a
#   dependency between a parameter and the body);
# - integers are JSON integers: `4428.0` is a number JSON Schema calls an
#   integer, but not a `u32` (serde refuses a fraction point).
import schemathesis

TEXTS = ("id",)
COORDINATES = ("agent", "session", "turn", "step", "subagent")
MAX_BYTES = 256


def _too_long(value):
    return isinstance(value, str) and len(value.encode("utf-8", "surrogatepass")) > MAX_BYTES


def _breaks_unstated_rules(envelope):
    if not isinstance(envelope, dict):
        return False
    if any(_too_long(envelope.get(k)) for k in TEXTS):
        return True
    coordinates = envelope.get("coordinates")
    if isinstance(coordinates, dict) and any(_too_long(coordinates.get(k)) for k in COORDINATES):
        return True
    data = envelope.get("data")
    actions = data.get("actions") if isinstance(data, dict) else None
    if isinstance(actions, list):
        ids = [a.get("call_id") for a in actions if isinstance(a, dict)]
        if len(ids) != len(set(map(repr, ids))):
            return True
    return False


INTEGERS = ("schema_version", "attempt", "sequence", "ordinal")


def _float_integers(envelope):
    if not isinstance(envelope, dict):
        return False
    coordinates = envelope.get("coordinates")
    places = [envelope] + ([coordinates] if isinstance(coordinates, dict) else [])
    return any(isinstance(p.get(k), float) for p in places for k in INTEGERS)


AGENT_IDS = ("session_id", "sessionId", "conversation_id", "generation_id", "turn_id", "tool_use_id", "taskId", "tool_call_id")
COPILOT_TOOL_RESULTS = ("postToolUse", "postToolUseFailure")


def _claude_too_long(body, query):
    if _too_long(query.get("agent")):
        return True
    return isinstance(body, dict) and any(_too_long(body.get(k)) for k in AGENT_IDS)


def _copilot_without_tool(case, query):
    body = case.body
    return (
        case.path == "/v1/copilot"
        and query.get("event") in COPILOT_TOOL_RESULTS
        and not (isinstance(body, dict) and isinstance(body.get("toolName"), str))
    )


def _cline_without_call(case, query):
    """Cline's `PostToolUse` needs its `tool_result` with a `name` (and an
    `id` of at most 256 bytes, the step): the event
    is the query's, so the body's schema cannot say so (a gate without its
    call is refused with a 200 cancel instead)."""
    body = case.body
    result = body.get("tool_result") if isinstance(body, dict) else None
    return (
        case.path == "/v1/cline"
        and query.get("event") == "PostToolUse"
        and not (
            isinstance(result, dict)
            and isinstance(result.get("name"), str)
            and not _too_long(result.get("id"))
        )
    )


@schemathesis.hook
def filter_case(context, case):
    query = case.query or {}
    if _claude_too_long(case.body, query):
        return False
    if _copilot_without_tool(case, query) or _cline_without_call(case, query):
        return False
    fmt = query.get("format")
    if fmt == "eve":
        return False
    media = (getattr(case, "media_type", None) or "").split(";")[0].strip()
    if fmt == "json" and media not in ("", "application/json"):
        return False
    if fmt in ("jsonl", "ndjson") and media == "application/json":
        return False
    body = case.body
    if isinstance(body, list) and any(_float_integers(i) for i in body) or _float_integers(body):
        return False
    items = body if isinstance(body, list) else [body]
    return not any(_breaks_unstated_rules(item) for item in items)
