"""The all-reduce harness: processes, rendezvous, timing, data check, failure collection.

Two ways to start (nvml-nccl s C7):

* **spawned** -- no ``RANK`` in the environment: this process hosts a c10d ``TCPStore`` and spawns one
  process per GPU (NCCL) or ``nproc`` CPU ranks (gloo). The store outlives any rank, so a dead rank, a
  timeout or Ctrl-C still leaves every row measured so far readable here; children are ended by pid.
* **launched** -- ``RANK``/``WORLD_SIZE``/``MASTER_ADDR`` set by torchrun (or ``SLURM_PROCID``/
  ``SLURM_NTASKS``/``SLURM_LOCALID``): ``init_method="env://"``, torch's own rendezvous; rank 0 reads the
  rows and failures from the job's store and returns the result, the other ranks return ``None``.

Timing (nvml-nccl s C2): each process is bound to its GPU (``set_device`` + ``device_id``) before the
first collective; every (group, size) is warmed up; a trial is a barrier, then ``k`` queued in-place
all-reduces bracketed by CUDA events (GPU, behind a short ``_sleep`` that hides launch overhead) or by
``perf_counter`` (CPU); the buffer is refilled before every trial so repeated sums never overflow; the
per-trial times are reduced with MAX over the group (the slowest rank counts). After the trials one
all-reduce of a known pattern is checked element-wise (``#wrong``, summed over ranks).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import math
import os
import re
import signal
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO

from topoaudit.bench import formulas
from topoaudit.bench.expect import expected_busbw
from topoaudit.bench.groups import GroupSpec, Plan, make_plan, map_gpus
from topoaudit.bench.islands import islands
from topoaudit.errors import ConfigError, EnvironmentUnusable, UsageError
from topoaudit.model.bench import (
    BenchGroup,
    BenchResult,
    BenchRow,
    PairBw,
    RankError,
    RankInfo,
    SkippedSize,
)
from topoaudit.model.machine import Machine
from topoaudit.model.values import Unsupported

# torch warns on import when numpy is absent; the bench never converts tensors to numpy, so the warning is noise
# on every rank's stderr.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)

Progress = Callable[[int, int, str], None]
"""progress(done_steps, total_steps, what) -- one step is one (group, size)."""

KEY = "topoaudit/"
PATTERN_MOD = 13  # element i of rank r holds (i % 13) + r + 1: every sum is a small exact integer


@dataclass(frozen=True)
class BenchConfig:
    """What to sweep and how. ``inject`` holds test hooks (corrupt/hang/die on a rank at a size)."""

    groups: tuple[str, ...] = ("all",)
    backend: str = "auto"  # "auto" | "nccl" | "gloo"
    nproc: int = 0  # spawned mode: ranks to start (0 = one per GPU; gloo default 2)
    min_bytes: int = 8
    max_bytes: int = 4 << 30
    factor: int = 2
    pair_bytes: int = 0  # size of the pairwise matrix; 0 = the largest swept size up to 256 MiB
    timeout_s: float = 60.0  # one collective; also the process group's timeout
    target_s: float = 0.1  # timed time per (group, size)
    warmup: int = 2
    machine: Machine | None = None  # the probed machine: domains, placements, the expectation model
    inject: tuple[tuple[str, int], ...] = ()  # ("corrupt_rank", r), ("hang_rank", r), ("die_rank", r), ("at_bytes", s)
    host: str = "127.0.0.1"  # spawned mode: store address
    env: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # extra environment for spawned ranks

    def __post_init__(self) -> None:
        """Refuse a sweep that cannot be run, before any rank starts: a usage mistake, told in one sentence."""
        for option, value, least in (
            ("--nproc", self.nproc, 0),
            ("--min-bytes", self.min_bytes, 1),
            ("--max-bytes", self.max_bytes, 1),
            ("--pair-bytes", self.pair_bytes, 0),
            ("the size factor", self.factor, 2),
            ("the warm-up count", self.warmup, 0),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise UsageError(f"{option} must be a whole number of at least {least}, not {value!r}")
        if self.min_bytes > self.max_bytes:
            raise UsageError(
                f"--min-bytes {formulas.format_size(self.min_bytes)} is above --max-bytes "
                f"{formulas.format_size(self.max_bytes)}: nothing to sweep"
            )
        for option, seconds in (("--timeout", self.timeout_s), ("the time per size", self.target_s)):
            if not seconds > 0:
                raise UsageError(f"{option} must be a positive number of seconds, not {seconds!r}")

    def hook(self, name: str) -> int | None:
        return next((v for k, v in self.inject if k == name), None)


# --------------------------------------------------------------------------------------------- entry points


ONE_RANK = Unsupported(
    "bench", "one rank: an all-reduce over a single rank moves no data, only its latency is measured"
)


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
    try:
        import torch  # noqa: F401  (the optional `bench` extra)
    except ImportError as exc:
        raise EnvironmentUnusable(
            "the bench needs PyTorch, which is not installed",
            hint="pip install 'topoaudit[bench]' (CPU wheels: --index-url https://download.pytorch.org/whl/cpu)",
        ) from exc
    launched = launched_env()
    if launched is not None:
        return _run_launched(config, launched, progress)
    return _run_spawned(config, progress)


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
    measured step, then at most one line every ``every_s`` seconds."""

    def __init__(self, stream: TextIO | None = None, every_s: float = 10.0) -> None:
        self.stream = stream
        self.every_s = every_s
        self.last = -math.inf

    def __call__(self, done: int, total: int, what: str) -> None:
        now = time.monotonic()
        if done < 1 or now - self.last < self.every_s:
            return
        self.last = now
        stream = self.stream or sys.stderr
        stream.write(f"topoaudit: bench {done}/{total} measured (last: {what})\n")
        stream.flush()


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask, as taskset/cgroups set it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


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


def _run_spawned(config: BenchConfig, progress: Progress | None) -> BenchResult:
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
    with stop_signals() as stop:
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
                    target=_spawned_rank,
                    args=(rank, world, config.host, store.port, backend, config, os.getpid()),
                    daemon=True,
                )
                proc.start()
                procs.append(proc)
            last_progress = (-1, time.monotonic())
            while stop.signal is None:
                time.sleep(0.05)
                done = int(store.add(KEY + "progress", 0))
                total = _total_steps(store)
                if done != last_progress[0]:
                    last_progress = (done, time.monotonic())
                    if total:
                        progress(done, total, _last_label(store))
                codes = [p.exitcode for p in procs]
                if all(c is not None for c in codes):
                    break
                failed = any(c not in (None, 0) for c in codes) or _any_error(store, world)
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
                errors_at_stop = {r for r in range(world) if _has_error(store, r)}
            _end_children(procs)
        if stop.signal is not None:
            errors.append(RankError(-1, "interrupted", f"{stop.name} received"))
        ended_by_us = stop.signal is not None or first_failure is not None or any(e.rank == -1 for e in errors)
        errors.extend(_silent_deaths(procs, store, ended_by_us))
        return build_result(
            store, world, backend, config, errors, time.monotonic() - started, error_ranks=errors_at_stop
        )


def _silent_deaths(procs: list[Any], store: Any, ended_by_us: bool) -> list[RankError]:
    """Ranks that ended badly without reporting why; a rank we ended by signal is not one of them."""
    out = []
    for rank, p in enumerate(procs):
        code = p.exitcode
        if code in (0, None) or _has_error(store, rank) or (ended_by_us and code < 0):
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


def _spawned_rank(rank: int, world: int, host: str, port: int, backend: str, config: BenchConfig, parent: int) -> None:
    """Entry point of a spawned rank (module level so ``spawn`` can pickle it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it ends us by pid
    _die_with_parent(parent)
    for key, value in config.env:
        os.environ[key] = value
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    import torch.distributed as dist

    store = dist.TCPStore(host, port, None, False, timeout=datetime.timedelta(seconds=config.timeout_s + 30))
    ok = _rank_main(rank, world, rank, world, backend, config, store, spawned=True)
    os._exit(0 if ok else 1)  # skip interpreter teardown: a wedged communicator must not hang the exit


def _die_with_parent(parent: int) -> None:
    """Ask Linux to kill this rank when the spawning process dies, even by SIGKILL: a rank blocked in the
    store connect would otherwise wait out its timeout as an orphan."""
    with contextlib.suppress(Exception):  # not Linux, or no libc to ask: the parent still ends us by pid
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:  # the parent died before we asked
        os._exit(1)


# --------------------------------------------------------------------------------------------- launched mode


class _Stop(Exception):
    """SIGTERM from torchrun/Slurm while sweeping: stop and report what was measured."""


def _run_launched(config: BenchConfig, env: dict[str, int | str], progress: Progress | None) -> BenchResult | None:
    rank, world = int(env["rank"]), int(env["world"])
    local_rank, local_world = int(env["local_rank"]), int(env["local_world"])
    backend = resolve_backend(config.backend)
    if env["via"] == "slurm":
        os.environ.setdefault("RANK", str(rank))
        os.environ.setdefault("WORLD_SIZE", str(world))
        os.environ.setdefault("LOCAL_RANK", str(local_rank))

    def _term(signum: int, frame: object) -> None:
        raise _Stop()

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
        ok = _rank_main(
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
    except (KeyboardInterrupt, _Stop):
        ok = False
        errors.append(RankError(rank, "interrupted", "SIGTERM or Ctrl-C received"))
    store = holder.get("store")
    if store is None:
        raise EnvironmentUnusable("the process group could not be initialised (see the error above)")
    if rank != 0:
        if not ok:  # let rank 0 read our error before this process (and its sockets) go away
            with contextlib.suppress(Exception):  # rank 0 is gone too; nothing left to wait for
                store.wait([KEY + "done"], datetime.timedelta(seconds=config.timeout_s + 30))
        _finish(ok)
        return None
    if not ok:
        time.sleep(0.5)  # the peers' own error reports usually follow ours within milliseconds
    result = build_result(store, world, backend, config, errors, time.monotonic() - started)
    store.set(KEY + "done", "1")
    _finish(ok)
    return result


def _finish(ok: bool) -> None:
    import torch.distributed as dist

    if ok and dist.is_initialized():
        dist.destroy_process_group()


# ------------------------------------------------------------------------------------------------- one rank


def _rank_main(
    rank: int,
    world: int,
    local_rank: int,
    local_world: int,
    backend: str,
    config: BenchConfig,
    store: Any,
    *,
    spawned: bool,
    holder: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> bool:
    """Everything one rank does. False when it failed (its error is in the store)."""
    import torch
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=config.timeout_s)
    device = torch.device("cpu")
    if backend == "nccl":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)  # bind before the first collective (nvml-nccl s C2.1)
    kwargs: dict[str, Any] = {"backend": backend, "timeout": timeout}
    if backend == "nccl":
        kwargs["device_id"] = device
    if spawned:
        kwargs.update(store=dist.PrefixStore("pg", store), rank=rank, world_size=world)
    else:
        kwargs["init_method"] = "env://"
    where: dict[str, Any] = {"group": "init", "size": 0}
    if not spawned:  # no store before torch's rendezvous: a failure here is the caller's to show
        dist.init_process_group(**kwargs)
        store = dist.distributed_c10d._get_default_store()
    if holder is not None:
        holder["store"] = store
    try:
        if spawned:
            dist.init_process_group(**kwargs)
        where.update(group="", size=0)
        store.set(KEY + f"info/{rank}", json.dumps(_rank_info(rank, local_rank, local_world, device)))
        if rank == 0:
            _publish_plan(store, world, backend, config)
        plan = json.loads(store.get(KEY + "plan"))
        _sweep(rank, world, local_rank, backend, config, store, plan, device, where, progress)
        return True
    except (KeyboardInterrupt, _Stop):
        raise
    except Exception as exc:
        _report_error(store, rank, exc, where)
        return False


def _rank_info(rank: int, local_rank: int, local_world: int, device: Any) -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {
        "rank": rank,
        "local_rank": local_rank,
        "local_world": local_world,
        "host": socket.gethostname(),
        "device": str(device),
        "pid": os.getpid(),
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info["name"] = props.name
        bus = [getattr(props, k, None) for k in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
        if all(isinstance(x, int) for x in bus):
            info["pci_bus_id"] = f"{bus[0]:04x}:{bus[1]:02x}:{bus[2]:02x}.0"
        free, _total = torch.cuda.mem_get_info(device)
        info["free_bytes"] = int(free)
    else:
        info["free_bytes"] = _mem_available() // max(1, local_world)
    info["env"] = _environment()
    return info


def _mem_available() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 4 << 30


def _environment() -> dict[str, str]:
    import torch

    env = {"torch": torch.__version__, "cuda": str(torch.version.cuda), "cpu_cores": str(usable_cores())}
    try:
        nccl = torch.cuda.nccl.version()
        env["nccl"] = ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl)
    except Exception:
        env["nccl"] = "unavailable"
    for key, value in sorted(os.environ.items()):
        if key.startswith(("NCCL_", "TORCH_NCCL_", "GLOO_")):
            env[key] = value
    return env


def _publish_plan(store: Any, world: int, backend: str, config: BenchConfig) -> None:
    keys = [KEY + f"info/{r}" for r in range(world)]
    store.wait(keys, datetime.timedelta(seconds=config.timeout_s + 30))
    infos = [json.loads(store.get(k)) for k in keys]
    ranks = tuple(_info_to_rank(i) for i in infos)
    plan = make_plan(config.groups, ranks, config.machine)
    sizes = formulas.size_sweep(config.min_bytes, config.max_bytes, config.factor)
    free = min(int(i.get("free_bytes", 0)) for i in infos)
    # buffer + pattern (+ ~50% transport staging on gloo); keep a margin for NCCL's own buffers
    per_byte = 2 if backend == "nccl" else 3
    budget = int(free * 0.85) - (512 << 20 if backend == "nccl" else 0)
    fit = [s for s in sizes if per_byte * s <= budget]
    skipped = [
        {"size": s, "reason": f"needs {per_byte * s / 2**30:.2f} GiB per rank, {free / 2**30:.2f} GiB free"}
        for s in sizes
        if per_byte * s > budget
    ]
    pair_limit = config.pair_bytes or (256 << 20)
    pair_sizes = [s for s in fit if s <= pair_limit]
    pair_size = pair_sizes[-1] if pair_sizes else (fit[-1] if fit else 0)
    steps = sum(len(fit) if g.sweep else (1 if pair_size else 0) for g in plan.groups)
    doc = {
        "groups": [asdict(g) for g in plan.groups],
        "domains": [list(d) for d in plan.domains],
        "domain_basis": plan.domain_basis,
        "notes": list(plan.notes),
        "sizes": fit,
        "skipped": skipped,
        "pair_size": pair_size,
        "steps": steps,
    }
    store.set(KEY + "steps", str(steps))
    store.set(KEY + "plan", json.dumps(doc))


def _info_to_rank(i: dict[str, Any]) -> RankInfo:
    return RankInfo(
        rank=int(i["rank"]),
        local_rank=int(i["local_rank"]),
        host=str(i["host"]),
        device=str(i["device"]),
        pci_bus_id=i["pci_bus_id"] if "pci_bus_id" in i else Unsupported("torch", "no PCI bus id (CPU rank)"),
        name=i["name"] if "name" in i else Unsupported("torch", "CPU rank"),
        pid=int(i.get("pid", 0)),
    )


def _sweep(
    rank: int,
    world: int,
    local_rank: int,
    backend: str,
    config: BenchConfig,
    store: Any,
    plan: dict[str, Any],
    device: Any,
    where: dict[str, Any],
    progress: Progress | None,
) -> None:
    import torch.distributed as dist

    specs = [GroupSpec(g["name"], g["kind"], tuple(g["ranks"]), bool(g["sweep"])) for g in plan["groups"]]
    # every rank creates every group, in the same order (torch new_group contract, nvml-nccl s C3)
    handles = [None if len(s.ranks) == world else dist.new_group(list(s.ranks)) for s in specs]
    seq = 0
    for spec, handle in zip(specs, handles, strict=True):
        if rank in spec.ranks:
            sizes = plan["sizes"] if spec.sweep else ([plan["pair_size"]] if plan["pair_size"] else [])
            for size in sizes:
                where.update(group=spec.name, size=size)
                record = measure(spec, handle, size, rank, backend, config, device, local_rank)
                if rank == spec.ranks[0]:
                    store.set(KEY + f"rec/{rank}/{seq}", json.dumps(record))
                    seq += 1
                    store.set(KEY + f"nrec/{rank}", str(seq))
                    store.add(KEY + "progress", 1)
                    store.set(KEY + "last", f"{spec.name} {formulas.format_size(size)}")
                if progress is not None:
                    progress(int(store.add(KEY + "progress", 0)), int(plan["steps"]), f"{spec.name}")
        where.update(group=f"after {spec.name}", size=0)
        # groups run one at a time: a pair is measured alone
        dist.barrier(device_ids=[local_rank]) if backend == "nccl" else dist.barrier()
    where.update(group="", size=0)


def measure(
    spec: GroupSpec,
    group: Any,
    size: int,
    rank: int,
    backend: str,
    config: BenchConfig,
    device: Any,
    local_rank: int,
) -> dict[str, Any]:
    """One (group, size): warm up, time trials, check the data; the MAX over the group of every trial."""
    import torch
    import torch.distributed as dist

    n = len(spec.ranks)
    count = max(1, size // 4)
    cuda = device.type == "cuda"
    me = spec.ranks.index(rank)
    hook_at = config.hook("at_bytes")
    at_size = hook_at is None or hook_at == size
    if config.hook("die_rank") == rank and at_size and spec.kind == "all":
        os._exit(17)
    if config.hook("hang_rank") == rank and at_size and spec.kind == "all":
        time.sleep(config.timeout_s * 3)

    base = torch.arange(count, dtype=torch.float32, device=device).fmod_(PATTERN_MOD)
    buf = torch.empty_like(base)

    def fill() -> None:
        buf.copy_(base).add_(me + 1)

    def barrier() -> None:
        if cuda:
            dist.barrier(group=group, device_ids=[local_rank])
        else:
            dist.barrier(group=group)

    # warm-up: the first call on a group pays communicator / channel setup
    est = 0.0
    for _ in range(max(1, config.warmup)):
        fill()
        barrier()
        t0 = time.perf_counter()
        dist.all_reduce(buf, group=group)
        if cuda:
            _wait_cuda(torch, config.timeout_s)
        est = time.perf_counter() - t0
    est_t = torch.tensor([est], dtype=torch.float64, device=device)
    dist.all_reduce(est_t, op=dist.ReduceOp.MAX, group=group)
    est = float(est_t.item())
    calls = formulas.calls_per_trial(est, n, target_s=config.target_s / 5)
    trials = formulas.trials_for(est * calls, target_s=config.target_s)

    per_call_s: list[float] = []
    for _ in range(trials):
        fill()  # refill outside the timed region: repeated in-place sums would grow toward inf
        barrier()
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(_sleep_cycles(torch, device, calls))  # keep the GPU busy while we queue
            start.record()
            for _ in range(calls):
                dist.all_reduce(buf, group=group)
            end.record()
            _wait_event(end, config.timeout_s)
            per_call_s.append(start.elapsed_time(end) / 1e3 / calls)
        else:
            t0 = time.perf_counter()
            for _ in range(calls):
                dist.all_reduce(buf, group=group)
            per_call_s.append((time.perf_counter() - t0) / calls)

    # data check: a known pattern, verified element-wise
    fill()
    if config.hook("corrupt_rank") == rank and at_size:
        buf[count // 2] += 1.0  # as a link that flips data would
    dist.all_reduce(buf, group=group)
    buf.sub_(base, alpha=n).sub_(n * (n + 1) / 2)
    wrong = torch.count_nonzero(buf).to(torch.float64).reshape(1)
    times = torch.tensor(per_call_s, dtype=torch.float64, device=device)
    dist.all_reduce(times, op=dist.ReduceOp.MAX, group=group)
    dist.all_reduce(wrong, op=dist.ReduceOp.SUM, group=group)
    slowest = [float(x) for x in times.tolist()]
    return {
        "group": spec.name,
        "kind": spec.kind,
        "ranks": list(spec.ranks),
        "size": size,
        "count": count,
        "trial_us": [t * 1e6 for t in slowest],
        "calls": calls * trials,
        "wrong": int(wrong.item()),
        "timed_s": sum(slowest) * calls,
    }


def _wait_cuda(torch: Any, timeout_s: float) -> None:
    event = torch.cuda.Event()
    event.record()
    _wait_event(event, timeout_s)


def _wait_event(event: Any, timeout_s: float) -> None:
    """Poll instead of synchronize so a wedged collective becomes a timeout error, not a hang."""
    deadline = time.monotonic() + timeout_s
    while not event.query():
        if time.monotonic() > deadline:
            raise TimeoutError(f"collective did not finish within {timeout_s:g} s")
        time.sleep(0.0002)


def _sleep_cycles(torch: Any, device: Any, calls: int) -> int:
    """About 30 us of GPU time per queued call (PyTorch's launch overhead), at the GPU's clock."""
    try:
        khz = torch.cuda.get_device_properties(device).clock_rate  # kHz; absent in some builds
    except AttributeError:
        khz = 1_500_000
    return int(min(20e-3, 30e-6 * calls + 200e-6) * khz * 1e3)


def _report_error(store: Any, rank: int, exc: BaseException, where: dict[str, Any]) -> None:
    text = f"{type(exc).__name__}: {exc}".strip()
    lowered = text.lower()
    if isinstance(exc, TimeoutError) or "timed out" in lowered or "timeout" in lowered:
        kind = "timeout"
    elif "connection closed" in lowered or "connection reset" in lowered or "broken pipe" in lowered:
        kind = "peer-lost"
    else:
        kind = "exception"
    message = re.sub(r"\[[^\]]*\.(?:cc|cpp|h):\d+\]\s*", "", text.splitlines()[0] if text else "")[:400]
    doc = {"rank": rank, "kind": kind, "message": message, **where}
    with contextlib.suppress(Exception):  # the store itself is gone; the launcher reports the death
        store.set(KEY + f"err/{rank}", json.dumps(doc))


def _any_error(store: Any, world: int) -> bool:
    return any(_has_error(store, r) for r in range(world))


def _has_error(store: Any, rank: int) -> bool:
    try:
        return bool(store.check([KEY + f"err/{rank}"]))
    except Exception:
        return False


def _total_steps(store: Any) -> int:
    return int(store.get(KEY + "steps")) if store.check([KEY + "steps"]) else 0


def _last_label(store: Any) -> str:
    return store.get(KEY + "last").decode() if store.check([KEY + "last"]) else ""


# -------------------------------------------------------------------------------------------- the result


def _read_json(store: Any, key: str) -> Any:
    return json.loads(store.get(key)) if store.check([key]) else None


def build_result(
    store: Any,
    world: int,
    backend: str,
    config: BenchConfig,
    errors: list[RankError],
    wall_s: float,
    *,
    error_ranks: set[int] | None = None,
) -> BenchResult:
    """Everything in the store (plan, infos, rows, errors) -> a :class:`BenchResult`. Works on partial runs.

    ``error_ranks``: read the errors of these ranks only (a stopped run: the others are the stop itself)."""
    infos = [i for r in range(world) if (i := _read_json(store, KEY + f"info/{r}")) is not None]
    ranks = tuple(_info_to_rank(i) for i in infos)
    plan_doc = _read_json(store, KEY + "plan")
    records: list[dict[str, Any]] = []
    for r in range(world):
        if store.check([KEY + f"nrec/{r}"]):
            n = int(store.get(KEY + f"nrec/{r}"))
            records.extend(json.loads(store.get(KEY + f"rec/{r}/{j}")) for j in range(n))
    for r in range(world) if error_ranks is None else sorted(error_ranks):
        doc = _read_json(store, KEY + f"err/{r}")
        if doc is not None:
            errors.append(
                RankError(int(doc["rank"]), doc["kind"], doc["message"], doc.get("group", ""), int(doc.get("size", 0)))
            )
    env: dict[str, str] = next((i["env"] for i in infos if i["rank"] == 0 and "env" in i), {})
    if plan_doc is None:
        return BenchResult(
            source="topoaudit",
            collective="all_reduce",
            backend=backend,
            world_size=world,
            hosts=tuple(sorted({r.host for r in ranks})),
            ranks=ranks,
            groups=(),
            status="failed",
            errors=tuple(errors),
            environment=env,
            wall_s=round(wall_s, 3),
        )
    plan = Plan(
        tuple(GroupSpec(g["name"], g["kind"], tuple(g["ranks"]), bool(g["sweep"])) for g in plan_doc["groups"]),
        tuple(tuple(d) for d in plan_doc["domains"]),
        plan_doc["domain_basis"],
        tuple(plan_doc["notes"]),
    )
    return assemble(
        backend=backend,
        world=world,
        ranks=ranks,
        plan=plan,
        records=records,
        skipped=[SkippedSize(int(s["size"]), s["reason"]) for s in plan_doc["skipped"]],
        errors=errors,
        machine=config.machine,
        environment=env,
        wall_s=wall_s,
    )


def assemble(
    *,
    backend: str,
    world: int,
    ranks: tuple[RankInfo, ...],
    plan: Plan,
    records: list[dict[str, Any]],
    skipped: list[SkippedSize],
    errors: list[RankError],
    machine: Machine | None,
    environment: dict[str, str],
    wall_s: float,
) -> BenchResult:
    """Rows per group, plateau / latency, expectation, pair matrix and islands (pure; unit-testable)."""
    gpu_of = map_gpus(ranks, machine)
    hosts = {r.rank: r.host for r in ranks}
    gpu_label = {r.rank: f"{r.host}:{r.device}" for r in ranks}
    by_group: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        by_group.setdefault(rec["group"], []).append(rec)
    failed_groups = {e.group: e for e in errors if e.group}
    groups: list[BenchGroup] = []
    pairs: list[PairBw] = []
    for spec in plan.groups:
        recs = sorted(by_group.get(spec.name, []), key=lambda r: r["size"])
        n = len(spec.ranks)
        rows = tuple(_row(rec, n) for rec in recs)
        # One rank moves no data (NCCL returns without touching the fabric: 0.07 us per call on an H200),
        # so a "bandwidth" would be bytes / launch overhead. Only its latency means anything.
        curve = [(r.size_bytes, r.busbw_gbps) for r in rows] if n > 1 else []
        plat, top = formulas.plateau(curve), formulas.peak(curve)
        no_bw = ONE_RANK if n < 2 else None
        small = [t for rec in recs if rec["size"] <= formulas.LATENCY_MAX_BYTES for t in rec["trial_us"]]
        expected, basis = _expectation(spec, machine, gpu_of, hosts, backend)
        ratio: float | Unsupported = Unsupported("bench", "no expectation or no plateau")
        if isinstance(expected, float) and plat is not None and expected > 0:
            ratio = round(plat[1] / expected, 3)
        err = failed_groups.get(spec.name)
        groups.append(
            BenchGroup(
                name=spec.name,
                kind=spec.kind,
                ranks=spec.ranks,
                gpus=tuple(gpu_label.get(r, f"rank{r}") for r in spec.ranks),
                rows=rows,
                skipped_sizes=tuple(skipped) if spec.sweep else (),
                plateau_busbw_gbps=round(plat[1], 3)
                if plat
                else no_bw or Unsupported("bench", "no size >= 1 MiB measured"),
                plateau_size_bytes=plat[0] if plat else no_bw or Unsupported("bench", "no size >= 1 MiB measured"),
                peak_busbw_gbps=round(top[1], 3) if top else no_bw or Unsupported("bench", "nothing measured"),
                peak_size_bytes=top[0] if top else no_bw or Unsupported("bench", "nothing measured"),
                latency_p50_us=round(formulas.percentile(small, 50), 2) if small else _no_small,
                latency_p99_us=round(formulas.percentile(small, 99), 2) if small else _no_small,
                expected_busbw_gbps=expected,
                expected_basis=basis,
                ratio=ratio,
                error=f"{err.kind} at {formulas.format_size(err.size_bytes)}: {err.message}" if err else "",
            )
        )
        if spec.kind == "pair" and rows:
            # The pair's capability is its best trial: a slow trial says another process took the CPU or
            # the link for a moment, not that the path is slow (the median split loopback pairs 2.2x apart
            # on a loaded 2-core runner).
            row = rows[-1]
            fastest_us = row.min_us if isinstance(row.min_us, float) else row.time_us
            pairs.append(
                PairBw(spec.ranks[0], spec.ranks[1], formulas.algbw_gbps(row.size_bytes, fastest_us), row.size_bytes)
            )
    all_ranks = tuple(sorted(r.rank for r in ranks)) or tuple(range(world))
    n_pairs = world * (world - 1) // 2
    measured: tuple[tuple[int, ...], ...] | Unsupported
    if world >= 2 and len(pairs) == n_pairs:
        measured = islands(all_ranks, tuple(pairs))
    else:
        measured = Unsupported("bench", "needs every pair measured (--groups pairs)")
    expected_islands: tuple[tuple[int, ...], ...] | Unsupported = (
        plan.domains if plan.domains else Unsupported("bench", "NVLink domains of these ranks unknown")
    )
    status = "complete"
    if errors:
        status = "partial" if records else "failed"
    notes = list(plan.notes)
    if plan.domain_basis == "host":
        notes.append("CPU ranks: each host counts as one domain")
    for g in groups:
        if isinstance(g.ratio, float) and g.ratio > 1.15:
            notes.append(f"{g.name}: above the ring model ({g.ratio:.2f}x); NVLS or tree can exceed it")
    timed = sum(float(rec.get("timed_s", 0.0)) for rec in records)
    return BenchResult(
        source="topoaudit",
        collective="all_reduce",
        backend=backend,
        world_size=world,
        hosts=tuple(sorted(set(hosts.values()))),
        ranks=ranks,
        groups=tuple(groups),
        status=status,
        pairs=tuple(pairs),
        measured_islands=measured,
        expected_islands=expected_islands,
        errors=tuple(errors),
        notes=tuple(notes),
        environment=environment,
        wall_s=round(wall_s, 3),
        timed_s=round(timed, 6),
    )


_no_small = Unsupported("bench", "no size <= 64 KiB measured")


def _row(rec: dict[str, Any], n: int) -> BenchRow:
    trials = [float(t) for t in rec["trial_us"]]
    t = formulas.median(trials)
    size = int(rec["size"])
    return BenchRow(
        size_bytes=size,
        count=int(rec["count"]),
        dtype="float32",
        time_us=round(t, 3),
        algbw_gbps=formulas.algbw_gbps(size, t),
        busbw_gbps=formulas.busbw_gbps(size, t, n),
        wrong=int(rec["wrong"]),
        p50_us=round(formulas.percentile(trials, 50), 3),
        p99_us=round(formulas.percentile(trials, 99), 3),
        min_us=round(min(trials), 3),
        calls=int(rec["calls"]),
    )


def _expectation(
    spec: GroupSpec, machine: Machine | None, gpu_of: dict[int, int], hosts: dict[int, str], backend: str
) -> tuple[float | Unsupported, str]:
    if backend == "gloo":
        return Unsupported("bench-model", "gloo on CPU: no link model"), ""
    if machine is None:
        return Unsupported("bench-model", "no machine model (probe unavailable)"), ""
    if len({hosts.get(r) for r in spec.ranks}) > 1:
        return Unsupported("bench-model", "the group spans hosts; NIC rates are not modelled"), ""
    if not all(r in gpu_of for r in spec.ranks):
        return Unsupported("bench-model", "ranks not joined to the machine's GPUs"), ""
    exp = expected_busbw(machine, tuple(gpu_of[r] for r in spec.ranks))
    value = exp.busbw_gbps
    return (float(value), exp.basis) if isinstance(value, (int, float)) else (value, exp.basis)


__all__ = ["BenchConfig", "assemble", "build_result", "launched_env", "measure", "run_bench"]
