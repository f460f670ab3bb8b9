"""Keys that make one external side effect happen once, however often delivery repeats
(the Rust SDK's `idempotency.rs`, the same algorithm: the same inputs give the same key)."""

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x00000100000001B3
# A second, unrelated start value so the two 64-bit halves differ.
_SECOND_OFFSET = 0x6C62272E07BB0142
_MASK = (1 << 64) - 1


def idempotency_key(event, purpose: str) -> str:
    """A stable key for the side effect `purpose` of this event: the same for every
    delivery attempt, different for each purpose. 32 hex characters.

    Derived from the envelope's idempotency key (never the attempt) with FNV-1a; a
    deduplication key, not a secret and not collision-proof against an adversary.
    """
    return key_from(event.idempotency_key, purpose)


def key_from(envelope_key: str, purpose: str) -> str:
    """The key of `purpose` under the envelope key `envelope_key`."""
    # Length-prefix each piece so ("ab", "c") and ("a", "bc") never collide by framing.
    framed = bytearray()
    for piece in (envelope_key.encode(), purpose.encode()):
        framed += len(piece).to_bytes(8, "little") + piece
    return f"{fnv1a(_FNV_OFFSET, framed):016x}{fnv1a(_SECOND_OFFSET, framed):016x}"


def fnv1a(offset: int, data: bytes) -> int:
    """64-bit FNV-1a of `data` from `offset`."""
    h = offset
    for byte in data:
        h = ((h ^ byte) * _FNV_PRIME) & _MASK
    return h
