"""Damaged real pastes through ``topoaudit analyze``: never an internal error, never a silent change.

Hypothesis mutates the real pastes of ``tests/fixtures/topo/`` the way pasting and re-typing damage them
(rows deleted or repeated, a cut at any byte, link codes and NVLink counts changed, whitespace changed,
unicode and huge tokens inserted) and runs the console entry point in-process on the result. The contract
a user relies on:

* the exit code is 0-4, never 5 (an internal error) and never a traceback;
* a report (exit 0 or 1) shows the same GPU count and NVLink domains as the undamaged paste, or it carries
  an input issue saying what it recovered or ignored;
* a refusal (exit 4) is one ``topoaudit: error:`` sentence.

The examples are derandomised (the same on every run) and bounded. Every shrunk example that once broke the
contract is kept in ``tests/fixtures/parse/fuzz/`` and replayed by :func:`test_fuzz_regression`.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topoaudit.cli import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
PASTES = sorted((FIXTURES / "topo").glob("topo-*.txt"))
REGRESSIONS = FIXTURES / "parse" / "fuzz"

_CODE = re.compile(r"(?<![\w-])(?:NV\d+|SYS|SOC|NODE|PHB|PXB|PIX|X|HT)(?![\w-])")
_NV_CELL = re.compile(r"(?<![\w-])NV\d+(?![\w-])")
_COUNT = re.compile(r"(?<=NV)\d+")
_SPACE = re.compile(r"[ \t]+")
REPLACEMENT_CODES = [
    "NV0",
    "NV99",
    "NV48",
    "NV19",
    "NV18",
    "NV12",
    "NV1",
    "NV",
    "N",
    "SYS",
    "SOC",
    "PIX",
    "PXB",
    "NODE",
    "PHB",
    "X",
    "HT",
    "OK",
    "GNS",
    "?",
    "NV" + "9" * 5000,
]
# Replacements made in every cell at once (a consistent damage, no mirror to contradict it): none of them
# may turn the paste into a different box without an input issue.
EVERYWHERE = ["NV0", "NV99", "NV48", "NV19", "NV012", "HT", "N", "NV", "NV8", "NV18"]
OPS = ["delete", "repeat", "code", "count", "everywhere", "space", "unicode", "huge", "crlf"]
WHITESPACE = ["", " ", "\t", "  \t ", "\r\n", "\n", "\u00a0", "\u3000", "\x0b"]
HUGE = [
    "A" * 100_000,
    "9" * 5000,
    "NV" + "9" * 5000,
    "0-" + "9" * 30,
    "GPU" + "9" * 40,
    "NIC" + "9" * 5000,
    "\t" * 50_000,
    "0-99999999999",
    "X " * 20_000,
]


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str

    def report(self) -> dict[str, Any]:
        return json.loads(self.stdout)


def analyze(path: Path) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as stop:
        main(["analyze", str(path), "--format", "json"])
    return Outcome(int(stop.value.code or 0), out.getvalue(), err.getvalue())


def topology(report: dict[str, Any]) -> tuple[int, list[list[int]]]:
    """What the contract compares: the GPU count and the NVLink domains of two or more GPUs."""
    return len(report["gpus"]), sorted(d["gpus"] for d in report["domains"] if len(d["gpus"]) > 1)


@functools.cache
def original_topology(name: str) -> tuple[int, list[list[int]]]:
    outcome = analyze(FIXTURES / "topo" / name)
    assert outcome.code in (0, 1), outcome.stderr
    return topology(outcome.report())


def check_contract(outcome: Outcome, original: tuple[int, list[list[int]]], what: str) -> None:
    assert outcome.code in (0, 1, 2, 3, 4), f"exit {outcome.code} after {what}: {outcome.stderr[-2000:]}"
    assert "Traceback" not in outcome.stderr and "internal error" not in outcome.stderr, outcome.stderr[-2000:]
    if outcome.code in (0, 1):
        report = outcome.report()
        if topology(report) != original:
            assert report["input_issues"], (
                f"{what}: topology changed from {original} to {topology(report)} with no input issue"
            )
    else:
        assert outcome.stderr.startswith("topoaudit: error: "), outcome.stderr[-2000:]
        assert outcome.stdout == ""


# --- mutations -------------------------------------------------------------------------------------------


def _pick_match(draw: st.DrawFn, pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    matches = list(pattern.finditer(text))
    return draw(st.sampled_from(matches)) if matches else None


def _splice(text: str, m: re.Match[str] | None, new: str) -> str:
    return text if m is None else text[: m.start()] + new + text[m.end() :]


@st.composite
def damaged_paste(draw: st.DrawFn) -> tuple[str, bytes, list[str]]:
    path = draw(st.sampled_from(PASTES))
    text = path.read_text(encoding="utf-8")
    steps: list[str] = []
    for op in draw(st.lists(st.sampled_from(OPS), min_size=1, max_size=2)):
        lines = text.split("\n")
        if op == "delete":
            i = draw(st.integers(0, len(lines) - 1))
            del lines[i]
            text = "\n".join(lines)
            steps.append(f"deleted line {i + 1}")
        elif op == "repeat":
            i = draw(st.integers(0, len(lines) - 1))
            lines.insert(i, lines[i])
            text = "\n".join(lines)
            steps.append(f"repeated line {i + 1}")
        elif op == "code":
            m = _pick_match(draw, _CODE, text)
            new = draw(st.sampled_from(REPLACEMENT_CODES) | st.text("ABCNOSVXYZ0123456789#", max_size=5))
            text = _splice(text, m, new)
            steps.append(f"cell {m.group() if m else None!r} at {m.start() if m else None} -> {new[:20]!r}")
        elif op == "count":
            m = _pick_match(draw, _COUNT, text)
            new = str(draw(st.sampled_from([0, 19, 48, 99]) | st.integers(0, 120)))
            text = _splice(text, m, new)
            steps.append(f"NV count {m.group() if m else None!r} at {m.start() if m else None} -> {new}")
        elif op == "everywhere":
            m = _pick_match(draw, _NV_CELL, text)
            new = draw(st.sampled_from(EVERYWHERE))
            if m is not None:
                text = re.sub(rf"(?<![\w-]){m.group()}(?![\w-])", new, text)
            steps.append(f"every {m.group() if m else None!r} -> {new!r}")
        elif op == "space":
            m = _pick_match(draw, _SPACE, text)
            new = draw(st.sampled_from(WHITESPACE))
            text = _splice(text, m, new)
            steps.append(f"whitespace at {m.start() if m else None} -> {new!r}")
        elif op == "unicode":
            at = draw(st.integers(0, len(text)))
            new = draw(st.text(min_size=1, max_size=6))
            text = text[:at] + new + text[at:]
            steps.append(f"inserted {new!r} at {at}")
        elif op == "huge":
            at = draw(st.integers(0, len(text)))
            new = draw(st.sampled_from(HUGE))
            text = text[:at] + new + text[at:]
            steps.append(f"inserted {new[:12]!r}... ({len(new)} chars) at {at}")
        else:
            text = text.replace("\n", "\r\n")
            steps.append("CRLF line ends")
    data = text.encode("utf-8")
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(data)))
        data = data[:cut]
        steps.append(f"cut at byte {cut}")
    return path.name, data, steps


@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(damaged_paste())
def test_fuzz_damaged_pastes_keep_the_contract(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, bytes, list[str]]
) -> None:
    name, data, steps = case
    path = tmp_path_factory.getbasetemp() / "fuzz-paste.txt"
    path.write_bytes(data)
    check_contract(analyze(path), original_topology(name), f"{name}: {'; '.join(steps)}")


# --- kept examples ---------------------------------------------------------------------------------------


def _regressions() -> list[dict[str, str]]:
    with (REGRESSIONS / "PROVENANCE.tsv").open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_every_regression_file_has_provenance() -> None:
    listed = sorted(row["file"] for row in _regressions())
    assert listed == sorted(p.name for p in REGRESSIONS.glob("*.txt"))


@pytest.mark.parametrize("row", _regressions(), ids=lambda row: row["file"])
def test_fuzz_regression(row: dict[str, str]) -> None:
    """A shrunk example that once broke the contract, with the outcome it must have now."""
    base = row["source"].removeprefix("constructed by Hypothesis from ")
    outcome = analyze(REGRESSIONS / row["file"])
    check_contract(outcome, original_topology(base), row["file"])
    assert str(outcome.code) == row["exit"], outcome.stderr
    assert row["says"] in (outcome.stderr if outcome.code == 4 else outcome.stdout)
