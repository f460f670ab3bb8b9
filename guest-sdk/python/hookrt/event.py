"""One delivery: the `Event` (envelope v1, its data parsed) and the `Context` the
runtime gives the handler."""

import dataclasses
import json
from typing import Any

from . import context as _context
from .error import HookError
from .typed import Misfit, from_json


@dataclasses.dataclass
class Coordinates:
    """Where in the agent's life the event happened. Stable across retries."""

    agent: str
    session: str
    turn: str | None = None
    step: str | None = None
    # Position of the event in the session's event stream (0-based).
    sequence: int = 0
    # The subagent whose scope the event belongs to; None for the primary agent.
    subagent: str | None = None


@dataclasses.dataclass
class Event:
    """One delivered event with its data parsed (a dict; typed methods also get it typed)."""

    id: str
    kind: str
    # RFC 3339, as the agent stamped it.
    timestamp: str
    coordinates: Coordinates
    data: dict
    # 1 on first delivery, more when the runtime delivers the event again.
    attempt: int = 1
    # Derived from stable coordinates, never from the attempt: see `idempotency_key`.
    idempotency_key: str = ""
    # "accepted" (held in memory) or "persisted" (in the journal before any hook saw it).
    durability: str = "accepted"
    schema_version: int = 1

    @property
    def is_retry(self) -> bool:
        """Whether this delivery repeats an earlier attempt."""
        return self.attempt > 1

    @classmethod
    def from_json(cls, envelope: "str | dict") -> "Event":
        """An event from an envelope (JSON text or dict), e.g. a line of a transcript: for tests."""
        e = json.loads(envelope) if isinstance(envelope, str) else envelope
        c = e.get("coordinates") or {}
        coordinates = Coordinates(**{f.name: c[f.name] for f in dataclasses.fields(Coordinates) if f.name in c})
        return cls(
            id=e["id"],
            kind=e["kind"],
            timestamp=e.get("timestamp", ""),
            coordinates=coordinates,
            data=e.get("data", {}),
            attempt=e.get("attempt", 1),
            idempotency_key=e.get("idempotency_key", f"{coordinates.session}/{e['id']}"),
            durability=e.get("durability", "accepted"),
            schema_version=e.get("schema_version", 1),
        )

    @classmethod
    def from_wit(cls, envelope) -> "Event":
        """The event of a WIT `envelope` record."""
        c = envelope.coordinates
        try:
            data = json.loads(envelope.data)
        except ValueError as err:
            raise HookError(f"event {envelope.id} (`{envelope.kind}`): invalid data: {err}") from None
        return cls(
            id=envelope.id,
            kind=envelope.kind,
            timestamp=envelope.timestamp,
            coordinates=Coordinates(c.agent, c.session, c.turn, c.step, c.sequence, c.subagent),
            data=data,
            attempt=envelope.attempt,
            idempotency_key=envelope.idempotency_key,
            durability=envelope.durability.name.lower(),
            schema_version=envelope.schema_version,
        )


@dataclasses.dataclass(frozen=True)
class Scope:
    """Whose events a hook receives: "primary", "subagent" (with its id) or "aggregate"."""

    kind: str = "primary"
    subagent: str | None = None


@dataclasses.dataclass(frozen=True)
class Transport:
    """How events reach hookrt (a description only): "in-process", "cli", "http", "nats", ..."""

    kind: str = "in-process"
    detail: str | None = None


@dataclasses.dataclass
class Context:
    """What the runtime tells a handler about the delivery it is running."""

    # The subscription that matched: the kind, observe:<kind>, rewrite:<kind> or *.
    handler: str
    # The hook's slug (its path under hooks/, without extension).
    slug: str = ""
    # Wall-clock milliseconds left for this delivery when it started.
    budget_ms: int = 0
    # "observe", "decision", "edit" or "gate".
    event_class: str = "observe"
    agent: str = ""
    session: str = ""
    scope: Scope = Scope()
    transport: Transport = Transport()

    def add_context(self, text: str) -> None:
        """Adds `text` to the model's context for this event (see `hookrt.add_context`)."""
        _context.add_context(text)

    @classmethod
    def from_wit(cls, context) -> "Context":
        """The context of a WIT `context` record."""
        scope = context.scope
        kind = type(scope).__name__.rpartition("_")[2].lower()  # Scope_Subagent -> subagent
        return cls(
            handler=context.handler,
            slug=context.slug,
            budget_ms=context.budget_ms,
            event_class=context.class_.name.lower(),
            agent=context.agent,
            session=context.session,
            scope=Scope(kind, getattr(scope, "value", None)),
            transport=Transport(context.transport.kind, context.transport.detail),
        )


def parse_data(kind: str, event: Event, data_class: Any):
    """The event's data as `data_class` (a dict for kinds without one)."""
    if event.kind != kind:
        raise HookError(f"event {event.id} is `{event.kind}`, not `{kind}`")
    if data_class is None:
        return event.data
    try:
        return from_json(data_class, event.data, strict=False)
    except Misfit as err:
        raise HookError(f"event {event.id} (`{kind}`): invalid data: {err}") from None
