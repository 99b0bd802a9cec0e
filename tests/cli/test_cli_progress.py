"""The bench's progress: on a terminal a bar that shows no count until the ranks say how many steps there
are; in a log (no terminal) plain lines that end with the final count."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from topoaudit.bench.launch import LineProgress
from topoaudit.cli.options import progress_bar


def _shown(bar: object) -> str:
    out = io.StringIO()
    Console(file=out, width=100, force_terminal=True, color_system=None).print(bar.get_renderable())  # type: ignore[attr-defined]
    return out.getvalue()


def test_the_bar_shows_no_count_while_the_ranks_start_then_done_of_total() -> None:
    bar, update = progress_bar()
    starting = _shown(bar)
    assert "starting ranks" in starting
    assert "None" not in starting and "/" not in starting
    update(3, 18, "all 1 KiB")
    moving = _shown(bar)
    assert "3/18" in moving and "all 1 KiB" in moving


def test_a_step_name_with_brackets_is_shown_as_it_is() -> None:
    bar, update = progress_bar()
    update(1, 4, "tp=2 [0,1]")
    assert "tp=2 [0,1]" in _shown(bar)


def test_log_lines_end_with_the_final_count_even_within_the_interval() -> None:
    out = io.StringIO()
    progress = LineProgress(out, every_s=3600.0)
    for done in range(1, 19):
        progress(done, 18, f"step {done}")
    assert out.getvalue().splitlines() == [
        "topoaudit: bench 1/18 measured (last: step 1)",
        "topoaudit: bench 18/18 measured (last: step 18)",
    ]


def test_a_bench_run_without_a_terminal_prints_its_final_count(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    report = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, "-m", "topoaudit", "bench", "--backend", "gloo", "--nproc", "2", "--max-bytes", "64K",
         "--format", "json", "-o", str(report)],
        capture_output=True, text=True, timeout=240, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    counts = [tuple(map(int, m)) for m in re.findall(r"topoaudit: bench (\d+)/(\d+) measured", done.stderr)]
    assert counts, done.stderr
    last_done, total = counts[-1]
    assert last_done == total > 1  # every step measured, and the log says so
    assert "None" not in done.stderr
