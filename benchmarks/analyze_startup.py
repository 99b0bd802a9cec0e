"""Question: how much does `topoaudit analyze` cost as a whole process, against the floor of importing
its three libraries? Target: at most 1.5x `python -c "import networkx, rich, click"`.

Runs both side by side, interleaved, and prints medians and the ratio. Usage:
    python benchmarks/analyze_startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "topoaudit" / "examples" / "hgx-h100.txt"  # real 8-GPU, 12-NIC capture


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    commands = {
        "floor: import networkx, rich, click": [sys.executable, "-c", "import networkx, rich, click"],
        "topoaudit analyze (console)": [sys.executable, "-m", "topoaudit", "analyze", str(FIXTURE), "--no-color"],
        "topoaudit analyze --format json": [
            *(sys.executable, "-m", "topoaudit", "analyze", str(FIXTURE)),
            *("--format", "json"),
        ],
        "topoaudit --help": [sys.executable, "-m", "topoaudit", "--help"],
    }
    for cmd in commands.values():  # warm the page cache and .pyc files
        timed(cmd)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            samples[name].append(timed(cmd))
    floor = statistics.median(samples["floor: import networkx, rich, click"])
    print(f"{'command':40} {'median s':>9} {'ratio to floor':>15}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:40} {median:9.3f} {median / floor:15.2f}")


if __name__ == "__main__":
    main()
