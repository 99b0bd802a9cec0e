"""The launcher's own decisions, without starting ranks: how it was started (torchrun, Slurm, or spawning),
signals that ask it to stop, progress lines, cores. (Real processes: test_harness_gloo.py, test_stopping.py.)"""

from __future__ import annotations

import io
import os
import signal

import pytest

from topoaudit.bench.launch import LineProgress, launched_env, stop_signals
from topoaudit.bench.rank import usable_cores
from topoaudit.errors import ConfigError


def test_torchrun_and_slurm_environments_are_joined_and_a_plain_shell_spawns() -> None:
    assert launched_env({}) is None
    torchrun = launched_env({"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "3", "LOCAL_WORLD_SIZE": "4"})
    assert torchrun == {"rank": 3, "world": 8, "local_rank": 3, "local_world": 4, "via": "torchrun"}
    slurm = {"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_LOCALID": "1", "SLURM_NTASKS_PER_NODE": "2(x1)"}
    assert launched_env({**slurm, "MASTER_ADDR": "n1", "MASTER_PORT": "29500"}) == {
        "rank": 1, "world": 2, "local_rank": 1, "local_world": 2, "via": "slurm",
    }  # fmt: skip
    assert launched_env({"SLURM_PROCID": "0", "SLURM_NTASKS": "1"}) is None  # a one-task allocation spawns
    with pytest.raises(ConfigError, match="MASTER_ADDR"):
        launched_env(slurm)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_is_remembered_not_raised_and_the_handlers_are_restored(sig: signal.Signals) -> None:
    before = signal.getsignal(sig)
    with stop_signals() as stop:
        assert stop.signal is None
        os.kill(os.getpid(), sig)  # delivered to this (main) thread: no exception, no exit
        os.kill(os.getpid(), signal.SIGTERM)  # a second signal during the teardown is absorbed
        assert stop.signal == sig
        assert stop.name == ("SIGTERM" if sig == signal.SIGTERM else "Ctrl-C (SIGINT)")
    assert signal.getsignal(sig) == before


def test_progress_lines_show_the_first_row_then_at_most_one_per_interval() -> None:
    out = io.StringIO()
    progress = LineProgress(out, every_s=3600.0)
    progress(0, 10, "all 8 B")  # nothing measured yet
    progress(1, 10, "all 8 B")
    progress(2, 10, "all 16 B")
    assert out.getvalue() == "topoaudit: bench 1/10 measured (last: all 8 B)\n"
    every = LineProgress(out := io.StringIO(), every_s=0.0)
    every(1, 2, "a")
    every(2, 2, "b")
    assert out.getvalue().count("\n") == 2


def test_usable_cores_follow_the_affinity_mask() -> None:
    assert usable_cores() == len(os.sched_getaffinity(0)) >= 1


def test_a_stop_before_any_rank_started_starts_none_and_reports_the_stop() -> None:
    """SIGTERM while torch loads (before the ranks exist): no rank is started, the run is reported stopped."""
    pytest.importorskip("torch")
    import multiprocessing

    from topoaudit.bench.config import BenchConfig
    from topoaudit.bench.launch import StopRequest, _run_spawned

    stop = StopRequest()
    stop(signal.SIGTERM, None)
    result = _run_spawned(BenchConfig(backend="gloo", nproc=2), None, stop)
    assert multiprocessing.active_children() == []
    assert result.status == "failed" and result.groups == ()
    assert [(e.rank, e.kind, e.message) for e in result.errors] == [(-1, "interrupted", "SIGTERM received")]
