"""How `topoaudit fleet` scales: 1,000 and 10,000 generated node reports, time and peak memory.

The nodes are the real A100 node report of tests/fixtures/fleet (an nccl-tests run re-judged), varied per
node: host name, GPU UUIDs, busbw (+-1%, and one node in a hundred at 0.7x). Each size runs in a fresh
process (peak RSS is per process); the figures printed are measured side by side in one run. CPU seconds
(user + system, the process and its workers) are printed beside the wall time: on a loaded machine they are
the steadier figure. ``--compare REV`` measures the tree of that git revision too (``git archive`` into a
temporary folder), in the same rounds on the same generated nodes, so before and after share the load.

    .venv/bin/python benchmarks/fleet_scale.py [--nodes 1000,10000] [--jobs 1,2] [--compare HEAD~3]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT / "tests" / "fixtures" / "fleet" / "report-a100-8gpu-nccltests.json"


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
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "peak_rss_mib": peak_kib / 1024,
        "worker_peak_rss_mib": children_kib / 1024,
    }
    result.update(nodes=len(report.nodes), drain=len(report.drain), outliers=len(report.outliers))
    print(json.dumps(result))


def run_tree(tree: Path, directory: str, jobs: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [sys.executable, str(tree / "benchmarks" / "fleet_scale.py"), "--measure", directory, "--jobs", str(jobs)],
        capture_output=True, text=True, check=True, cwd=tree, env=env,
    )  # fmt: skip
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the child and its workers, whatever its tree measures
    result["cpu_seconds"] = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", default="1000,10000")
    parser.add_argument("--jobs", default="1,2", help="process counts to compare, e.g. 1,2")
    parser.add_argument("--compare", metavar="REV", help="a git revision to measure beside this tree")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, int(args.jobs))
        return
    with tempfile.TemporaryDirectory(prefix="fleet-scale-tree-") as other:
        trees = {"this tree": ROOT}
        if args.compare:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.compare], capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", other], input=archive.stdout, check=True)
            trees[args.compare] = Path(other)
        print(
            f"{'nodes':>6} {'jobs':>4} {'tree':>12} {'wall s':>7} {'cpu s':>7} {'peak MiB':>8} "
            f"{'drain':>5} {'outliers':>8}"
        )
        for nodes in (int(n) for n in args.nodes.split(",")):
            with tempfile.TemporaryDirectory(prefix="fleet-scale-") as tmp:
                generate(Path(tmp), nodes)
                for jobs in (int(j) for j in args.jobs.split(",")):
                    for label, tree in trees.items():  # same nodes, same round: before and after share the load
                        r = run_tree(tree, tmp, jobs)
                        print(
                            f"{nodes:>6} {jobs:>4} {label:>12} {r['seconds']:7.1f} {r['cpu_seconds']:7.1f} "
                            f"{max(r['peak_rss_mib'], r['worker_peak_rss_mib']):8.0f} {r['drain']:>5.0f} "
                            f"{r['outliers']:>8.0f}",
                            flush=True,
                        )


if __name__ == "__main__":
    main()
