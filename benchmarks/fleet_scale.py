"""How `topoaudit fleet` scales: 1,000 and 10,000 generated node reports, time and peak memory.

The nodes are the real A100 node report of tests/fixtures/fleet (an nccl-tests run re-judged), varied per
node: host name, GPU UUIDs, busbw (+-1%, and one node in a hundred at 0.7x). Each size runs in a fresh
process (peak RSS is per process); the figures printed are measured side by side in one run.

    .venv/bin/python benchmarks/fleet_scale.py [--nodes 1000,10000] [--jobs 1,2]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASE = Path(__file__).parents[1] / "tests" / "fixtures" / "fleet" / "report-a100-8gpu-nccltests.json"


def generate(directory: Path, nodes: int) -> None:
    base = json.loads(BASE.read_text(encoding="utf-8"))
    rng = random.Random(nodes)
    for k in range(nodes):
        data = copy.deepcopy(base)
        host = f"gpu{k:05d}"
        data["host"]["hostname"] = host
        for gpu in data["gpus"]:
            gpu["uuid"] = f"GPU-{host}-{gpu['index']}"
        scale = 0.7 if k % 100 == 99 else rng.uniform(0.99, 1.01)
        for group in data["bench"]["groups"]:
            for row in group["rows"]:
                row["busbw_gbps"] *= scale
        (directory / f"{host}.json").write_text(json.dumps(data), encoding="utf-8")


def measure(directory: str, jobs: int) -> None:
    """Run in a child: judge the fleet, print seconds and peak RSS as JSON."""
    from topoaudit.app import fleet as app

    start = time.perf_counter()
    report = app.fleet(app.FleetRequest(paths=(directory,), jobs=jobs))
    seconds = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = {"seconds": seconds, "peak_rss_mib": peak_kib / 1024, "worker_peak_rss_mib": children_kib / 1024}
    result.update(nodes=len(report.nodes), drain=len(report.drain), outliers=len(report.outliers))
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", default="1000,10000")
    parser.add_argument("--jobs", default="1", help="process counts to compare, e.g. 1,2")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, int(args.jobs))
        return
    rows = []
    for nodes in (int(n) for n in args.nodes.split(",")):
        with tempfile.TemporaryDirectory(prefix="fleet-scale-") as tmp:
            generate(Path(tmp), nodes)
            for jobs in (int(j) for j in args.jobs.split(",")):
                out = subprocess.run(
                    [sys.executable, __file__, "--measure", tmp, "--jobs", str(jobs)],
                    capture_output=True, text=True, check=True,
                )  # fmt: skip
                result = json.loads(out.stdout)
                rows.append((nodes, jobs, result))
                print(
                    f"{nodes:>6} nodes, {jobs} job(s): {result['seconds']:.1f} s "
                    f"({result['seconds'] / nodes * 1000:.1f} s per 1000 nodes), "
                    f"peak RSS {result['peak_rss_mib']:.0f} MiB "
                    f"(largest worker {result['worker_peak_rss_mib']:.0f} MiB); "
                    f"{result['drain']} to drain, {result['outliers']} outliers",
                    flush=True,
                )
    for jobs in sorted({j for _, j, _ in rows}):
        same = [(n, r) for n, j, r in rows if j == jobs]
        if len(same) >= 2:
            (n1, r1), (n2, r2) = same[0], same[-1]
            print(f"{jobs} job(s): time x{r2['seconds'] / r1['seconds']:.1f} for x{n2 / n1:.0f} nodes; "
                  f"peak RSS x{r2['peak_rss_mib'] / r1['peak_rss_mib']:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
