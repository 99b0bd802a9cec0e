"""Stopping `topoaudit bench` as CI runners, Slurm's scancel, Kubernetes (SIGTERM) and a user (Ctrl-C) do:
every rank ends, what was measured is written, the exit code is 130 (interrupted), the finding is
bench-incomplete (a cancelled run, not a faulty box). Real gloo ranks, the real command line.

The signal is sent at a moment the test observes (ranks started; a measured row reported on stderr),
never after a fixed sleep."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

pytestmark = pytest.mark.slow

ENV = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1"}
INTERRUPTED = 130


def _group_members(pgid: int) -> set[int]:
    """Live (non-zombie) processes of a process group, from /proc."""
    members = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) ": state ppid pgrp ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.add(int(entry))
    return members


def _wait_for(what: str, check, timeout_s: float = 90.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Bench:
    """`python -m topoaudit bench` in its own process group, its stderr collected in a file."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.report = tmp_path / "report.json"
        self.stderr_path = tmp_path / "stderr.txt"
        self.stderr_file = self.stderr_path.open("w")
        cmd = [sys.executable, "-m", "topoaudit", "bench", "--backend", "gloo", "--nproc", "2",
               "--format", "json", "-o", str(self.report), *args]  # fmt: skip
        self.proc = subprocess.Popen(
            cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=self.stderr_file, start_new_session=True
        )
        self.seen: set[int] = set()

    def ranks_started(self) -> bool:
        self.seen |= _group_members(self.proc.pid) - {self.proc.pid}
        return len(self.seen) >= 2

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def stop(self, sig: int) -> int:
        self.seen |= _group_members(self.proc.pid)
        os.kill(self.proc.pid, sig)
        try:
            return self.proc.wait(timeout=60)
        finally:
            self.stderr_file.close()

    def left_running(self, within_s: float = 5.0) -> set[int]:
        """Processes of the run still alive ``within_s`` seconds after the command ended."""
        deadline = time.monotonic() + within_s
        alive = _group_members(self.proc.pid) | {p for p in self.seen if Path(f"/proc/{p}").exists()}
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            alive = {p for p in alive if _alive(p)}
        return alive

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for pid in _group_members(self.proc.pid):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"


def _row_reported(bench: Bench) -> bool:
    return "measured (last:" in bench.stderr()


@pytest.fixture
def bench_run(tmp_path: Path):  # type: ignore[no-untyped-def]
    runs: list[Bench] = []

    def start(*args: str) -> Bench:
        runs.append(Bench(tmp_path, *args))
        return runs[-1]

    yield start
    for run in runs:
        run.kill()


def test_sigterm_while_ranks_start_ends_every_rank_and_writes_the_report(bench_run) -> None:  # type: ignore[no-untyped-def]
    bench = bench_run("--max-bytes", "64M")
    _wait_for("the ranks to be spawned", bench.ranks_started)
    code = bench.stop(signal.SIGTERM)
    assert code == INTERRUPTED, bench.stderr()
    assert not bench.left_running(), "processes of the run outlived it"
    doc = json.loads(bench.report.read_text())
    assert doc["gate"]["exit_code"] == INTERRUPTED
    assert any(e["kind"] == "interrupted" and "SIGTERM" in e["message"] for e in doc["bench"]["errors"])
    codes = {f["code"] for f in doc["findings"]}
    assert "bench-incomplete" in codes and "bench-rank-failed" not in codes
    assert "Traceback" not in bench.stderr()


def test_sigterm_after_a_measured_row_keeps_the_rows_and_ends_every_rank(bench_run) -> None:  # type: ignore[no-untyped-def]
    bench = bench_run("--max-bytes", "256M")
    _wait_for("a measured row", lambda: _row_reported(bench))
    bench.ranks_started()
    code = bench.stop(signal.SIGTERM)
    assert code == INTERRUPTED, bench.stderr()
    assert not bench.left_running(), "processes of the run outlived it"
    doc = json.loads(bench.report.read_text())
    rows = doc["bench"]["groups"][0]["rows"]
    assert rows and rows[0]["size_bytes"] == 8, "the rows measured before SIGTERM are in the report"
    assert doc["bench"]["status"] == "partial"
    incomplete = [f for f in doc["findings"] if f["code"] == "bench-incomplete"]
    assert incomplete and f"{len(rows)} measured row(s)" in incomplete[0]["message"]
    assert not [f for f in doc["findings"] if f["code"] in ("bench-rank-failed", "bench-timeout")]


def test_ctrl_c_after_a_measured_row_is_an_incomplete_run_not_a_failed_rank(bench_run) -> None:  # type: ignore[no-untyped-def]
    bench = bench_run("--max-bytes", "256M")
    _wait_for("a measured row", lambda: _row_reported(bench))
    bench.ranks_started()
    code = bench.stop(signal.SIGINT)
    assert code == INTERRUPTED, bench.stderr()
    assert not bench.left_running(), "ranks left running"
    doc = json.loads(bench.report.read_text())
    assert doc["bench"]["groups"][0]["rows"], "rows measured before Ctrl-C are kept"
    found = {f["code"]: f["severity"] for f in doc["findings"]}
    assert found.get("bench-incomplete") == "warn" and "bench-rank-failed" not in found
    assert doc["gate"]["exit_code"] == INTERRUPTED and doc["gate"]["incomplete"] is True


def test_ranks_do_not_outlive_a_killed_bench(bench_run) -> None:  # type: ignore[no-untyped-def]
    """SIGKILL cannot be handled (the OOM killer, a runner's last resort): ranks still starting would wait out
    the store connect as orphans; they end with their parent instead."""
    bench = bench_run("--max-bytes", "256M")
    _wait_for("the ranks to be spawned", bench.ranks_started)
    assert bench.stop(signal.SIGKILL) == -signal.SIGKILL
    assert not bench.left_running(), "ranks outlived the killed bench"
