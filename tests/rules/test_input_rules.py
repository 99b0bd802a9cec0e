"""The input itself: figures no run can print and a size repeated with other figures are damage the report names,
never a PASS; an excerpt's shape (no rank lines, no header line) is said, not called damage."""

from __future__ import annotations

from pathlib import Path

import pytest

from topoaudit.model.report import Report
from topoaudit.pipeline import analyze_facts
from topoaudit.readers import load_text

NCCLTESTS = Path(__file__).parents[1] / "fixtures" / "nccltests"
GH200 = (NCCLTESTS / "nccltest-gh200-alps-2node-1gpu-each-slingshot-1.txt").read_text()
ROW_64M = next(line for line in GH200.split("\n") if line.lstrip().startswith("67108864 "))


def judged(text: str) -> Report:
    return analyze_facts(load_text(text, "paste.txt"))


@pytest.mark.parametrize("busbw", ["nan", "inf", "1e308", "-22.50"])
def test_an_impossible_figure_is_damage_never_a_pass(busbw: str) -> None:
    damaged = GH200.replace(ROW_64M, ROW_64M.replace("  22.50   22.50  ", f"  22.50 {busbw:>7}  ", 1))
    assert damaged != GH200
    report = judged(damaged)
    assert report.gate.verdict == "warn"
    (recovered,) = [f for f in report.findings if f.code == "input-recovered"]
    assert recovered.message.startswith(
        "The input was damaged; 1 place(s) recovered. First, line 18: the row for 67108864"
    )


def test_a_size_repeated_with_other_figures_is_damage_never_a_pass() -> None:
    lines = GH200.split("\n")
    slow = lines[17].replace("22.50   22.50", " 5.62    5.62")
    report = judged("\n".join([*lines[:18], slow, *lines[18:]]))
    assert report.gate.verdict == "warn"
    (recovered,) = [f for f in report.findings if f.code == "input-recovered"]
    assert "67108864 bytes appears twice with other figures" in recovered.message


def test_a_run_without_its_rank_lines_is_an_excerpt_not_damage() -> None:
    lines = GH200.split("\n")
    tail = "\n".join(line for line in lines if "Rank" not in line)
    report = judged(tail)
    assert report.gate.verdict == "pass" and "input-recovered" not in {f.code for f in report.findings}
    assert [i.action for i in report.input_issues] == ["excerpt"]
