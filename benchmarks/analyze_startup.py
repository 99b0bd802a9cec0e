"""Question: how much does a topoaudit command cost as a whole process, against the floor of importing
the three libraries it is built on? Target: `analyze` to the terminal on a real 8-GPU matrix and `plan`
each at most 1.5x `python -c "import networkx, rich, click"`; `--help` far below the floor. A partial
mesh (DGX-1) is the matrix whose placements need networkx's cliques: it shows what networkx adds.

Runs every command side by side, interleaved, and prints the median wall time and the median CPU time
(user + system of the child process) of each, with its ratio to the floor's. On a shared, loaded machine
the CPU time is the steadier figure: waiting for a core is not the command's cost. With
``--compare DIR`` (another checkout, e.g. ``git archive <commit> | tar -x -C DIR``) the same commands run
from that tree too, in the same rounds, so before and after are measured under the same load. Usage:
    python benchmarks/analyze_startup.py [--runs 15] [--compare DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "topoaudit" / "examples" / "hgx-h100.txt"  # real 8-GPU, 12-NIC capture
MESH = ROOT / "topoaudit" / "examples" / "dgx1-cube-mesh.txt"  # real partial mesh: its cliques need networkx
FLOOR = "floor: import networkx, rich, click"
COMMANDS: dict[str, list[str]] = {
    "analyze (console)": ["analyze", str(FIXTURE), "--no-color"],
    "analyze --format json": ["analyze", str(FIXTURE), "--format", "json"],
    "analyze (console), DGX-1 cube mesh (networkx)": ["analyze", str(MESH), "--no-color"],
    "plan --params 744B --precision int4 --gpu H200": [
        "plan",
        "--params",
        "744B",
        "--precision",
        "int4",
        "--gpu",
        "H200",
    ],
    "--help": ["--help"],
}


PYCACHE = Path(tempfile.gettempdir()) / "topoaudit-startup-pycache"


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """Wall time of one process; the tree in ``cwd`` is the topoaudit that ``-m`` imports.

    Bytecode is cached (outside the tree) as in an installed package, even where the shell sets
    PYTHONDONTWRITEBYTECODE: otherwise every run would time the compiler, not the command.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(cwd), PYTHONPYCACHEPREFIX=str(PYCACHE), COLUMNS="120")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--compare", type=Path, help="another checkout to measure in the same rounds")
    args = parser.parse_args()
    trees = {"": ROOT, **({"before: ": args.compare.resolve()} if args.compare else {})}
    runs: dict[str, tuple[list[str], Path]] = {FLOOR: ([sys.executable, "-c", "import networkx, rich, click"], ROOT)}
    for label, tree in trees.items():
        for name, argv in COMMANDS.items():
            runs[f"{label}{name}"] = ([sys.executable, "-m", "topoaudit", *argv], tree)
    for cmd, cwd in runs.values():  # warm the page cache and .pyc files
        timed(cmd, cwd)
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.runs):
        for name, (cmd, cwd) in runs.items():
            seconds, cpu_seconds = timed(cmd, cwd)
            wall[name].append(seconds)
            cpu[name].append(cpu_seconds)
    floor_wall, floor_cpu = statistics.median(wall[FLOOR]), statistics.median(cpu[FLOOR])
    print(f"{'command':56} {'wall s':>7} {'ratio':>6} {'cpu s':>7} {'ratio':>6}   (medians of {args.runs} runs)")
    for name in runs:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"{name:56} {w:7.3f} {w / floor_wall:6.2f} {c:7.3f} {c / floor_cpu:6.2f}")


if __name__ == "__main__":
    main()
