"""How long a probe of a healthy 8-GPU box takes, against the fake NVML of the tests (HGX H100 scenario).

Measures the NVML part (real pynvml wrappers over the fake library, per-call timeout worker included),
sysfs, and the two nvidia-smi runs (a fake script: this measures process start, not nvidia-smi itself),
then snapshot -> Machine -> Report. Run: .venv/bin/python benchmarks/probe_speed.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "probe"))

import pytest
from fakebox import make_box

from topoaudit.pipeline import analyze
from topoaudit.probe.collect import probe
from topoaudit.readers.snapshot import facts_of_snapshot


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scenario", default="hgx-h100")
    args = parser.parse_args()
    mp = pytest.MonkeyPatch()
    tmp = Path(tempfile.mkdtemp(prefix="topoaudit-probe-bench-"))
    box = make_box(args.scenario, tmp, mp)
    rows: dict[str, list[float]] = {"probe (no nvidia-smi)": [], "probe (with nvidia-smi)": [], "analyze": []}
    calls = ""
    for _ in range(args.repeat):
        for g in box.scenario.gpus:
            g.calls = 0
        t = time.perf_counter()
        snap = probe(box.root, run_nvidia_smi=False)
        rows["probe (no nvidia-smi)"].append(time.perf_counter() - t)
        calls = snap.notes[-1]
        t = time.perf_counter()
        snap = probe(box.root)
        rows["probe (with nvidia-smi)"].append(time.perf_counter() - t)
        t = time.perf_counter()
        loaded = facts_of_snapshot(snap, "bench", "live")
        analyze(loaded.machine, source=loaded.source)
        rows["analyze"].append(time.perf_counter() - t)
    mp.undo()
    print(f"scenario {args.scenario}: {len(box.scenario.gpus)} GPUs, {calls}, {args.repeat} runs")
    for name, values in rows.items():
        print(f"  {name:26} median {statistics.median(values) * 1000:8.1f} ms   max {max(values) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
