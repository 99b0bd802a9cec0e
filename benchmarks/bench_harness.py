"""Bench harness overhead, measured (gloo on CPU here; pass --backend nccl on a GPU box).

1. Per-call time of one size as the harness measures it (warm-up, barrier, refill, timed trials, MAX over
   ranks) against a bare ``torch.distributed`` loop over the same buffer in the same processes, sizes
   1 MiB .. 16 MiB, alternated 3 times; the ratio should stay within 5% from 1 MiB up.
2. A full default sweep's wall time against the sum of its timed collectives (overhead ratio).

    .venv/bin/python benchmarks/bench_harness.py [--nproc 2] [--max-bytes 64M]
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time

SIZES = (1 << 20, 4 << 20, 16 << 20)


def _rank(rank: int, world: int, port: int, backend: str, queue: object) -> None:
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    import torch
    import torch.distributed as dist

    from topoaudit.bench.config import BenchConfig
    from topoaudit.bench.groups import GroupSpec
    from topoaudit.bench.rank import measure

    device = torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")
    if backend == "nccl":
        torch.cuda.set_device(device)
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))  # fmt: skip
    spec = GroupSpec("all", "all", tuple(range(world)), True)
    config = BenchConfig(backend=backend, target_s=0.2, warmup=2)
    out = {}
    for size in SIZES:
        harness, bare = [], []
        for _ in range(3):
            rec = measure(spec, None, size, rank, backend, config, device, rank)
            harness.append(statistics.median(rec["trial_us"]))
            buf = torch.ones(size // 4, device=device)
            calls = max(1, rec["calls"] // len(rec["trial_us"]))
            trials = []
            for _ in range(len(rec["trial_us"])):  # same trial shape as the harness, no refill, no events
                dist.barrier()
                if backend == "nccl":
                    torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(calls):
                    dist.all_reduce(buf)
                if backend == "nccl":
                    torch.cuda.synchronize()
                trials.append((time.perf_counter() - t0) / calls * 1e6)
            per = torch.tensor([statistics.median(trials)], dtype=torch.float64, device=device)
            dist.all_reduce(per, op=dist.ReduceOp.MAX)
            bare.append(float(per.item()))
        out[size] = (statistics.median(harness), statistics.median(bare))
    if rank == 0:
        queue.put(out)  # type: ignore[attr-defined]
    dist.destroy_process_group()


def compare(nproc: int, backend: str) -> dict[int, tuple[float, float]]:
    import multiprocessing as mp
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_rank, args=(r, nproc, port, backend, queue)) for r in range(nproc)]
    for p in procs:
        p.start()
    result = queue.get(timeout=600)
    for p in procs:
        p.join(60)
    return result


def sweep(nproc: int, backend: str, max_bytes: int) -> tuple[float, float, int]:
    from topoaudit.bench import BenchConfig, run_bench

    result = run_bench(BenchConfig(backend=backend, nproc=nproc, max_bytes=max_bytes))
    assert result is not None and result.status == "complete", result
    return result.wall_s, result.timed_s, len(result.groups[0].rows)


def main() -> None:
    from topoaudit.bench.formulas import format_size, parse_size

    ap = argparse.ArgumentParser()
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--backend", default="gloo")
    ap.add_argument("--max-bytes", default="64M")
    args = ap.parse_args()
    print(f"# bench harness benchmark: {args.backend}, {args.nproc} ranks, {os.cpu_count()} CPUs", flush=True)
    print(f"{'size':>8}  {'harness us/call':>16}  {'bare loop us/call':>18}  {'ratio':>6}")
    for size, (h, b) in compare(args.nproc, args.backend).items():
        print(f"{format_size(size):>8}  {h:16.1f}  {b:18.1f}  {h / b:6.3f}")
    wall, timed, rows = sweep(args.nproc, args.backend, parse_size(args.max_bytes))
    print(f"default sweep 8 B..{args.max_bytes} ({rows} sizes): wall {wall:.2f} s, timed collectives {timed:.2f} s, "
          f"overhead ratio {wall / timed:.2f} (incl. spawning {args.nproc} ranks, importing torch)")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
