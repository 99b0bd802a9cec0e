"""Question: how long do the big boxes take, end to end, and how large are their reports?

Three boxes: a 576-GPU machine (eight NVLink domains of 72, the largest announced) built in memory, the
same machine with two GPU pairs of every domain down to SYS (a damaged fabric is judged pair by pair),
and a 600-GPU ``nvidia-smi topo -m`` paste (75 NVSwitch nodes of 8, SYS between them) read by the
parser. For each: read, analyse, write report.json, write report.html; the figures are seconds on this
machine and megabytes written. Targets: analyse + JSON under 2 s, HTML under 3 s and 5 MB.

With ``--before REV`` the same measurement runs on a checkout of REV and on the working tree, taking
turns in this one run, and the table shows both side by side with their ratio.

Usage: python benchmarks/analyze_scaling.py [--before REV] [--repeat N]
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


def topo_paste(n: int, node: int) -> str:
    """``nvidia-smi topo -m`` text for ``n`` GPUs in NVSwitch nodes of ``node`` GPUs joined over SYS."""
    labels = [f"GPU{i}" for i in range(n)]
    lines = ["\t" + "\t".join(labels) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"]
    for i in range(n):
        cells = ["X" if i == j else ("NV18" if i // node == j // node else "SYS") for j in range(n)]
        numa = (i % node) // (node // 2)
        cpus = "0-47" if numa == 0 else "48-95"
        lines.append(f"GPU{i}\t" + "\t".join(cells) + f"\t{cpus}\t{numa}\t\tN/A")
    lines += ["", "Legend:", "", "  X    = Self", "  SYS  = Connection traversing PCIe as well as the SMP interconnect",
              "  NV#  = Connection traversing a bonded set of # NVLinks"]  # fmt: skip
    return "\n".join(lines) + "\n"


def measure(repeat: int) -> dict[str, dict[str, float]]:
    """Seconds and megabytes per step for each box, the best of ``repeat`` runs (this process's code)."""
    import itertools

    from topoaudit.model.machine import Gpu, Link, Machine, level_from_code
    from topoaudit.model.report import SourceInfo
    from topoaudit.pipeline import analyze
    from topoaudit.readers import load_text
    from topoaudit.render import render

    def nvl72_racks(n: int, domain: int, down: frozenset[tuple[int, int]] = frozenset()) -> Machine:
        """``n`` GPUs in NVLink domains of ``domain``; the pairs ``down`` (positions inside a domain) are SYS."""
        gpus = tuple(Gpu(index=i, name="NVIDIA GB200") for i in range(n))
        links = []
        for i, j in itertools.combinations(range(n), 2):
            code = "NV18" if i // domain == j // domain and (i % domain, j % domain) not in down else "SYS"
            level, count = level_from_code(code)
            links.append(Link(f"GPU{i}", f"GPU{j}", code, level, count))
        return Machine("synthetic", gpus, (), tuple(links))

    paste = topo_paste(600, 8)
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("576 GPUs (8 x 72)", "576 GPUs, links down", "600-GPU paste"):
            best: dict[str, float] = {}
            for _ in range(repeat):
                figures: dict[str, float] = {}
                start = time.perf_counter()
                if name == "576 GPUs (8 x 72)":
                    machine, source = nvl72_racks(576, 72), SourceInfo("synthetic", "576x72")
                elif name.startswith("576"):
                    down = frozenset({(3, 40), (5, 6)})
                    machine, source = nvl72_racks(576, 72, down), SourceInfo("synthetic", "576x72 damaged")
                else:
                    loaded = load_text(paste, "paste.txt")
                    machine, source = loaded.machine, loaded.source
                figures["read s"] = time.perf_counter() - start
                start = time.perf_counter()
                report = analyze(machine, source=source)
                figures["analyse s"] = time.perf_counter() - start
                for fmt, file in (("json", "report.json"), ("html", "report.html")):
                    start = time.perf_counter()
                    text = render(report, fmt)
                    Path(tmp, file).write_text(text, encoding="utf-8")
                    figures[f"{fmt} s"] = time.perf_counter() - start
                    figures[f"{fmt} MB"] = len(text.encode()) / 1e6
                for key, value in figures.items():
                    best[key] = min(best.get(key, value), value)
            best["analyse+json s"] = best["analyse s"] + best["json s"]
            out[name] = best
    return out


def _run(code_root: Path) -> dict[str, dict[str, float]]:
    """One measurement of every box in a fresh process running the code at ``code_root``."""
    env = dict(os.environ, PYTHONPATH=str(code_root))
    done = subprocess.run(
        [sys.executable, __file__, "--child"],
        env=env,
        cwd=code_root,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, dict[str, float]] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--before", help="a git revision to measure beside the working tree")
    parser.add_argument("--repeat", type=int, default=1, help="turns per tree; each figure is the best turn")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(1)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"now": ROOT}
        if args.before:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", tmp, args.before],
                           check=True, capture_output=True)  # fmt: skip
            trees = {args.before: Path(tmp), "now": ROOT}
        try:
            # The two trees take turns, one fresh process each, so load from other work on the machine
            # falls on both alike; each figure is the best of its turns.
            turns = [{name: _run(root) for name, root in trees.items()} for _ in range(args.repeat)]
        finally:
            if args.before:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", tmp], capture_output=True)
    runs = {
        name: {
            box: {key: min(turn[name][box][key] for turn in turns) for key in turns[0][name][box]}
            for box in turns[0][name]
        }
        for name in trees
    }
    names = list(runs)
    for box in runs["now"]:
        print(box)
        print(f"  {'step':<16}" + "".join(f"{n:>12}" for n in names) + ("   now/before" if len(names) == 2 else ""))
        for key in runs["now"][box]:
            values = [runs[n][box].get(key, float("nan")) for n in names]
            ratio = f"   {values[1] / values[0]:.2f}x" if len(values) == 2 and values[0] else ""
            print(f"  {key:<16}" + "".join(f"{v:12.2f}" for v in values) + ratio)


if __name__ == "__main__":
    main()
