"""``bench``: measure all-reduce on this machine and judge the numbers (torch loads only inside a sweep)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from topoaudit.app.common import GateRequest, Judged, Progress, judge

if TYPE_CHECKING:
    from topoaudit.bench.config import BenchConfig
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine


@dataclass(frozen=True)
class SweepRequest:
    """An all-reduce sweep (sizes in bytes; ``nproc``/``pair_bytes`` 0: the bench's default)."""

    groups: tuple[str, ...] = ("all",)
    backend: str = "auto"
    nproc: int = 0
    min_bytes: int = 8
    max_bytes: int = 4 << 30
    pair_bytes: int = 0
    timeout_s: float = 60.0
    expect_busbw_gbps: float | None = None
    topology: str | None = None  # a capture of this machine: its domains and expected busbw
    algo: str = ""  # "ring" | "nvls" | "tree": forced through NCCL_ALGO; "" lets NCCL choose


@dataclass(frozen=True)
class BenchRequest:
    sweep: SweepRequest = SweepRequest()
    gate: GateRequest = field(default_factory=GateRequest)


def bench(request: BenchRequest, progress: Progress | None = None) -> Judged | None:
    """Measure all-reduce and judge the numbers (with NCCL's own log and dumps as evidence, on NCCL); None on a
    launched rank other than 0."""
    bench_config(request.sweep)  # a sweep that cannot run is refused before the probe
    machine = _topology(request.sweep.topology) if request.sweep.topology else _probed_machine()
    measured, nccl_files = run_sweep(request.sweep, machine, progress)
    if measured is None:
        return None
    from topoaudit.model.facts import Facts
    from topoaudit.model.report import SourceInfo

    loaded = Facts(
        machine if machine is not None and machine.gpus else _machine_from(measured),
        SourceInfo("bench", "live", description=f"all-reduce bench over {measured.world_size} rank(s)"),
    )
    loaded = with_nccl_view(loaded, nccl_files)
    expect = request.sweep.expect_busbw_gbps
    return Judged(judge(loaded, request.gate, None, bench=measured, expect_busbw_gbps=expect), nccl_files)


def bench_rank() -> int | None:
    """This process's rank when started by torchrun or Slurm; None when the bench spawns its own ranks."""
    from topoaudit.bench import launched_env

    launched = launched_env()
    return None if launched is None else int(launched["rank"])


def bench_config(sweep: SweepRequest, machine: Machine | None = None) -> BenchConfig:
    """The bench's own config; it refuses a sweep that cannot run (UsageError, exit 2) before any rank starts,
    and a machine without PyTorch (exit 4) before the probe."""
    from topoaudit.bench import BenchConfig

    config = BenchConfig(
        groups=sweep.groups,
        backend=sweep.backend,
        nproc=sweep.nproc,
        min_bytes=sweep.min_bytes,
        max_bytes=sweep.max_bytes,
        pair_bytes=sweep.pair_bytes,
        timeout_s=sweep.timeout_s,
        machine=machine if machine is not None and machine.gpus else None,
        algo=sweep.algo,
    )
    require_torch()
    return config


def require_torch() -> None:
    """EnvironmentUnusable (exit 4) without PyTorch, naming the install command that works for this copy."""
    import importlib.util

    try:
        found = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        found = False
    if found:
        return
    from topoaudit.app.install import extra_install_command
    from topoaudit.errors import EnvironmentUnusable

    raise EnvironmentUnusable(
        "the bench needs PyTorch, which is not installed",
        hint=f"{extra_install_command('bench')} (CPU-only wheels: pip install torch --index-url "
        "https://download.pytorch.org/whl/cpu)",
    )


def run_sweep(
    sweep: SweepRequest, machine: Machine | None, progress: Progress | None
) -> tuple[BenchResult | None, dict[str, bytes]]:
    """Run the sweep (judged later, with everything else, by the pipeline) and the files NCCL wrote meanwhile."""
    from topoaudit.bench import run_bench_with_nccl_view

    return run_bench_with_nccl_view(bench_config(sweep, machine), progress)


def with_nccl_view(loaded: Facts, nccl_files: dict[str, bytes]) -> Facts:
    """The bench's NCCL log read into the report's NCCL view, beside the measured busbw."""
    if not nccl_files:
        return loaded
    import dataclasses

    from topoaudit.bench import nccl_view

    return dataclasses.replace(loaded, nccl=nccl_view(nccl_files))


def _topology(path: str) -> Machine:
    from topoaudit.readers import load_path

    return load_path(path).machine


def _probed_machine() -> Machine | None:
    """This machine's topology from NVML when a driver is there (domains and expected busbw); else None."""
    from topoaudit.errors import TopoauditError

    try:
        from topoaudit.probe.collect import probe as collect
        from topoaudit.readers.snapshot import facts_of_snapshot

        return facts_of_snapshot(collect("/"), "this machine", kind="live").machine
    except (ImportError, TopoauditError):  # no pynvml, no driver, no GPU: the bench runs without expectations
        return None


def _machine_from(result: BenchResult) -> Machine:
    """Rank 0's host as far as the bench saw it: its GPUs by CUDA index (no links: the bench does not probe)."""
    from topoaudit.model.machine import Gpu, Host, Machine

    host = result.ranks[0].host if result.ranks else "unknown"
    gpus = tuple(
        Gpu(index=r.local_rank, name=r.name, pci_bus_id=r.pci_bus_id)
        for r in result.ranks
        if r.host == host and r.device != "cpu"
    )
    return Machine(source="bench", gpus=gpus, host=Host(hostname=host))
