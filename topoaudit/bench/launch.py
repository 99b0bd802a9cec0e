"""Launching the ranks of a bench run: processes, the store, signals, timeouts.

Two ways to start:

* **spawned** -- no ``RANK`` in the environment: this process hosts a c10d ``TCPStore`` and spawns one
  process per GPU (NCCL) or ``nproc`` CPU ranks (gloo). The store outlives any rank, so a dead rank, a
  timeout, Ctrl-C or SIGTERM still leaves every row measured so far readable here; children are ended by
  pid, and each asks Linux to end it with its parent.
* **launched** -- ``RANK``/``WORLD_SIZE``/``MASTER_ADDR`` set by torchrun (or ``SLURM_PROCID``/
  ``SLURM_NTASKS``/``SLURM_LOCALID``): ``init_method="env://"``, torch's own rendezvous; rank 0 reads the
  rows and failures from the job's store and returns the result, the other ranks return ``None``.

What a rank does is in :mod:`topoaudit.bench.rank`; turning what the ranks wrote into a result is the pure
:mod:`topoaudit.bench.assemble`. torch is imported inside functions only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import math
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any, TextIO

from topoaudit.bench import store as store_keys
from topoaudit.bench.assemble import result_from_documents
from topoaudit.bench.config import BenchConfig, Progress
from topoaudit.bench.nccl_capture import plan_capture, read_capture
from topoaudit.bench.rank import Stopped, rank_main, spawned_rank, usable_cores
from topoaudit.errors import ConfigError, EnvironmentUnusable, UsageError
from topoaudit.model.bench import BenchResult, RankError

# --------------------------------------------------------------------------------------------- entry points


def launched_env(environ: dict[str, str] | None = None) -> dict[str, int | str] | None:
    """Rank/world/local rank/master when started by torchrun or Slurm; ``None`` when this process must spawn."""
    env = dict(os.environ if environ is None else environ)
    if "RANK" in env and "WORLD_SIZE" in env:
        return {
            "rank": int(env["RANK"]),
            "world": int(env["WORLD_SIZE"]),
            "local_rank": int(env.get("LOCAL_RANK", "0")),
            "local_world": int(env.get("LOCAL_WORLD_SIZE", env["WORLD_SIZE"])),
            "via": "torchrun",
        }
    if "SLURM_PROCID" in env and "SLURM_NTASKS" in env and int(env["SLURM_NTASKS"]) > 1:
        if "MASTER_ADDR" not in env or "MASTER_PORT" not in env:
            raise ConfigError(
                "started by Slurm without MASTER_ADDR/MASTER_PORT",
                hint="export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1) MASTER_PORT=29500",
            )
        return {
            "rank": int(env["SLURM_PROCID"]),
            "world": int(env["SLURM_NTASKS"]),
            "local_rank": int(env.get("SLURM_LOCALID", "0")),
            "local_world": int(env.get("SLURM_NTASKS_PER_NODE", "1").split("(")[0]),
            "via": "slurm",
        }
    return None


def run_bench(config: BenchConfig, progress: Progress | None = None) -> BenchResult | None:
    """Run the sweep; the result on rank 0 / the spawning process, ``None`` on other launched ranks."""
    launched = launched_env()
    if launched is not None:
        _require_torch()
        return _run_launched(config, launched, progress)
    with stop_signals() as stop:  # from here on Ctrl-C and SIGTERM end the run cleanly, even while torch loads
        _require_torch()
        return _run_spawned(config, progress, stop)


def run_bench_with_nccl_view(
    config: BenchConfig, progress: Progress | None = None
) -> tuple[BenchResult | None, dict[str, bytes]]:
    """:func:`run_bench` with NCCL writing its INFO log (per rank), topology and graph dumps into a directory of
    the run: on NCCL the files it wrote come back as evidence and the result's notes name the variables the user
    had set (theirs are used). On gloo nothing is set and nothing comes back."""
    with tempfile.TemporaryDirectory(prefix="topoaudit-nccl-") as directory:
        capture = plan_capture(directory, os.environ)
        result = run_bench(dataclasses.replace(config, nccl_capture=capture), progress)
        if result is None or result.backend != "nccl":
            return result, {}
        files = read_capture(capture)
    return dataclasses.replace(result, notes=(*result.notes, *capture.notes)), files


def _require_torch() -> None:
    try:
        import torch  # noqa: F401  (the optional `bench` extra)
    except ImportError as exc:
        raise EnvironmentUnusable(
            "the bench needs PyTorch, which is not installed",
            hint="pip install 'topoaudit[bench]' (CPU wheels: --index-url https://download.pytorch.org/whl/cpu)",
        ) from exc


def resolve_backend(requested: str) -> str:
    import torch
    import torch.distributed as dist

    if not dist.is_available():
        raise EnvironmentUnusable("this torch build has no torch.distributed")
    gpu = torch.cuda.is_available()
    nccl = dist.is_nccl_available()
    if requested == "auto":
        return "nccl" if gpu and nccl else "gloo"
    if requested == "nccl" and not (gpu and nccl):
        why = "no CUDA GPU is visible" if not gpu else "this torch build has no NCCL"
        raise EnvironmentUnusable(f"--backend nccl: {why}", hint="use --backend gloo for a CPU-only run")
    if requested not in ("nccl", "gloo"):
        raise UsageError(f"unknown backend {requested!r}: use nccl or gloo")
    return requested


def _gather(
    store: Any,
    world: int,
    backend: str,
    config: BenchConfig,
    errors: list[RankError],
    wall_s: float,
    *,
    error_ranks: set[int] | None = None,
) -> BenchResult:
    """Read what the ranks wrote and assemble the result (partial runs too)."""
    documents = store_keys.read_documents(store, world, error_ranks=error_ranks)
    return result_from_documents(
        documents, backend=backend, world=world, errors=errors, machine=config.machine, wall_s=wall_s
    )


# ---------------------------------------------------------------------------------------------- spawned mode


class StopRequest:
    """SIGINT or SIGTERM while ranks run, remembered and acted on by the watch loop (never raised mid-call)."""

    def __init__(self) -> None:
        self.signal: int | None = None

    def __call__(self, signum: int, frame: object) -> None:
        if self.signal is None:
            self.signal = signum

    @property
    def name(self) -> str:
        if self.signal is None:
            return ""
        return {int(signal.SIGINT): "Ctrl-C (SIGINT)", int(signal.SIGTERM): "SIGTERM"}.get(
            self.signal, signal.Signals(self.signal).name
        )


@contextlib.contextmanager
def stop_signals() -> Iterator[StopRequest]:
    """SIGINT and SIGTERM (CI runners, Slurm's scancel, Kubernetes) both ask the run to stop: the children are
    ended and what was measured is returned. A second signal during the teardown is absorbed, not fatal."""
    stop = StopRequest()
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield stop
        return
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class LineProgress:
    """Progress as plain lines on stderr when no progress bar is shown (CI logs, ``--format json``): the first
    measured step, at most one line every ``every_s`` seconds, and the last step (the final count)."""

    def __init__(self, stream: TextIO | None = None, every_s: float = 10.0) -> None:
        self.stream = stream
        self.every_s = every_s
        self.last = -math.inf

    def __call__(self, done: int, total: int, what: str) -> None:
        now = time.monotonic()
        if done < 1 or (done < total and now - self.last < self.every_s):  # the last step always has its line
            return
        self.last = now
        stream = self.stream or sys.stderr
        stream.write(f"topoaudit: bench {done}/{total} measured (last: {what})\n")
        stream.flush()


def oversubscription_warning(ranks: int, cores: int) -> str:
    """The terminal line for more ranks than cores on one host; empty when they fit."""
    if ranks <= cores:
        return ""
    return (
        f"topoaudit: warning: {ranks} ranks on {cores} CPU core(s): the ranks take turns on the cores, so the "
        f"figures measure the scheduler, not the links (use --nproc {cores} or fewer)"
    )


def _warn_if_oversubscribed(world: int) -> None:
    line = oversubscription_warning(world, usable_cores())
    if line:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _run_spawned(config: BenchConfig, progress: Progress | None, stop: StopRequest) -> BenchResult:
    """Host the store, spawn the ranks, watch them; on a stop signal, a failure or no progress, end them all."""
    import multiprocessing as mp

    import torch
    import torch.distributed as dist

    backend = resolve_backend(config.backend)
    if backend == "nccl":
        gpus = torch.cuda.device_count()
        world = config.nproc or gpus
        if world > gpus:
            raise UsageError(f"--nproc {world} but only {gpus} GPU(s) are visible to NCCL")
    else:
        world = config.nproc or 2
    _warn_if_oversubscribed(world)
    progress = progress or LineProgress()
    started = time.monotonic()
    errors: list[RankError] = []
    store = dist.TCPStore(
        config.host,
        0,
        None,
        True,
        timeout=datetime.timedelta(seconds=config.timeout_s + 30),
        wait_for_workers=False,
    )
    ctx = mp.get_context("spawn")
    procs: list[Any] = []
    first_failure: float | None = None
    errors_at_stop: set[int] | None = None
    try:
        for rank in range(world):
            if stop.signal is not None:
                break
            proc = ctx.Process(
                target=spawned_rank,
                args=(rank, world, config.host, store.port, backend, config, os.getpid()),
                daemon=True,
            )
            proc.start()
            procs.append(proc)
        last_progress = (-1, time.monotonic())
        while stop.signal is None:
            time.sleep(0.05)
            codes = [p.exitcode for p in procs]  # before the count: once every rank has ended, the count is final
            done = int(store.add(store_keys.KEY + "progress", 0))
            total = store_keys.total_steps(store)
            if done != last_progress[0]:
                last_progress = (done, time.monotonic())
                if total:
                    progress(done, total, store_keys.last_label(store))
            if all(c is not None for c in codes):
                break
            failed = any(c not in (None, 0) for c in codes) or store_keys.any_error(store, world)
            if failed and first_failure is None:
                first_failure = time.monotonic()
            # give the others time to report their own view (they fail fast once a peer is gone)
            if first_failure is not None and time.monotonic() - first_failure > min(config.timeout_s, 5.0) + 1.0:
                break
            if time.monotonic() - last_progress[1] > 3 * config.timeout_s + 120:
                errors.append(RankError(-1, "timeout", f"no progress for {3 * config.timeout_s + 120:.0f} s"))
                break
    finally:
        if stop.signal is not None:
            # errors ranks report from here on are the stop itself (a peer ended under them), not faults
            errors_at_stop = {r for r in range(world) if store_keys.has_error(store, r)}
        _end_children(procs)
    if stop.signal is not None:
        errors.append(RankError(-1, "interrupted", f"{stop.name} received"))
    ended_by_us = stop.signal is not None or first_failure is not None or any(e.rank == -1 for e in errors)
    errors.extend(_silent_deaths(procs, store, ended_by_us))
    return _gather(store, world, backend, config, errors, time.monotonic() - started, error_ranks=errors_at_stop)


def _silent_deaths(procs: list[Any], store: Any, ended_by_us: bool) -> list[RankError]:
    """Ranks that ended badly without reporting why; a rank we ended by signal is not one of them."""
    out = []
    for rank, p in enumerate(procs):
        code = p.exitcode
        if code in (0, None) or store_keys.has_error(store, rank) or (ended_by_us and code < 0):
            continue
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        out.append(RankError(rank, "died", f"rank {rank} ended with {how} without reporting"))
    return out


def _end_children(procs: list[Any]) -> None:
    """Terminate, then kill, every child still alive -- by pid, ours only."""
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + 3.0
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(2.0)


# --------------------------------------------------------------------------------------------- launched mode


def _run_launched(config: BenchConfig, env: dict[str, int | str], progress: Progress | None) -> BenchResult | None:
    rank, world = int(env["rank"]), int(env["world"])
    local_rank, local_world = int(env["local_rank"]), int(env["local_world"])
    backend = resolve_backend(config.backend)
    if backend == "nccl" and config.nccl_capture is not None:  # before NCCL reads its environment
        for key, value in config.nccl_capture.env:
            os.environ.setdefault(key, value)
    if backend == "nccl" and config.algo:  # --algo: the user asked for it on this run, over any inherited value
        os.environ["NCCL_ALGO"] = dict(config.rank_env(backend))["NCCL_ALGO"]
    if env["via"] == "slurm":
        os.environ.setdefault("RANK", str(rank))
        os.environ.setdefault("WORLD_SIZE", str(world))
        os.environ.setdefault("LOCAL_RANK", str(local_rank))

    def _term(signum: int, frame: object) -> None:
        raise Stopped()

    previous = signal.signal(signal.SIGTERM, _term)
    started = time.monotonic()
    try:
        return _launched_inner(rank, world, local_rank, local_world, backend, config, progress, started)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _launched_inner(
    rank: int,
    world: int,
    local_rank: int,
    local_world: int,
    backend: str,
    config: BenchConfig,
    progress: Progress | None,
    started: float,
) -> BenchResult | None:
    errors: list[RankError] = []
    holder: dict[str, Any] = {}
    try:
        ok = rank_main(
            rank,
            world,
            local_rank,
            local_world,
            backend,
            config,
            None,
            spawned=False,
            holder=holder,
            progress=progress if rank == 0 else None,
        )
    except (KeyboardInterrupt, Stopped):
        ok = False
        errors.append(RankError(rank, "interrupted", "SIGTERM or Ctrl-C received"))
    store = holder.get("store")
    if store is None:
        raise EnvironmentUnusable("the process group could not be initialised (see the error above)")
    if rank != 0:
        if not ok:  # let rank 0 read our error before this process (and its sockets) go away
            with contextlib.suppress(Exception):  # rank 0 is gone too; nothing left to wait for
                store.wait([store_keys.KEY + "done"], datetime.timedelta(seconds=config.timeout_s + 30))
        _finish(ok)
        return None
    if not ok:
        time.sleep(0.5)  # the peers' own error reports usually follow ours within milliseconds
    result = _gather(store, world, backend, config, errors, time.monotonic() - started)
    store.set(store_keys.KEY + "done", "1")
    _finish(ok)
    return result


def _finish(ok: bool) -> None:
    import torch.distributed as dist

    if ok and dist.is_initialized():
        dist.destroy_process_group()


__all__ = [
    "LineProgress",
    "StopRequest",
    "launched_env",
    "oversubscription_warning",
    "resolve_backend",
    "run_bench",
    "run_bench_with_nccl_view",
    "stop_signals",
]
