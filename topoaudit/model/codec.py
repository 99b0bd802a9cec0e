"""Generic JSON codec for the frozen dataclasses of the model.

One encoder and one decoder driven by type hints, so a new field is serialised without extra code and
a saved report decodes back into the very objects the renderers take. Absent values travel as
``{"status": "unsupported"|"failed", "source": ..., "reason": ...}``; enums by value (``PathLevel`` by
name); tuples as lists.

A saved document is an attachment from someone else, so reading it is bounded: :func:`read_json` turns what
``json.loads`` cannot take (nesting past its recursion limit, an integer of thousands of digits) into one
sentence, the decoder refuses integers beyond 64 bits and free-form values nested deeper than
:data:`MAX_DEPTH`, and a number that is not finite (NaN, infinity) is written as a failed value with its
reason, never as the bare ``NaN`` that is not JSON.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import math
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar, Union

from topoaudit.errors import InputError
from topoaudit.model.values import Failed, Unsupported, absent_from_dict, absent_to_dict

T = TypeVar("T")

MAX_DEPTH = 64
"""Nesting allowed inside a free-form value (a finding's evidence, a report's extras); topoaudit writes a few."""
INT_LIMIT = 2**64
"""No count, size or index topoaudit records reaches 2**64; a larger integer is damage, not a figure."""
NOT_FINITE_SOURCE = "json"


class DecodeError(ValueError):
    """The data does not fit the expected shape; the message names the field path."""


def read_json(text: str, name: str, what: str) -> Any:
    """Read a saved JSON document; InputError with one sentence for any text ``json.loads`` refuses.

    ``what`` names the document the user was meant to give ("report.json", "snapshot").
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}: not JSON (line {exc.lineno}: {exc.msg}); give a topoaudit {what}") from None
    except RecursionError:
        raise InputError(
            f"{name}: the JSON is nested more than a thousand levels deep; a topoaudit {what} nests a few, "
            "so this is not one"
        ) from None
    except ValueError:  # an integer literal longer than Python converts (4,300 digits)
        raise InputError(
            f"{name}: the JSON holds an integer thousands of digits long; no figure in a topoaudit {what} is, "
            "so this is not one"
        ) from None


def shown(data: Any, limit: int = 60) -> str:
    """Quote ``data`` for an error sentence: its ``repr``, which escapes control characters, cut to ``limit``."""
    if isinstance(data, int) and not isinstance(data, bool) and not -INT_LIMIT < data < INT_LIMIT:
        return f"an integer of {len(str(abs(data)))} digits"
    text = repr(data) if not isinstance(data, (dict, list)) or len(data) < 8 else f"a {type(data).__name__}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def not_finite(value: float) -> Failed:
    """Return the absent value a NaN or infinite float is written as."""
    return Failed(NOT_FINITE_SOURCE, f"not a finite number ({value})")


def encode(value: Any) -> Any:
    """Dataclass tree -> JSON-ready structure."""
    encoder = _ENCODERS.get(type(value))
    if encoder is None:
        encoder = _ENCODERS[type(value)] = _encoder_for(type(value))
    return encoder(value)


def _same(value: Any) -> Any:
    return value


def _encode_float(value: float) -> Any:
    return value if value - value == 0.0 else absent_to_dict(not_finite(value))


def _encode_absent(value: Any) -> Any:
    return absent_to_dict(value)


def _encode_sequence(value: Any) -> Any:
    return [encode(v) for v in value]


def _encode_mapping(value: Any) -> Any:
    return {str(k): encode(v) for k, v in value.items()}


def _encoder_for(cls: type) -> Callable[[Any], Any]:
    """Choose how to encode every value of type ``cls``.

    Decided once per type, as a report holds many thousands of links and GPUs of the same few types.
    """
    if cls is float:
        return _encode_float
    if cls in (str, bool, int, type(None)):
        return _same
    if cls in (Unsupported, Failed):
        return _encode_absent
    if dataclasses.is_dataclass(cls):
        return _dataclass_encoder(cls)
    if issubclass(cls, enum.IntEnum):
        return lambda value: value.name
    if issubclass(cls, enum.Enum):
        return lambda value: value.value
    if issubclass(cls, (tuple, list, frozenset, set)):
        return _encode_sequence
    if issubclass(cls, dict):
        return _encode_mapping
    if issubclass(cls, float):  # a subclass of a scalar (not an enum) is written as its value
        return _encode_float
    if issubclass(cls, (str, int)):
        return _same
    return _same


_ENCODERS: dict[type, Callable[[Any], Any]] = {}
_PLAIN = frozenset((str, int, bool, type(None)))  # a float is checked: NaN and infinity are not JSON


def _dataclass_encoder(cls: type) -> Callable[[Any], Any]:
    """Compile one encoding function per dataclass, as ``dataclasses`` builds ``__init__``.

    A field declared as a plain type (str, int, float, bool) is copied without a call when it holds one, every
    other field goes through :func:`encode`. A link or a GPU is then encoded in one call instead of one per field.
    """
    names = [f.name for f in dataclasses.fields(cls)]
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # a hint that does not resolve: every field through encode()
        hints = {}
    members = []
    for name in names:
        if not name.isidentifier():
            return lambda value: {n: encode(getattr(value, n)) for n in names}
        if hints.get(name) in _PLAIN:
            members.append(f"{name!r}: (x if (x := value.{name}).__class__ in plain else encode(x))")
        elif hints.get(name) is float:  # x - x is 0.0 for every finite float, NaN otherwise
            members.append(f"{name!r}: (x if (x := value.{name}).__class__ is float and x - x == 0.0 else encode(x))")
        else:
            members.append(f"{name!r}: encode(value.{name})")
    source = "def encode_fields(value):\n    return {" + ", ".join(members) + "}\n"
    scope: dict[str, Any] = {"encode": encode, "plain": _PLAIN}
    exec(compile(source, f"<encoder for {cls.__qualname__}>", "exec"), scope)
    encoder: Callable[[Any], Any] = scope["encode_fields"]
    return encoder


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def decode(tp: Any, data: Any, path: str = "$") -> Any:
    """JSON structure -> instance of type ``tp`` (a dataclass, a union, a tuple, a scalar).

    A decoder compiled once per type reads the data; where it refuses, the field-by-field reading below
    runs again to name the field path in the error (the fast one builds no paths).
    """
    try:
        fast = _DECODERS[tp]
    except KeyError:
        fast = _DECODERS[tp] = _decoder_for(tp)
    except TypeError:  # an unhashable type expression
        return _decode(tp, data, path)
    try:
        return fast(data)
    except DecodeError:
        return _decode(tp, data, path)


def _decode(tp: Any, data: Any, path: str) -> Any:
    """Decode with field paths in every error (the reference :func:`_decoder_for` follows)."""
    origin = typing.get_origin(tp)
    if tp is Any:
        why = _unbounded(data)
        if why:
            raise DecodeError(f"{path}: {why}")
        return data
    if origin in (Union, types.UnionType):
        absent = absent_from_dict(data)
        options = typing.get_args(tp)
        if absent is not None and type(absent) in options:
            return absent
        errors = []
        for option in options:
            if option in (Unsupported, Failed) or (option is type(None) and data is not None):
                continue
            try:
                return _decode(option, data, path)
            except DecodeError as exc:
                errors.append(str(exc))
        raise DecodeError(f"{path}: {shown(data)} fits none of {tp}" + (f" ({errors[0]})" if errors else ""))
    if tp is type(None):
        if data is not None:
            raise DecodeError(f"{path}: expected null")
        return None
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(data, list):
            raise DecodeError(f"{path}: expected a list, got {type(data).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{path}[{k}]") for k, v in enumerate(data))
        if len(args) != len(data):
            raise DecodeError(f"{path}: expected {len(args)} items, got {len(data)}")
        return tuple(_decode(a, v, f"{path}[{k}]") for k, (a, v) in enumerate(zip(args, data, strict=True)))
    if origin is dict:
        key_t, val_t = typing.get_args(tp)
        if not isinstance(data, dict):
            raise DecodeError(f"{path}: expected an object")
        return {_decode(key_t, k, path): _decode(val_t, v, f"{path}.{k}") for k, v in data.items()}
    if isinstance(tp, type) and issubclass(tp, enum.IntEnum):
        try:
            return tp[data]
        except (KeyError, TypeError) as exc:
            raise DecodeError(f"{path}: unknown {tp.__name__} {shown(data)}") from exc
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(data)
        except (ValueError, TypeError) as exc:
            raise DecodeError(f"{path}: unknown {tp.__name__} {shown(data)}") from exc
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise DecodeError(f"{path}: expected an object for {tp.__name__}")
        hints = _hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name in data:
                kwargs[f.name] = _decode(hints[f.name], data[f.name], f"{path}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise DecodeError(f"{path}: missing field {f.name!r}")
        return tp(**kwargs)
    if tp is float and isinstance(data, (int, float)) and not isinstance(data, bool):
        return _float(data)
    if tp is float and _is_absent(data):
        return _not_finite_back(data)
    if tp is int and type(data) is int and not -INT_LIMIT < data < INT_LIMIT:
        raise DecodeError(f"{path}: {shown(data)} is beyond any count, size or index")
    if tp in (int, str, bool) and type(data) is tp:
        return data
    raise DecodeError(f"{path}: expected {getattr(tp, '__name__', tp)}, got {shown(data)}")


def _float(data: int | float) -> float:
    try:
        return float(data)
    except OverflowError:  # an integer beyond the largest float
        return math.inf if data > 0 else -math.inf


_NOT_FINITE = {f"not a finite number ({v})": v for v in (math.inf, -math.inf)}


def _not_finite_back(data: dict[str, Any]) -> float:
    """Read back a plain float field written as absent because it was not finite.

    An infinity comes back as the infinity it was, anything else as NaN (a figure the report does not have).
    """
    return _NOT_FINITE.get(data["reason"], math.nan) if data["reason"].__class__ is str else math.nan


def _is_absent(data: Any) -> bool:
    return isinstance(data, dict) and data.get("status") in _ABSENT_STATUS and "reason" in data


def _unbounded(data: Any) -> str:
    """Say why a free-form value cannot be rendered safely ("" when it can).

    It may nest past :data:`MAX_DEPTH` or hold an integer past :data:`INT_LIMIT`. Walked with a stack, not
    recursion: the depth is what is checked.
    """
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        kind = value.__class__
        if kind is dict:
            children: Any = value.values()
        elif kind is list:
            children = value
        elif kind is int and not -INT_LIMIT < value < INT_LIMIT:
            return f"{shown(value)} is beyond any figure"
        else:
            continue
        if depth > MAX_DEPTH:
            return f"nested more than {MAX_DEPTH} levels deep"
        stack.extend((child, depth + 1) for child in children)
    return ""


def _bounded_any(data: Any) -> Any:
    if data.__class__ in (dict, list, int) and _unbounded(data):
        raise _REFUSED
    return data


# --- compiled decoders: the same rules as _decode, decided once per type ----------------------------

_Decoder = Callable[[Any], Any]
_DECODERS: dict[Any, _Decoder] = {}


class _Refused(DecodeError):
    """Raised by a compiled decoder, without a message: :func:`decode` reads again with paths to say where."""


_REFUSED = _Refused


def _decoder(tp: Any) -> _Decoder:
    try:
        return _DECODERS[tp]
    except KeyError:
        found = _DECODERS[tp] = _decoder_for(tp)
        return found
    except TypeError:  # an unhashable type expression: read it the slow way
        return lambda data: _decode(tp, data, "$")


def _decoder_for(tp: Any) -> _Decoder:
    """One function decoding every value of type ``tp`` exactly as :func:`_decode` does, minus the paths."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return _bounded_any
    if origin in (Union, types.UnionType):
        return _union_decoder(tp)
    if tp is type(None):

        def decode_none(data: Any) -> Any:
            if data is not None:
                raise _REFUSED
            return None

        return decode_none
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return _sequence_decoder(args[0])
        return _fixed_tuple_decoder(args)
    if origin is dict:
        key_t, val_t = typing.get_args(tp)
        return _dict_decoder(key_t, val_t)
    if isinstance(tp, type) and issubclass(tp, enum.IntEnum):
        by_name = tp.__getitem__

        def decode_int_enum(data: Any) -> Any:
            try:
                return by_name(data)
            except (KeyError, TypeError):  # TypeError: an object or a list where a name belongs
                raise _REFUSED from None

        return decode_int_enum
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        enum_type = tp

        def decode_enum(data: Any) -> Any:
            try:
                return enum_type(data)
            except (ValueError, TypeError):
                raise _REFUSED from None

        return decode_enum
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass_decoder(tp)
    if tp is float:

        def decode_float(data: Any) -> Any:
            kind = data.__class__
            if kind is float:
                return data
            if isinstance(data, (int, float)) and not isinstance(data, bool):
                return _float(data)
            if _is_absent(data):
                return _not_finite_back(data)
            raise _REFUSED

        return decode_float
    if tp is int:

        def decode_int(data: Any) -> Any:
            if data.__class__ is int and -INT_LIMIT < data < INT_LIMIT:
                return data
            raise _REFUSED

        return decode_int
    if tp in (str, bool):
        scalar = tp

        def decode_scalar(data: Any) -> Any:
            if type(data) is scalar:
                return data
            raise _REFUSED

        return decode_scalar

    def refuse(data: Any) -> Any:
        raise _REFUSED

    return refuse


_ABSENT_STATUS = ("unsupported", "failed")
_ABSENTS: dict[tuple[str, str, str], Unsupported | Failed] = {}


def _absent(data: dict[str, Any]) -> Unsupported | Failed:
    """``absent_from_dict`` of an absent value's dict, shared: a report repeats a few reasons many times."""
    source, reason = data.get("source", ""), data["reason"]
    if source.__class__ is not str or reason.__class__ is not str:
        return absent_from_dict(data)  # type: ignore[return-value]
    key = (data["status"], source, reason)
    found = _ABSENTS.get(key)
    if found is None:
        found = absent_from_dict(data)
        assert found is not None
        if len(_ABSENTS) < 4096:
            _ABSENTS[key] = found
    return found


def _union_decoder(tp: Any) -> _Decoder:
    options = typing.get_args(tp)
    takes_absent = any(o in (Unsupported, Failed) for o in options)
    takes_none = type(None) in options
    tried = [o for o in options if o not in (Unsupported, Failed) and o is not type(None)]
    if takes_absent and len(tried) == 1 and tried[0] in (str, int, bool, float):
        return _probed_scalar_decoder(tried[0], options, takes_none)
    decoders: list[_Decoder] = []

    def decode_union(data: Any) -> Any:
        if takes_absent and isinstance(data, dict) and data.get("status") in _ABSENT_STATUS and "reason" in data:
            absent = _absent(data)
            if type(absent) in options:
                return absent
        if data is None and takes_none:
            return None
        if not decoders:
            decoders.extend(_decoder(o) for o in tried)
        for option_decoder in decoders:
            try:
                return option_decoder(data)
            except DecodeError:
                continue
        raise _REFUSED

    return decode_union


def _probed_scalar_decoder(scalar: type, options: tuple[Any, ...], takes_none: bool) -> _Decoder:
    """Decode a measured or absent scalar (``Probed[float]``), the most common field of a report.

    Its value is checked first, by class alone, then the absent value: the general union decoder's answers, sooner.
    """
    as_float, as_int = scalar is float, scalar is int

    def decode_probed(data: Any) -> Any:
        kind = data.__class__
        if kind is scalar:
            if as_int and not -INT_LIMIT < data < INT_LIMIT:  # the slow path names the field
                raise _REFUSED
            return data
        if kind is dict:
            status = data.get("status")
            if (status == "unsupported" or status == "failed") and "reason" in data:
                key = (status, data.get("source", ""), data["reason"])
                known = _ABSENTS.get(key) if key[1].__class__ is str and key[2].__class__ is str else None
                absent = known or _absent(data)
                if type(absent) in options:
                    return absent
            raise _REFUSED
        if as_float and kind is int:
            return _float(data)
        if data is None and takes_none:
            return None
        raise _REFUSED

    return decode_probed


def _sequence_decoder(item_t: Any) -> _Decoder:
    item: list[_Decoder] = []

    def decode_sequence(data: Any) -> Any:
        if not isinstance(data, list):
            raise _REFUSED
        if not item:
            item.append(_decoder(item_t))
        one = item[0]
        return tuple([one(v) for v in data])

    return decode_sequence


def _fixed_tuple_decoder(args: tuple[Any, ...]) -> _Decoder:
    items: list[_Decoder] = []

    def decode_fixed(data: Any) -> Any:
        if not isinstance(data, list) or len(args) != len(data):
            raise _REFUSED
        if not items:
            items.extend(_decoder(a) for a in args)
        return tuple([d(v) for d, v in zip(items, data, strict=True)])

    return decode_fixed


def _dict_decoder(key_t: Any, val_t: Any) -> _Decoder:
    pair: list[_Decoder] = []

    def decode_dict(data: Any) -> Any:
        if not isinstance(data, dict):
            raise _REFUSED
        if not pair:
            pair.extend((_decoder(key_t), _decoder(val_t)))
        key, value = pair
        return {key(k): value(v) for k, v in data.items()}

    return decode_dict


def _dataclass_decoder(cls: Any) -> _Decoder:
    """Compile one decoding function per dataclass, at its first value.

    Its hints may name types bound later, or the class itself. A field declared str, int, bool or float is
    checked inline, without a call.
    """
    compiled: list[_Decoder] = []

    def decode_dataclass(data: Any) -> Any:
        if not compiled:
            compiled.append(_compile_dataclass(cls))
        return compiled[0](data)

    return decode_dataclass


def _compile_dataclass(cls: Any) -> _Decoder:
    hints = _hints(cls)
    scope: dict[str, Any] = {"cls": cls, "refused": _REFUSED, "dict": dict, "float": float, "str": str}
    scope.update(int=int, bool=bool, isinstance=isinstance, decode_float=_decoder(float), limit=INT_LIMIT)
    lines = ["def decode_fields(data):", "    if not isinstance(data, dict):", "        raise refused", "    kw = {}"]
    for k, f in enumerate(dataclasses.fields(cls)):
        if not f.name.isidentifier():
            return _plain_dataclass_decoder(cls)
        hint = hints[f.name]
        lines.append(f"    if {f.name!r} in data:")
        lines.append(f"        x = data[{f.name!r}]")
        if hint in (str, bool):
            lines.append(f"        if x.__class__ is not {hint.__name__}:")
            lines.append("            raise refused")
            lines.append(f"        kw[{f.name!r}] = x")
        elif hint is int:
            lines.append("        if x.__class__ is not int or not -limit < x < limit:")
            lines.append("            raise refused")
            lines.append(f"        kw[{f.name!r}] = x")
        elif hint is float:
            lines.append(f"        kw[{f.name!r}] = x if x.__class__ is float else decode_float(x)")
        else:
            scope[f"field_{k}"] = _decoder(hint)
            lines.append(f"        kw[{f.name!r}] = field_{k}(x)")
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            lines.append("    else:")
            lines.append("        raise refused")
    lines.append("    return cls(**kw)")
    exec(compile("\n".join(lines) + "\n", f"<decoder for {cls.__qualname__}>", "exec"), scope)
    decoder: _Decoder = scope["decode_fields"]
    return decoder


def _plain_dataclass_decoder(cls: Any) -> _Decoder:
    hints = _hints(cls)
    plan = [
        (f.name, _decoder(hints[f.name]), f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
        for f in dataclasses.fields(cls)
    ]

    def decode_fields(data: Any) -> Any:
        if not isinstance(data, dict):
            raise _REFUSED
        kwargs = {}
        for name, field_decoder, required in plan:
            if name in data:
                kwargs[name] = field_decoder(data[name])
            elif required:
                raise _REFUSED
        return cls(**kwargs)

    return decode_fields
