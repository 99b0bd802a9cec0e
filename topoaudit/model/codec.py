"""Generic JSON codec for the frozen dataclasses of the model.

One encoder and one decoder driven by type hints, so a new field is serialised without extra code and
a saved report decodes back into the very objects the renderers take. Absent values travel as
``{"status": "unsupported"|"failed", "source": ..., "reason": ...}``; enums by value (``PathLevel`` by
name); tuples as lists.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar, Union

from topoaudit.model.values import Failed, Unsupported, absent_from_dict, absent_to_dict

T = TypeVar("T")


class DecodeError(ValueError):
    """The data does not fit the expected shape; the message names the field path."""


def encode(value: Any) -> Any:
    """Dataclass tree -> JSON-ready structure."""
    encoder = _ENCODERS.get(type(value))
    if encoder is None:
        encoder = _ENCODERS[type(value)] = _encoder_for(type(value))
    return encoder(value)


def _same(value: Any) -> Any:
    return value


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
    if cls in (str, bool, float, int, type(None)):
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
    if issubclass(cls, (str, int, float)):  # a subclass of a scalar (not an enum) is written as its value
        return _same
    return _same


_ENCODERS: dict[type, Callable[[Any], Any]] = {}
_PLAIN = frozenset((str, int, float, bool, type(None)))


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
    """JSON structure -> instance of type ``tp`` (a dataclass, a union, a tuple, a scalar)."""
    origin = typing.get_origin(tp)
    if tp is Any:
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
                return decode(option, data, path)
            except DecodeError as exc:
                errors.append(str(exc))
        raise DecodeError(f"{path}: {data!r} fits none of {tp}" + (f" ({errors[0]})" if errors else ""))
    if tp is type(None):
        if data is not None:
            raise DecodeError(f"{path}: expected null")
        return None
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(data, list):
            raise DecodeError(f"{path}: expected a list, got {type(data).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], v, f"{path}[{k}]") for k, v in enumerate(data))
        if len(args) != len(data):
            raise DecodeError(f"{path}: expected {len(args)} items, got {len(data)}")
        return tuple(decode(a, v, f"{path}[{k}]") for k, (a, v) in enumerate(zip(args, data, strict=True)))
    if origin is dict:
        key_t, val_t = typing.get_args(tp)
        if not isinstance(data, dict):
            raise DecodeError(f"{path}: expected an object")
        return {decode(key_t, k, path): decode(val_t, v, f"{path}.{k}") for k, v in data.items()}
    if isinstance(tp, type) and issubclass(tp, enum.IntEnum):
        try:
            return tp[data]
        except KeyError as exc:
            raise DecodeError(f"{path}: unknown {tp.__name__} {data!r}") from exc
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(data)
        except ValueError as exc:
            raise DecodeError(f"{path}: unknown {tp.__name__} {data!r}") from exc
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise DecodeError(f"{path}: expected an object for {tp.__name__}")
        hints = _hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name in data:
                kwargs[f.name] = decode(hints[f.name], data[f.name], f"{path}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise DecodeError(f"{path}: missing field {f.name!r}")
        return tp(**kwargs)
    if tp is float and isinstance(data, (int, float)) and not isinstance(data, bool):
        return float(data)
    if tp in (int, str, bool) and type(data) is tp:
        return data
    raise DecodeError(f"{path}: expected {getattr(tp, '__name__', tp)}, got {data!r}")
