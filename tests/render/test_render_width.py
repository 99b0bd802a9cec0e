"""The console at the width it is given: nothing cut without a word, on real captures at 80 and 120 columns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from topoaudit.catalog import find_gpu
from topoaudit.model.plan import MachineDomains, PlanRequest
from topoaudit.model.report import AuditOptions, Report
from topoaudit.pipeline import analyze
from topoaudit.plan.sizing import plan_deployment
from topoaudit.readers import load_path
from topoaudit.render import RenderOptions, render
from topoaudit.render.console import plan_section

FIXTURES = Path(__file__).parents[1] / "fixtures" / "render"
TWENTY_COLUMNS = FIXTURES / "topo-h100-8gpu-12nic-numaoff-2.txt"  # 8 GPUs and 12 NICs
EIGHT_GPUS = FIXTURES / "topo-8xh100nvl-nv12-pairs-2nic-sglang-1.txt"
NCCL_TESTS = FIXTURES / "nccltest-8x5090-p2p-patched-driver-nofooter-1.txt"
WIDTHS = (80, 120)


def _report(path: Path) -> Report:
    loaded = load_path(str(path))
    return analyze(
        loaded.machine,
        source=loaded.source,
        options=AuditOptions(tp=8),
        input_issues=loaded.issues,
        bench=loaded.bench,
        extras=loaded.extras,
        generated_at="2026-01-01T00:00:00+00:00",
    )


def _console(report: Report, width: int) -> str:
    return render(report, "console", RenderOptions(width=width))


def _fits(text: str, width: int) -> None:
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    assert "…" not in text  # rich's mark for a cut cell


def _matrix_blocks(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """(column labels, rows of cells) of every block of the link matrix, as printed."""
    blocks = []
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("Link matrix"):
            head = lines[k + 1].split()
            rows = []
            for row in lines[k + 2 :]:
                cells = row.split()
                if len(cells) != len(head) + 1 or not re.match(r"(GPU|NIC)\d+$", cells[0]):
                    break
                rows.append(cells)
            blocks.append((head, rows))
    return blocks


@pytest.mark.parametrize("width", WIDTHS)
def test_a_twenty_column_matrix_is_split_into_blocks_not_cut(width: int) -> None:
    report = _report(TWENTY_COLUMNS)
    labels = [g.label for g in report.machine.gpus] + [n.label for n in report.machine.nics]
    assert len(labels) == 20
    text = _console(report, width)
    _fits(text, width)
    blocks = _matrix_blocks(text)
    assert len(blocks) >= 2  # 20 columns of 6 characters and the row labels exceed 120
    assert [label for head, _ in blocks for label in head] == labels  # every column once, in order
    for head, rows in blocks:
        assert [r[0] for r in rows] == labels  # every row in every block
        for row in rows:
            for column, code in zip(head, row[1:], strict=True):
                link = report.machine.link(row[0], column)
                assert code == ("X" if row[0] == column else link.code if link else "?")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_real_eight_gpu_box_fits(width: int) -> None:
    report = _report(EIGHT_GPUS)
    text = _console(report, width)
    _fits(text, width)
    blocks = _matrix_blocks(text)
    assert len(blocks) == 1 and len(blocks[0][0]) == 10  # 8 GPUs and 2 NICs fit at 80
    for domain in ("{0,1}", "{2,3}", "{4,5}", "{6,7}"):
        assert domain in text


@pytest.mark.parametrize("width", WIDTHS)
def test_an_imported_nccl_tests_table_keeps_every_number(width: int) -> None:
    report = _report(NCCL_TESTS)
    text = _console(report, width)
    _fits(text, width)
    rows = [line.split() for line in NCCL_TESTS.read_text().splitlines() if re.match(r"\s+\d+\s+\d+\s+float", line)]
    assert len(rows) == 25
    for cells in rows:
        size, time_us, busbw = cells[0], cells[5], cells[7]
        assert re.search(rf"│ {size}\s+│.*│ {re.escape(time_us)}\s+│.*│ {re.escape(busbw)}\s+│", text), cells
    left_out = re.search(r"left out at (\d+) columns: (.*?) \(", text.replace("\n", " "))
    if width == 80:  # the in-place columns do not fit beside the out-of-place ones: named, not cut
        assert left_out and left_out.group(1) == "80" and "in-place" in left_out.group(2)
    else:
        assert left_out is None and text.count("in-place") == 3


@pytest.mark.parametrize("width", WIDTHS)
def test_plans_follow_the_width(width: int) -> None:
    spec = find_gpu("H200 NVL")
    assert spec is not None
    machine = MachineDomains("example h200-nvl-split", ((0, 1, 2, 3), (4, 5, 6, 7)), "NVIDIA H200 NVL")
    plan = plan_deployment(PlanRequest(params_b=1600, precision="int4"), spec, machine)
    assert plan.alternatives
    buffer = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    buffer.print(plan_section(plan))
    text = buffer.export_text()
    _fits(text, width)
    words = set(re.findall(r"[\w.+-]+", text))
    for alternative in plan.alternatives:
        missing = [w for w in re.findall(r"[\w.+-]+", alternative.summary + " " + alternative.cost) if w not in words]
        assert not missing, (alternative.summary, missing)
