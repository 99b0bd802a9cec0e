"""Question: how long does reading an ``nvidia-smi topo -m`` paste take, as boxes grow and rows get damaged?

Four pastes built here: an 8-GPU box with 8 NICs, a 72-GPU rack with 18 NICs (the largest NVLink domain
shipped in one rack), the same rack with one row cut short (re-aligned against its mirror), and a 600-GPU
paste (75 NVSwitch nodes of 8). Each is parsed ``--repeat`` times and the best time kept.

With ``--before REV`` the same measurement runs on REV's code (exported with ``git archive``) and on the
working tree, one after the other in this one run, and the table shows both side by side with their ratio.
The unit tests check what these pastes read as, never how fast.

Usage: python benchmarks/parse_speed.py [--before REV] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def paste(gpus: int, nics: int, node: int) -> str:
    """``topo -m`` text: NVSwitch nodes of ``node`` GPUs joined over SYS, NICs on PCIe."""
    labels = [f"GPU{i}" for i in range(gpus)] + [f"NIC{i}" for i in range(nics)]
    lines = ["\t" + "\t".join(labels) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"]
    for i, a in enumerate(labels):
        cells = []
        for j, b in enumerate(labels):
            if a == b:
                cells.append(" X ")
            elif a[0] == b[0] == "G":
                cells.append("NV18" if i // node == j // node else "SYS")
            else:
                cells.append("PIX" if i % max(nics, 1) == j % max(nics, 1) else "SYS")
        numa = (i % node) // max(node // 2, 1)
        tail = [("0-47" if numa == 0 else "48-95"), str(numa), "N/A"] if a.startswith("GPU") else []
        lines.append("\t".join([a, *cells, *tail]))
    return "\n".join(lines) + "\n"


def cut_row(text: str, row: int) -> str:
    """``text`` with the cells of one GPU row after its diagonal dropped (a row cut short)."""
    lines = text.split("\n")
    fields = lines[row + 1].split("\t")
    lines[row + 1] = "\t".join(fields[: row + 2])
    return "\n".join(lines)


def measure(repeat: int) -> dict[str, float]:
    from topoaudit.parse.topo_matrix import parse_topo_matrix

    rack = paste(72, 18, 72)
    pastes = {
        "8 GPUs + 8 NICs": paste(8, 8, 8),
        "72 GPUs + 18 NICs": rack,
        "72 GPUs, one row cut": cut_row(rack, 40),
        "600 GPUs": paste(600, 0, 8),
    }
    best: dict[str, float] = {}
    for name, text in pastes.items():
        for _ in range(repeat):
            start = time.perf_counter()
            parse_topo_matrix(text)
            elapsed = time.perf_counter() - start
            best[name] = min(best.get(name, elapsed), elapsed)
    return best


def _run(code_root: Path, repeat: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(code_root))
    done = subprocess.run(
        [sys.executable, __file__, "--child", "--repeat", str(repeat)],
        env=env,
        cwd=code_root,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--before", help="a git revision to measure beside the working tree")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.repeat)))
        return
    runs: dict[str, dict[str, float]] = {}
    if args.before:
        with tempfile.TemporaryDirectory() as tmp:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "topoaudit"],
                                     check=True, capture_output=True).stdout  # fmt: skip
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            runs[args.before] = _run(Path(tmp), args.repeat)
    runs["now"] = _run(ROOT, args.repeat)
    names = list(runs)
    print(f"{'paste (best of ' + str(args.repeat) + ', seconds)':<32}" + "".join(f"{n:>12}" for n in names)
          + ("   now/before" if len(names) == 2 else ""))  # fmt: skip
    for key in runs["now"]:
        values = [runs[n].get(key, float("nan")) for n in names]
        ratio = f"   {values[1] / values[0]:.2f}x" if len(values) == 2 and values[0] else ""
        print(f"{key:<32}" + "".join(f"{v:12.4f}" for v in values) + ratio)


if __name__ == "__main__":
    main()
