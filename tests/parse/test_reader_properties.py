"""Properties of the readers of saved and captured files: any input either loads or is refused with InputError
(exit 4), never another exception, in a sentence without control characters.

NCCL XML: the real and constructed topology files, each with one to three of its elements or attributes
damaged (an attribute set to a value of any shape or removed, an element removed, doubled or moved under
another) or its text cut short, and what loads is judged and written as JSON like any input. Saved reports
and snapshots: their JSON text cut, spliced or given odd numbers and nesting.
"""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import report_samples as rs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topoaudit.errors import InputError
from topoaudit.model.report import SourceInfo, report_from_json
from topoaudit.parse.nccl_xml import parse_nccl_xml
from topoaudit.parse.text import decode_capture, printable
from topoaudit.pipeline import analyze
from topoaudit.probe.snapshot import snapshot_from_json
from topoaudit.render import render

CAPTURES = Path(__file__).parents[1] / "fixtures" / "captures"
XML_FILES = sorted(
    [p for p in CAPTURES.glob("ncclxml-*") if "graph" not in p.name] + list((CAPTURES / "provider").glob("*.xml"))
)
SNAPSHOT = Path(__file__).parents[1] / "fixtures" / "fleet" / "snapshot-h200.json"

VALUES = st.sampled_from(
    ["", "0", "-1", "18", "19", "999999999999999999999", "0x10", "nan", "inf", "1e308", "x", "0000:18:00:00.0",
     "fffffff:ffff:ff", "0x068000", "0x030200", "0x060400", "0x020700", "\u202e", "f" * 3000]
) | st.text(max_size=12)  # fmt: skip
ATTRIBUTES = st.sampled_from(
    ["count", "dev", "busid", "class", "target", "tclass", "sm", "rank", "numaid", "affinity", "link_width",
     "link_speed", "speed", "bw", "host_hash", "gdr", "name", "version"]
)  # fmt: skip


@cache
def _xml(k: int) -> str:
    return XML_FILES[k].read_text(encoding="utf-8")


Op = tuple[str, int, str, str]  # (what, element number, attribute, value); a move's target in the value
XmlDamage = tuple[int, int, tuple[Op, ...]]  # (file, where its text is cut or -1, what is done to its tree)


@st.composite
def xml_damages(draw: st.DrawFn) -> XmlDamage:
    """A real topology file with one to three elements or attributes damaged, or its text cut short; shown as
    such when a case fails, not as the whole file."""
    k = draw(st.integers(0, len(XML_FILES) - 1))
    if draw(st.integers(0, 9)) == 0:
        return k, draw(st.integers(0, len(_xml(k)))), ()
    ops = tuple(
        (
            draw(st.sampled_from(["set", "drop-attribute", "drop", "double", "move"])),
            draw(st.integers(0, 10_000)),
            draw(ATTRIBUTES),
            draw(VALUES) if draw(st.booleans()) else str(draw(st.integers(0, 10_000))),
        )
        for _ in range(draw(st.integers(1, 3)))
    )
    return k, -1, ops


def damaged_xml(damage: XmlDamage) -> str:
    k, cut, ops = damage
    text = _xml(k)
    if cut >= 0:
        return text[:cut]
    root = ET.fromstring(text)
    for what, number, attribute, value in ops:
        elements = list(root.iter())
        element = elements[number % len(elements)]
        parents = {child: parent for parent in root.iter() for child in parent}
        if what == "set":
            element.set(attribute, value)
        elif what == "drop-attribute" and element.attrib:
            del element.attrib[sorted(element.attrib)[number % len(element.attrib)]]
        elif what == "drop" and element in parents:
            parents[element].remove(element)
        elif what == "double" and element in parents:
            parents[element].append(copy.deepcopy(element))
        elif what == "move" and element in parents:
            outside = [e for e in elements if e not in set(element.iter())]
            target = outside[int(value) % len(outside)] if value.isdigit() else outside[0]
            parents[element].remove(element)
            target.append(element)
    return ET.tostring(root, encoding="unicode")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(xml_damages())
def test_any_nccl_xml_is_read_or_refused_and_what_is_read_is_judged_and_written(damage: XmlDamage) -> None:
    try:
        parsed = parse_nccl_xml(damaged_xml(damage), "topo.xml")
    except InputError as exc:
        assert printable(str(exc), 10_000) == str(exc)  # a sentence quoting the file cannot drive a terminal
        return
    if parsed.machine.gpus:
        report = analyze(parsed.machine, source=SourceInfo("nccl-xml", "topo.xml"), input_issues=parsed.input_issues())
        assert json.loads(render(report, "json"))


@cache
def _saved(kind: str) -> str:
    if kind == "report":
        return render(rs.report_of(rs.split_machine(), bench=rs.bench_result()), "json")
    return SNAPSHOT.read_text(encoding="utf-8")


JsonDamage = tuple[str, str, int, str]  # (report | snapshot, cut | insert | replace-number, where, what)


@st.composite
def json_damages(draw: st.DrawFn) -> JsonDamage:
    """A saved report or snapshot cut, spliced, or given a number or nesting no document of ours has."""
    kind = draw(st.sampled_from(["report", "snapshot"]))
    how = draw(st.sampled_from(["cut", "insert", "replace-number"]))
    splice = st.sampled_from(["", "9" * 5000, "[" * 3000, "-1", "NaN", "1e999", '"\\ud800"', "{}", "]", ",", "null"])
    number = st.sampled_from(["9" * 30, "-9" * 20, "1e400", "NaN", "-0", "0.5", "9" * 5000])
    what = draw(number if how == "replace-number" else splice | st.text(max_size=8))
    return kind, how, draw(st.integers(0, len(_saved(kind)))), what


def damaged_json(damage: JsonDamage) -> str:
    kind, how, at, what = damage
    text = _saved(kind)
    if how == "cut":
        return text[:at]
    if how == "insert":
        return text[:at] + what + text[at:]
    digits = [k for k, ch in enumerate(text) if ch.isdigit()]
    k = digits[at % len(digits)]
    return text[:k] + what + text[k + 1 :]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_damages())
def test_any_saved_report_or_snapshot_text_is_read_or_refused(damage: JsonDamage) -> None:
    text = damaged_json(damage)
    try:
        if damage[0] == "report":
            render(report_from_json(text, "r.json"), "json")
        else:
            snapshot_from_json(text, "s.json")
    except InputError as exc:
        assert printable(str(exc), 10_000) == str(exc)
        return


ODD_BYTES = [b"\xff\xfe" + b"x" * 9, b"\xfe\xff\x00", b"\xef\xbb\xbf\xff", b"\x00" * 9, b"\xff\xfe\x00\x00\x00\xd8"]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64) | st.sampled_from(ODD_BYTES))
def test_any_bytes_decode_to_text_for_the_readers(data: bytes) -> None:
    """A capture's bytes in any encoding, or none, become text; the readers then say what they make of it."""
    assert isinstance(decode_capture(data), str)
