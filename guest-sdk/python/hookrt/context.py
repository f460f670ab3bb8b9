"""Context for the model: text a handler adds to what the agent's model sees next
(world 0.3.0's `reply.context`).

`add_context(text)` (or `ctx.add_context(text)`) appends to the delivery being
handled; after the handler returns, the SDK sends the pieces with the answer, joined
by a newline. A handler that raises adds nothing. The runtime keeps at most 10,000
bytes per event from all hooks together. The text reaches the model: never put
secrets in it.
"""

_pieces: list = []


def add_context(text: str) -> None:
    """Adds `text` to the model's context for the event being handled; empty text adds nothing."""
    if not isinstance(text, str):
        raise TypeError(f"add_context takes a str, not {type(text).__name__}")
    if text:
        _pieces.append(text)


def take() -> str | None:
    """What was added since the last take, joined by a newline, or None."""
    text = "\n".join(_pieces) if _pieces else None
    _pieces.clear()
    return text


def discard() -> None:
    """Drops what was added (a failed handler's context)."""
    _pieces.clear()
