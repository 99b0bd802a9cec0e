"""What the bench refuses before any rank starts (usage mistakes: exit 2 with one sentence), and what it says
when more ranks than cores will share the CPU (a warning on the terminal and a finding in the report)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from topoaudit.bench.config import BenchConfig
from topoaudit.bench.launch import oversubscription_warning
from topoaudit.errors import UsageError
from topoaudit.exitcodes import ExitCode

ENV = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1"}


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"min_bytes": 1 << 20, "max_bytes": 64 << 10}, "--min-bytes 1 MiB is above --max-bytes 64 KiB"),
        ({"max_bytes": 0}, "--max-bytes must be a whole number of at least 1, not 0"),
        ({"min_bytes": -8}, "--min-bytes must be a whole number of at least 1, not -8"),
        ({"nproc": -1}, "--nproc must be a whole number of at least 0, not -1"),
        ({"pair_bytes": -1}, "--pair-bytes must be"),
        ({"timeout_s": 0.0}, "--timeout must be a positive number of seconds"),
    ],
)
def test_a_sweep_that_cannot_run_is_a_usage_error(fields: dict[str, int], says: str) -> None:
    with pytest.raises(UsageError, match=says) as refused:
        BenchConfig(**fields)  # type: ignore[arg-type]
    assert refused.value.exit_code == ExitCode.USAGE == 2
    assert str(refused.value).count(".") <= 1 and "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "args",
    [("--min-bytes", "1M", "--max-bytes", "64K"), ("--max-bytes", "0"), ("--min-bytes", "-8")],
    ids=["min-above-max", "max-zero", "negative"],
)
def test_usage_mistakes_on_the_command_line_exit_2_with_one_sentence(args: tuple[str, ...]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "topoaudit", "bench", "--backend", "gloo", *args],
        capture_output=True, text=True, env=ENV, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert done.stdout == ""


def test_the_oversubscription_line_names_ranks_and_cores() -> None:
    assert oversubscription_warning(2, 2) == ""
    line = oversubscription_warning(8, 2)
    assert line.startswith("topoaudit: warning: 8 ranks on 2 CPU core(s)") and "--nproc 2" in line


@pytest.mark.slow
def test_more_ranks_than_cores_warns_on_the_terminal_and_in_the_report(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "topoaudit", "bench", "--backend", "gloo", "--nproc", "2", "--max-bytes", "64K",
         "--format", "json", "-o", str(out)],
        capture_output=True, text=True, env=ENV, timeout=180,
        preexec_fn=lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}),  # one core for the whole run
    )  # fmt: skip
    assert "topoaudit: warning: 2 ranks on 1 CPU core(s)" in done.stderr
    doc = json.loads(out.read_text())
    (found,) = [f for f in doc["findings"] if f["code"] == "bench-oversubscribed"]
    assert found["severity"] == "warn" and found["evidence"]["cpu_cores"] == 1 and found["evidence"]["ranks"] == 2
    assert doc["bench"]["groups"][0]["rows"]
