"""Question: how does analysis time grow with machine size? Synthetic NVSwitch machines of 8, 72 and 576
GPUs (domains of 8 and of 72), analysed in-process and rendered to JSON. Target: 72 GPUs well under 1 s.

Usage: python benchmarks/analyze_scaling.py
"""

from __future__ import annotations

import itertools
import time

from topoaudit.model.machine import Gpu, Link, Machine, level_from_code
from topoaudit.model.report import SourceInfo
from topoaudit.pipeline import analyze
from topoaudit.render import render


def synthetic(n: int, domain: int) -> Machine:
    gpus = tuple(Gpu(index=i, name="NVIDIA GB200") for i in range(n))
    links = []
    for i, j in itertools.combinations(range(n), 2):
        code = "NV18" if i // domain == j // domain else ("NODE" if i // 4 == j // 4 else "SYS")
        level, count = level_from_code(code)
        links.append(Link(f"GPU{i}", f"GPU{j}", code, level, count))
    return Machine("synthetic", gpus, (), tuple(links))


def main() -> None:
    print(f"{'GPUs':>5} {'domain':>6} {'links':>7} {'analyze s':>10} {'json s':>8} {'vs 8 GPUs':>10}")
    base = None
    for n, domain in ((8, 8), (72, 8), (72, 72), (576, 8), (576, 72)):
        machine = synthetic(n, domain)
        start = time.perf_counter()
        report = analyze(machine, source=SourceInfo("synthetic", f"{n}x{domain}"))
        mid = time.perf_counter()
        render(report, "json")
        end = time.perf_counter()
        total = end - start
        base = base or total
        print(f"{n:5} {domain:6} {len(machine.links):7} {mid - start:10.3f} {end - mid:8.3f} {total / base:9.1f}x")


if __name__ == "__main__":
    main()
