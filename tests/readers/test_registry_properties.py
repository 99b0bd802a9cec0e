"""Properties of every reader in the registry (``topoaudit.readers.readers()``): any text either loads or is refused
with InputError (exit 4), never another exception, and whatever loads is judged and renders in every format of
``topoaudit.formats`` without an exception (the JSON report strict JSON).

The inputs look like each reader's own: a real capture it reads (tests/fixtures, the labelled corpus left out)
with one to three lines cut, doubled, swapped, spliced in from another capture, given a number no tool prints
(NaN, inf, 1e308, -5, 400 digits) or a token of any text, or the text cut short; and text of any shape.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topoaudit.app.common import GateRequest, judge
from topoaudit.errors import InputError
from topoaudit.formats import REPORT_FORMATS
from topoaudit.model.facts import Facts
from topoaudit.readers import load_text, reader, readers
from topoaudit.render import render

FIXTURES = Path(__file__).parents[1] / "fixtures"
SEEDS_PER_READER = 4
MAX_SEED_BYTES = 64 * 1024
ODD_NUMBERS = ("nan", "NaN", "inf", "-inf", "1e308", "-5", "0", "-0.0", "9" * 400, "18446744073709551616", "1.2.3", "")
ODD_JSON = ("-1", "1e308", "-1e308", "0", "-0.0", "9" * 400, "0.5", "null", "true", '"x"', "[]", "{}", '"nan"')
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


@cache
def seeds() -> dict[str, tuple[Path, ...]]:
    """Per reader, a few real captures it is the first to recognise: the smallest, the largest and two between."""
    found: dict[str, list[tuple[int, Path]]] = {r.name: [] for r in readers()}
    for path in sorted(FIXTURES.rglob("*")):
        if "real" in path.relative_to(FIXTURES).parts or not path.is_file() or path.stat().st_size > MAX_SEED_BYTES:
            continue
        if path.suffix in (".tsv", ".toml", ".py", ".md", ".gz", ".db", ".sqlite"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        first = next((r for r in readers() if r.sniff(text)), None)
        if first is not None:
            found[first.name].append((path.stat().st_size, path))
    out = {}
    for name, items in found.items():
        ordered = [p for _, p in sorted(items)]
        picks = sorted({round(k * (len(ordered) - 1) / (SEEDS_PER_READER - 1)) for k in range(SEEDS_PER_READER)})
        out[name] = tuple(ordered[k] for k in picks) if ordered else ()
    return out


@cache
def seed_text(name: str, k: int) -> str:
    return seeds()[name][k].read_text(encoding="utf-8")


READERS = sorted(r.name for r in readers())
Op = tuple[str, int, int, str]  # (what, line or place, another line or seed, text)
Damage = tuple[str, int, tuple[Op, ...]]  # (reader, seed, what is done to it)


@st.composite
def damages(draw: st.DrawFn, name: str) -> Damage:
    """A real capture of reader ``name`` with one to three damages; shown as such when a case fails."""
    k = draw(st.integers(0, len(seeds()[name]) - 1))
    ops = []
    for _ in range(draw(st.integers(1, 3))):
        what = draw(st.sampled_from(["cut", "drop", "double", "swap", "number", "splice", "token", "insert"]))
        odd = ODD_JSON if _is_json(seed_text(name, k)) else ODD_NUMBERS
        text = draw(st.sampled_from(odd)) if what == "number" else draw(st.text(max_size=24))
        ops.append((what, draw(st.integers(0, 100_000)), draw(st.integers(0, 100_000)), text))
    return name, k, tuple(ops)


def _is_json(text: str) -> bool:
    return text.lstrip()[:1] in ("{", "[")


def damaged(damage: Damage) -> str:
    """The capture with the damage done; in JSON a number or a string is replaced by JSON, so most still parse."""
    name, k, ops = damage
    text = seed_text(name, k)
    json_text = _is_json(text)
    for what, at, other, value in ops:
        lines = text.splitlines(keepends=True) or [""]
        i, j = at % len(lines), other % len(lines)
        if what == "cut":  # the end lost: kept from half the text to all of it
            text = text[: len(text) // 2 + at % (len(text) - len(text) // 2 + 1)]
            continue
        if what == "token" and json_text:
            spans = list(_JSON_STRING.finditer(text))
            if spans:
                span = spans[at % len(spans)]
                text = text[: span.start()] + json.dumps(value) + text[span.end() :]
            continue
        if what == "drop":
            del lines[i]
        elif what == "double":
            lines.insert(i, lines[i])
        elif what == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif what == "splice":  # a line of another capture of the same kind
            donor = seed_text(name, other % len(seeds()[name])).splitlines(keepends=True) or [""]
            lines.insert(i, donor[at % len(donor)])
        elif what == "insert":
            lines.insert(i, value + "\n")
        else:
            spans = list(_NUMBER.finditer(text)) if what == "number" else list(re.finditer(r"\S+", text))
            if spans:
                span = spans[at % len(spans)]
                text = text[: span.start()] + value + text[span.end() :]
            continue
        text = "".join(lines)
    return text


def _strict_json(text: str) -> object:
    def refuse(constant: str) -> None:
        raise AssertionError(f"bare {constant} in the JSON report")

    return json.loads(text, parse_constant=refuse)


def loads_judges_and_renders(text: str, name: str = "capture.txt") -> None:
    """The property: InputError, or a report that renders in every format."""
    try:
        facts: Facts = load_text(text, name)
        report = judge(facts, GateRequest(), None)
    except InputError:
        return
    for fmt in REPORT_FORMATS:
        rendered = render(report, fmt.name)
        if fmt.name == "json":
            _strict_json(rendered)


def loads_alone(reader_name: str, text: str) -> None:
    """The reader called directly on text it recognises: facts or InputError."""
    own = reader(reader_name)
    if not own.sniff(text):
        return
    try:
        own.load(text, "capture.txt")
    except InputError:
        return


def test_every_reader_has_real_captures_to_start_from() -> None:
    assert {name for name, found in seeds().items() if not found} == set()


@pytest.mark.parametrize("name", READERS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_a_damaged_capture_is_read_or_refused_and_what_is_read_renders_in_every_format(
    name: str, data: st.DataObject
) -> None:
    text = damaged(data.draw(damages(name), label="damage"))
    loads_alone(name, text)
    loads_judges_and_renders(text)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300) | st.sampled_from(READERS).map(lambda n: seed_text(n, 0)[:200]))
def test_any_text_is_read_or_refused(text: str) -> None:
    for name in READERS:
        loads_alone(name, text)
    loads_judges_and_renders(text)
