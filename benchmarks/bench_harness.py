"""Bench harness overhead, measured side by side in one run (gloo on CPU here; --backend nccl on a GPU box).

1. Per-call time of one size as the harness's ``measure`` reports it (warm-up, data check, timed trials, MAX
   over ranks) against a bare ``torch.distributed`` loop over a buffer of the same size in the same processes,
   1 MiB .. 16 MiB, interleaved ``--reps`` times; medians, and the spread of the per-repetition ratios (how
   noisy the machine was). With ``--before TREE`` the ``measure`` of another checkout (its
   ``topoaudit/bench/rank.py``) takes its turn in the same interleaving. Target: within 5% from 1 MiB up.
2. A whole sweep's wall time against the sum of its timed collectives, ``--sweep-target-s`` per size so that
   the timed part is long (target: at most 1.3x for a timed part of 20 s or more); with ``--before`` the two
   trees take turns, each sweep in a fresh process.
3. Seen from outside: the busbw ``run_bench`` reports for one size (default 4 MiB) against a bare loop in
   freshly spawned processes, taken in turns.

    .venv/bin/python benchmarks/bench_harness.py [--nproc 2] [--reps 5] [--before /path/to/old/checkout]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

SIZES = (1 << 20, 4 << 20, 16 << 20)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _result(queue: Any, procs: list[Any]) -> Any:
    """Rank 0's answer; an error as soon as every rank has ended without one (a crash, a port taken)."""
    import queue as queues

    while True:
        try:
            return queue.get(timeout=1.0)
        except queues.Empty:
            if all(not p.is_alive() for p in procs):
                raise RuntimeError(f"ranks ended without a result: exit codes {[p.exitcode for p in procs]}") from None


def _load_measure(tree: str) -> Any:
    """``measure`` from ``tree``'s rank.py, loaded under its own name beside this tree's."""
    spec = importlib.util.spec_from_file_location("rank_before", os.path.join(tree, "topoaudit/bench/rank.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.measure


def _bare(dist: Any, torch: Any, backend: str, size: int, calls: int, trials: int, device: Any) -> float:
    """Median us per call of a bare loop (one barrier, then ``trials`` x ``calls`` all-reduces), MAX over ranks."""
    buf = torch.zeros(size // 4, device=device)
    dist.all_reduce(buf)  # the harness warms up too
    dist.barrier()
    per: list[float] = []
    for _ in range(trials):
        if backend == "nccl":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            dist.all_reduce(buf)
        if backend == "nccl":
            torch.cuda.synchronize()
        per.append((time.perf_counter() - t0) / calls * 1e6)
    out = torch.tensor([statistics.median(per)], dtype=torch.float64, device=device)
    dist.all_reduce(out, op=dist.ReduceOp.MAX)
    return float(out.item())


def _rank(rank: int, world: int, port: int, backend: str, reps: int, before: str, queue: Any) -> None:
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    import torch
    import torch.distributed as dist

    from topoaudit.bench.config import BenchConfig
    from topoaudit.bench.groups import GroupSpec
    from topoaudit.bench.rank import measure

    contenders = {"harness": measure}
    if before:
        contenders["before"] = _load_measure(before)
    device = torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")
    if backend == "nccl":
        torch.cuda.set_device(device)
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))  # fmt: skip
    spec = GroupSpec("all", "all", tuple(range(world)), True)
    config = BenchConfig(backend=backend, target_s=0.2, warmup=2)
    out: dict[int, dict[str, list[float]]] = {}
    for size in SIZES:
        seen: dict[str, list[float]] = {name: [] for name in (*contenders, "bare")}
        for rep in range(reps):
            shape = (20, 5)
            order = list(contenders.items())
            for name, fn in order if rep % 2 == 0 else order[::-1]:  # alternate who goes first
                rec = fn(spec, None, size, rank, backend, config, device, rank)
                seen[name].append(statistics.median(rec["trial_us"]))
                shape = (max(1, rec["calls"] // len(rec["trial_us"])), len(rec["trial_us"]))
            seen["bare"].append(_bare(dist, torch, backend, size, shape[0], shape[1], device))
        out[size] = seen
    if rank == 0:
        queue.put(out)
    dist.destroy_process_group()


def _spawned(target: Any, nproc: int, *args: Any) -> Any:
    """Run ``target(rank, nproc, port, *args, queue)`` in ``nproc`` spawned processes; return what rank 0 queues."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=target, args=(r, nproc, port, *args, queue)) for r in range(nproc)]
    for p in procs:
        p.start()
    result = _result(queue, procs)
    for p in procs:
        p.join(60)
    return result


def compare(nproc: int, backend: str, reps: int, before: str) -> dict[int, dict[str, list[float]]]:
    result: dict[int, dict[str, list[float]]] = _spawned(_rank, nproc, backend, reps, before)
    return result


def _sweep_child(nproc: int, backend: str, min_bytes: int, max_bytes: int, target_s: float) -> None:
    """One sweep in this process (a fresh one per turn): print wall, timed and the last row's busbw as JSON."""
    from topoaudit.bench import BenchConfig, run_bench

    config = BenchConfig(backend=backend, nproc=nproc, min_bytes=min_bytes, max_bytes=max_bytes, target_s=target_s)
    result = run_bench(config)
    assert result is not None and result.status == "complete", result
    rows = result.groups[0].rows
    print(json.dumps({"wall_s": result.wall_s, "timed_s": result.timed_s, "rows": len(rows),
                      "busbw_gbps": rows[-1].busbw_gbps}))  # fmt: skip


def _in_fresh_process(tree: str, *args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": tree, "PYTHONWARNINGS": "ignore", "GLOO_SOCKET_IFNAME": "lo"}
    done = subprocess.run([sys.executable, os.path.abspath(__file__), *args], env=env, capture_output=True,
                          text=True, check=False, cwd=tree)  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"{' '.join(args)} in {tree} failed:\n{done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _bare_outside_child(nproc: int, backend: str, size: int, seconds: float) -> None:
    """A bare loop in freshly spawned processes for about ``seconds``: print its busbw as JSON."""
    us = float(_spawned(_bare_rank, nproc, backend, size, seconds))
    print(json.dumps({"busbw_gbps": size / 1e9 / (us * 1e-6) * 2 * (nproc - 1) / nproc}))


def _bare_rank(rank: int, world: int, port: int, backend: str, size: int, seconds: float, queue: Any) -> None:
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    import torch
    import torch.distributed as dist

    device = torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")
    if backend == "nccl":
        torch.cuda.set_device(device)
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))  # fmt: skip
    buf = torch.zeros(size // 4, device=device)
    for _ in range(2):
        dist.all_reduce(buf)
    t0 = time.perf_counter()
    dist.all_reduce(buf)
    if backend == "nccl":
        torch.cuda.synchronize()
    est = torch.tensor([time.perf_counter() - t0], dtype=torch.float64, device=device)
    dist.all_reduce(est, op=dist.ReduceOp.MAX)  # every rank must agree on the number of calls
    calls = max(1, int(seconds / 5 / max(1e-6, float(est.item()))))
    us = _bare(dist, torch, backend, size, calls, 5, device)
    if rank == 0:
        queue.put(us)
    dist.destroy_process_group()


def _spread(ratios: list[float]) -> str:
    return f"{min(ratios):.3f}-{max(ratios):.3f}"


def main() -> None:
    from topoaudit.units import format_size, parse_size

    ap = argparse.ArgumentParser()
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--backend", default="gloo")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--before", default="", help="another checkout whose harness takes turns with this one")
    ap.add_argument("--max-bytes", default="128M", help="largest size of the sweep of part 2")
    ap.add_argument("--sweep-target-s", type=float, default=3.0, help="timed seconds per size in part 2")
    ap.add_argument("--turns", type=int, default=2, help="turns of parts 2 and 3")
    ap.add_argument("--outside-bytes", default="4M")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: 1,2,3")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "sweep":
        _sweep_child(args.nproc, args.backend, 8, parse_size(args.max_bytes), args.sweep_target_s)
        return
    if args.child == "startup":  # one 8-byte size: the run's fixed cost (spawning ranks, importing torch, joining)
        _sweep_child(args.nproc, args.backend, 8, 8, 0.01)
        return
    if args.child == "one":
        size = parse_size(args.outside_bytes)
        _sweep_child(args.nproc, args.backend, size, size, 0.1)
        return
    if args.child == "bare":
        _bare_outside_child(args.nproc, args.backend, parse_size(args.outside_bytes), 0.1)
        return
    skip = set(args.skip.split(","))
    trees = {"harness": ROOT, **({"before": os.path.abspath(args.before)} if args.before else {})}
    load = os.getloadavg()[0]
    print(f"# bench harness benchmark: {args.backend}, {args.nproc} ranks, {os.cpu_count()} CPUs, "
          f"load average {load:.1f} at start", flush=True)  # fmt: skip
    if "1" not in skip:
        print("## 1. per-call us, medians of interleaved repetitions; ratio spread = min-max over repetitions")
        for size, seen in compare(args.nproc, args.backend, args.reps, trees.get("before", "")).items():
            bare = statistics.median(seen["bare"])
            for name in trees:
                ratios = [h / b for h, b in zip(seen[name], seen["bare"], strict=True)]
                print(f"{format_size(size):>8} {name:>8} {statistics.median(seen[name]):10.1f} us  bare "
                      f"{bare:10.1f} us  ratio {statistics.median(ratios):6.3f} (spread {_spread(ratios)})",
                      flush=True)  # fmt: skip
    common = ["--nproc", str(args.nproc), "--backend", args.backend]
    if "2" not in skip:
        print(f"## 2. sweep 8 B..{args.max_bytes}, {args.sweep_target_s:g} s per size; fresh process per turn")
        sweeps: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
        for turn in range(args.turns):
            for name, tree in trees.items() if turn % 2 == 0 else reversed(trees.items()):
                doc = _in_fresh_process(tree, "--child", "sweep", "--max-bytes", args.max_bytes,
                                        "--sweep-target-s", str(args.sweep_target_s), *common)  # fmt: skip
                doc["startup_s"] = _in_fresh_process(tree, "--child", "startup", *common)["wall_s"]
                sweeps[name].append(doc)
                print(f"   {name:>8} turn {turn + 1}: wall {doc['wall_s']:.2f} s, timed {doc['timed_s']:.2f} s, "
                      f"ratio {doc['wall_s'] / doc['timed_s']:.2f}; an 8-byte run's wall (start-up) "
                      f"{doc['startup_s']:.2f} s", flush=True)  # fmt: skip
        for name, docs in sweeps.items():
            ratios = [d["wall_s"] / d["timed_s"] for d in docs]
            less = [(d["wall_s"] - d["startup_s"]) / d["timed_s"] for d in docs]
            print(f"{name:>8}: wall / timed median {statistics.median(ratios):.2f} (spread {_spread(ratios)}); "
                  f"less the start-up {statistics.median(less):.2f} (spread {_spread(less)})")  # fmt: skip
    if "3" not in skip:
        print(f"## 3. seen from outside: run_bench at {args.outside_bytes} / bare loop in fresh processes, in turns")
        seen3: dict[str, list[float]] = {name: [] for name in (*trees, "bare")}
        for _turn in range(args.turns + 1):
            for name, tree in trees.items():
                seen3[name].append(_in_fresh_process(tree, "--child", "one", "--outside-bytes", args.outside_bytes,
                                                     *common)["busbw_gbps"])  # fmt: skip
                seen3["bare"].append(_in_fresh_process(ROOT, "--child", "bare", "--outside-bytes",
                                                       args.outside_bytes, *common)["busbw_gbps"])  # fmt: skip
        bare = statistics.median(seen3["bare"])
        for name in trees:
            ratios = [h / bare for h in seen3[name]]
            print(f"{name:>8}: busbw {statistics.median(seen3[name]):.3f} GB/s, bare {bare:.3f} GB/s, "
                  f"ratio {statistics.median(ratios):.3f} (spread {_spread(ratios)})")  # fmt: skip
    print(f"# load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
