"""JSON values into typed Python values, after type annotations.

Event data is read leniently (a field the SDK does not know is ignored, so a newer
host can add fields); a hook's `Config` strictly (an unknown key is an error, since
it is most often a misspelled one). Supported: `str`, `int`, `float`, `bool`,
`None`, `Any`/`object`, `X | None`, unions, `Literal[...]`, `list[T]`,
`tuple[T, ...]`, `set[T]`, `frozenset[T]`, `dict[str, T]`, enums and dataclasses.

Each type gets a reader, made once and kept (`prepare` makes them at build time, so a
fresh instance of the component starts with them).
"""

import dataclasses
import enum
import types
import typing


class Misfit(ValueError):
    """A JSON value that does not fit its type; the message says where and why."""


_NONE = type(None)
_readers: dict = {}


def from_json(tp, value, *, strict: bool, where: str = ""):
    """`value` (parsed JSON) as `tp`; raises `Misfit`."""
    return reader(tp)(value, strict, where)


def prepare(tp) -> None:
    """Makes the readers of `tp` and of the types inside it."""
    reader(tp)


def reader(tp):
    """The function reading a JSON value as `tp`: `(value, strict, where) -> value`."""
    found = _readers.get(tp)
    if found is None:
        made = []  # a type that contains itself reads through this stub while it is made
        _readers[tp] = lambda value, strict, where: made[0](value, strict, where)
        try:
            made.append(_make(tp))
        finally:
            del _readers[tp]
        found = _readers[tp] = made[0]
    return found


def _make(tp):
    if tp is typing.Any or tp is object:
        return lambda value, strict, where: value
    if tp in _SIMPLE:
        return _SIMPLE[tp]
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        return _union(args)
    if origin is typing.Literal:
        return _literal(args)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass(tp)
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set, frozenset):
        return _sequence(origin or tp, args)
    if origin is dict or tp is dict:
        return _mapping(args)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum(tp)
    if isinstance(tp, type):
        name = type_name(tp)

        def instance(value, strict, where):
            if isinstance(value, tp):
                return value
            raise _misfit(where, value, name)

        return instance
    return lambda value, strict, where: value  # an annotation this reader does not know


def _simple(check, name, convert=None):
    def read(value, strict, where):
        if check(value):
            return value if convert is None else convert(value)
        raise _misfit(where, value, name)

    return read


_SIMPLE = {
    str: _simple(lambda v: isinstance(v, str), "str"),
    bool: _simple(lambda v: isinstance(v, bool), "bool"),
    int: _simple(lambda v: isinstance(v, int) and not isinstance(v, bool), "int"),
    float: _simple(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "float", float),
    _NONE: _simple(lambda v: v is None, "null"),
}


def _union(args):
    optional = _NONE in args
    others = [a for a in args if a is not _NONE]
    readers = [reader(a) for a in others]
    expected = " or ".join(type_name(a) for a in args)

    def read(value, strict, where):
        if value is None and optional:
            return None
        misfits = []
        for one in readers:
            try:
                return one(value, strict, where)
            except Misfit as err:
                misfits.append(err)
        if len(misfits) == 1:
            raise misfits[0]
        raise _misfit(where, value, expected)

    return read


def _literal(args):
    expected = " or ".join(repr(a) for a in args)

    def read(value, strict, where):
        if any(value == a and type(value) is type(a) for a in args):
            return value
        raise _misfit(where, value, expected)

    return read


def _dataclass(cls):
    hints = typing.get_type_hints(cls)
    fields = []
    for f in dataclasses.fields(cls):
        if f.init:
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            fields.append((f.name, reader(hints[f.name]), required, type_name(hints[f.name])))
    names = frozenset(name for name, *_ in fields)
    listed = ", ".join(f"`{n}`" for n in sorted(names)) or "none"

    def read(value, strict, where):
        if not isinstance(value, dict):
            raise _misfit(where, value, f"an object ({cls.__name__})")
        if strict:
            for key in value:
                if key not in names:
                    raise Misfit(f"unknown key `{_join(where, key)}` (the keys of {cls.__name__}: {listed})")
        kwargs = {}
        for name, one, required, shown in fields:
            if name in value:
                kwargs[name] = one(value[name], strict, _join(where, name))
            elif required:
                raise Misfit(f"missing key `{_join(where, name)}` ({shown})")
        return cls(**kwargs)

    return read


def _sequence(kind, args):
    if kind is tuple and args and args[-1] is not Ellipsis:
        items = [reader(a) for a in args]

        def fixed(value, strict, where):
            if not isinstance(value, list):
                raise _misfit(where, value, "an array")
            if len(items) != len(value):
                raise Misfit(f"`{where}` has {len(value)} items, expected {len(items)}")
            return tuple(one(v, strict, f"{where}[{i}]") for i, (one, v) in enumerate(zip(items, value)))

        return fixed
    item = reader(args[0]) if args else reader(typing.Any)

    def read(value, strict, where):
        if not isinstance(value, list):
            raise _misfit(where, value, "an array")
        return kind(item(v, strict, f"{where}[{i}]") for i, v in enumerate(value))

    return read


def _mapping(args):
    item = reader(args[1]) if len(args) == 2 else reader(typing.Any)

    def read(value, strict, where):
        if not isinstance(value, dict):
            raise _misfit(where, value, "an object")
        return {k: item(v, strict, _join(where, k)) for k, v in value.items()}

    return read


def _enum(cls):
    expected = " or ".join(repr(m.value) for m in cls)

    def read(value, strict, where):
        try:
            return cls(value)
        except ValueError:
            raise _misfit(where, value, expected) from None

    return read


def _join(where, key):
    return f"{where}.{key}" if where else str(key)


def _misfit(where, value, expected):
    at = f"`{where}` is" if where else "the value is"
    return Misfit(f"{at} {describe(value)}, expected {expected}")


def describe(value) -> str:
    """A JSON value as an author reads it: `a string "one"`, `an object`, `null`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"a number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'a string "{shown}"'
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def type_name(tp) -> str:
    """`int`, `list[str]`, `Limits`: a type as written in the hook."""
    if tp is _NONE:
        return "None"
    if isinstance(tp, type) and not typing.get_args(tp):
        return tp.__name__
    return repr(tp).replace("typing.", "")
