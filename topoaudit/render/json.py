"""The canonical JSON report (see docs/json.md).

Written exactly as ``json.dumps(..., indent=2, ensure_ascii=False)`` writes it, but several times faster
on a big box: objects and arrays whose members are all plain values (every link, every GPU's list of
CPUs) go through the C encoder in one call each, with the indentation as its separator, instead of the
pure-Python indenting encoder walking a few hundred thousand values.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Callable
from typing import Any

from topoaudit.model.report import Report, report_to_dict
from topoaudit.render import RenderOptions

INDENT = "  "
_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = set(_SCALARS)


def render(report: Report, options: RenderOptions) -> str:
    return dumps(report_to_dict(report)) + "\n"


def dumps(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, byte for byte."""
    out: list[str] = []
    _write(value, 0, out)
    return "".join(out)


@functools.cache
def _flat_encoder(level: int) -> Callable[[Any], str]:
    """The C encoder with the item separator carrying the newline and indentation of ``level + 1``."""
    separator = ",\n" + INDENT * (level + 1)
    return json.JSONEncoder(ensure_ascii=False, separators=(separator, ": ")).encode


_plain = json.JSONEncoder(ensure_ascii=False).encode


def _write(value: Any, level: int, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = INDENT * (level + 1)
        if all(type(v) in _SCALARS for v in value.values()):
            text = _flat_encoder(level)(value)  # '{"a": 1,\n<inner>"b": 2}'
            out.append("{\n" + inner + text[1:-1] + "\n" + INDENT * level + "}")
            return
        out.append("{")
        first = True
        for key, item in value.items():
            out.append(("\n" if first else ",\n") + inner + _plain(_key(key)) + ": ")
            first = False
            _write(item, level + 1, out)
        out.append("\n" + INDENT * level + "}")
        return
    if isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = INDENT * (level + 1)
        if all(type(v) in _SCALARS for v in value):
            text = _flat_encoder(level)(list(value))
            out.append("[\n" + inner + text[1:-1] + "\n" + INDENT * level + "]")
            return
        if _all_flat_objects(value):
            out.append(_flat_objects(value, level))
            return
        out.append("[")
        first = True
        for item in value:
            out.append(("\n" if first else ",\n") + inner)
            first = False
            _write(item, level + 1, out)
        out.append("\n" + INDENT * level + "]")
        return
    out.append(_plain(value))


def _all_flat_objects(value: list[Any] | tuple[Any, ...]) -> bool:
    """Every item a non-empty object whose values are all plain (checked at C speed: 180 000 links)."""
    if set(map(type, value)) != {dict} or not all(value):
        return False
    return set(map(type, itertools.chain.from_iterable(map(dict.values, value)))) <= _SCALAR_TYPES


def _flat_objects(value: list[Any] | tuple[Any, ...], level: int) -> str:
    """An array of non-empty objects of plain values (the links of a box) in one C-encoder call.

    The encoder separates both array items and object members with the members' indentation; the array
    boundaries are then re-indented. A boundary is a closing brace, a newline and an opening brace
    followed by a quote: inside a JSON string a newline is always escaped, so only boundaries match.
    """
    outer, item, member = INDENT * level, INDENT * (level + 1), INDENT * (level + 2)
    text = _flat_encoder(level + 1)(list(value))  # '[{"a": 1,\n<member>"b": 2},\n<member>{"a": ...}]'
    text = text[2:-2].replace("},\n" + member + '{"', "\n" + item + "},\n" + item + "{\n" + member + '"')
    return "[\n" + item + "{\n" + member + text + "\n" + item + "}\n" + outer + "]"


def _key(key: Any) -> str:
    """A key as ``json.dumps`` writes it (it turns numbers, booleans and null into text)."""
    if isinstance(key, str):
        return key
    if key is True or key is False or key is None:
        return json.dumps(key)
    return json.dumps(key) if isinstance(key, float) else str(key)
