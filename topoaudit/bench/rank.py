"""What one rank does: join the process group, say where it runs, agree on the plan, sweep every group and
size, time and check each all-reduce, and write rows and errors to the run's store as it goes.

Timing: each process is bound to its GPU (``set_device`` + ``device_id``) before the first collective. Every
(group, size) is warmed up (the first size of a group pays the communicator's setup); the last warm-up call
reduces a known pattern and is checked element-wise (``#wrong``, summed over ranks). The timed trials follow
back to back on a zeroed buffer (zeros summed stay zero, so nothing is refilled and nothing can overflow):
``k`` in-place all-reduces per trial, bracketed by CUDA events (GPU, all trials queued behind a short
``_sleep`` that hides launch overhead) or by ``perf_counter`` stamps (CPU), after one barrier; no barrier,
refill or check runs between trials. Per-trial times are reduced with MAX over the group (the slowest rank
counts).

torch is imported inside functions only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import itertools
import json
import os
import re
import signal
import socket
import time
import warnings
from dataclasses import asdict
from typing import Any

from topoaudit.bench import formulas
from topoaudit.bench.assemble import plan_from_document, ranks_from_infos
from topoaudit.bench.config import BenchConfig, Progress
from topoaudit.bench.groups import GroupSpec, make_plan
from topoaudit.bench.node_pairs import runs_with_next
from topoaudit.bench.store import KEY
from topoaudit.units import format_size

# torch warns on import when numpy is absent; the bench never converts tensors to numpy, so the warning is noise
# on every rank's stderr.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)

PATTERN_MOD = 13  # element i of rank r holds (i % 13) + r + 1: every sum is a small exact integer


class Stopped(Exception):
    """SIGTERM (torchrun, Slurm) while a launched rank sweeps: stop and report what was measured."""


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask, as taskset/cgroups set it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def spawned_rank(rank: int, world: int, host: str, port: int, backend: str, config: BenchConfig, parent: int) -> None:
    """Entry point of a spawned rank (module level so ``spawn`` can pickle it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it ends us by pid
    _die_with_parent(parent)
    for key, value in config.rank_env(backend):
        os.environ[key] = value
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    import torch.distributed as dist

    store = dist.TCPStore(host, port, None, False, timeout=datetime.timedelta(seconds=config.timeout_s + 30))
    ok = rank_main(rank, world, rank, world, backend, config, store, spawned=True)
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


def rank_main(
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
        torch.cuda.set_device(device)  # bind before the first collective: NCCL picks its device then
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
    except (KeyboardInterrupt, Stopped):
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
        "boot_id": _boot_id(),
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


def _boot_id() -> str:
    """This kernel's boot id: one per machine (its containers share it), so hosts of one name are told apart."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            return fh.read().strip()
    except OSError:
        return ""


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
    ranks, host_notes = ranks_from_infos(infos)
    plan = make_plan(config.groups, ranks, config.machine)
    if host_notes:
        plan = dataclasses.replace(plan, notes=(*host_notes, *plan.notes))
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

    specs = list(plan_from_document(plan).groups)
    # every rank creates every group, in the same order (torch's new_group contract)
    handles = [None if len(s.ranks) == world else dist.new_group(list(s.ranks)) for s in specs]
    seq = 0
    for index, (spec, handle) in enumerate(zip(specs, handles, strict=True)):
        if rank in spec.ranks:
            sizes = plan["sizes"] if spec.sweep else ([plan["pair_size"]] if plan["pair_size"] else [])
            for size in sizes:
                where.update(group=spec.name, size=size)
                warmup = config.warmup if size == sizes[0] else 1  # setup is paid once per group
                record = measure(spec, handle, size, rank, backend, config, device, local_rank, warmup=warmup)
                if rank == spec.ranks[0]:
                    store.set(KEY + f"rec/{rank}/{seq}", json.dumps(record))
                    seq += 1
                    store.set(KEY + f"nrec/{rank}", str(seq))
                    store.add(KEY + "progress", 1)
                    store.set(KEY + "last", f"{spec.name} {format_size(size)}")
                if progress is not None:
                    progress(int(store.add(KEY + "progress", 0)), int(plan["steps"]), f"{spec.name}")
        where.update(group=f"after {spec.name}", size=0)
        if runs_with_next(spec.round_no, specs[index + 1].round_no if index + 1 < len(specs) else None):
            continue  # the disjoint node pairs of one round run at once; the round ends at one barrier
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
    *,
    warmup: int | None = None,
) -> dict[str, Any]:
    """One (group, size): warm up, check the data, time trials back to back; the MAX over the group of every trial.

    ``warmup`` calls precede the timing (default ``config.warmup``; the first size of a group pays the
    communicator's setup, later sizes need one). The last warm-up call carries a known pattern and is checked
    element-wise, so the check costs no extra collective. The timed calls then run on a zeroed buffer: a sum of
    zeros stays zero however often it is repeated, so nothing is refilled between trials and the trials run
    back to back, with no barrier, refill or host work between them.
    """
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

    def barrier() -> None:
        if cuda:
            dist.barrier(group=group, device_ids=[local_rank])
        else:
            dist.barrier(group=group)

    # warm-up: the first call on a group pays communicator / channel setup; the last one is the data check
    est = 0.0
    for _ in range(max(1, config.warmup if warmup is None else warmup)):
        buf.copy_(base).add_(me + 1)
        if config.hook("corrupt_rank") == rank and at_size:
            buf[count // 2] += 1.0  # as a link that flips data would
        barrier()
        t0 = time.perf_counter()
        dist.all_reduce(buf, group=group)
        if cuda:
            _wait_cuda(torch, config.timeout_s)
        est = time.perf_counter() - t0
    buf.sub_(base, alpha=n).sub_(n * (n + 1) / 2)
    wrong = torch.count_nonzero(buf).to(torch.float64).reshape(1)
    est_t = torch.tensor([est], dtype=torch.float64, device=device)
    dist.all_reduce(est_t, op=dist.ReduceOp.MAX, group=group)
    est = float(est_t.item())
    calls = formulas.calls_per_trial(est, n, target_s=config.target_s / 5)
    trials = formulas.trials_for(est * calls, target_s=config.target_s)

    buf.zero_()
    barrier()  # one start line for the group; the collectives themselves keep the trials in step after it
    if cuda:
        per_call_s = _timed_cuda(torch, dist, buf, group, device, calls, trials, config.timeout_s)
    else:
        stamps = [time.perf_counter()]
        for _ in range(trials):
            for _ in range(calls):
                dist.all_reduce(buf, group=group)
            stamps.append(time.perf_counter())
        per_call_s = [(b - a) / calls for a, b in itertools.pairwise(stamps)]

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


def _timed_cuda(
    torch: Any, dist: Any, buf: Any, group: Any, device: Any, calls: int, trials: int, timeout_s: float
) -> list[float]:
    """Every trial queued at once between CUDA events, behind a short ``_sleep`` that hides the launches;
    one wait at the end. Seconds per call, per trial."""
    events = [torch.cuda.Event(enable_timing=True) for _ in range(trials + 1)]
    torch.cuda._sleep(_sleep_cycles(torch, device, calls * trials))  # keep the GPU busy while we queue
    events[0].record()
    for event in events[1:]:
        for _ in range(calls):
            dist.all_reduce(buf, group=group)
        event.record()
    _wait_event(events[-1], timeout_s)
    return [a.elapsed_time(b) / 1e3 / calls for a, b in itertools.pairwise(events)]


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


__all__ = ["PATTERN_MOD", "Stopped", "measure", "rank_main", "spawned_rank", "usable_cores"]
