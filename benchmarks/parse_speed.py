"""Question: how long does reading a paste take: an ``nvidia-smi topo -m`` as boxes grow and rows get damaged,
and the line prefixes, parts and known signatures of a 10 MB NCCL log?

Four ``topo -m`` pastes built here: an 8-GPU box with 8 NICs, a 72-GPU rack with 18 NICs (the largest NVLink
domain shipped in one rack), the same rack with one row cut short (re-aligned against its mirror), and a 600-GPU
paste (75 NVSwitch nodes of 8). Three NCCL logs of 10 MB: one as NCCL writes it (lines that differ only in
their numbers), the same behind ``[rankN]:`` and timestamp prefixes, and one whose every line carries its own
hex token (no two lines alike: the signature matcher's worst case). The signature matcher is also timed against
trying every catalog pattern on every line of the first megabyte. Each is run ``--repeat`` times and the best
time kept.

With ``--before REV`` the same measurement runs on REV's code (exported with ``git archive``) and on the
working tree, one after the other in this one run, and the table shows both side by side with their ratio.
The unit tests check what these pastes read as, never how fast.

Usage: python benchmarks/parse_speed.py [--before REV] [--repeat N]
"""

from __future__ import annotations

import argparse
import contextlib
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


def nccl_log(size_bytes: int, unique: bool = False, prefixed: bool = False) -> str:
    """An NCCL_DEBUG=INFO log of about ``size_bytes``: 2 nodes of 8 GPUs, channel, tree, network and environment
    lines, a WARN every thousand lines; with ``unique`` every line carries its own hex token."""
    shapes = (
        "NCCL INFO Channel {c:02d}/0 : {r}[{d}] -> {n}[{e}] via P2P/CUMEM/read",
        "NCCL INFO Channel {c:02d}/0 : {r}[{d}] -> {m}[{d}] [send] via NET/IB/{d}/GDRDMA",
        "NCCL INFO Trees [0] {n}/-1/-1->{r}->-1 [1] -1/-1/-1->{r}->{n}",
        "NCCL INFO comm 0x55d5c3a0 rank {r} nRanks 16 nNodes 2 localRanks 8 localRank {d} MNNVL 0",
        "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [RO]; OOB ib0:10.1.0.7<0>",
        "NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
        "NCCL INFO 32 coll channels, 32 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer",
        "NCCL INFO NCCL_IB_HCA set to mlx5_0,mlx5_1,mlx5_2,mlx5_3",
    )
    warn = "transport/nvls.cc:254 NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'"
    lines, total, i = [], 0, 0
    while total < size_bytes:
        r, d = i % 16, i % 8
        head = f"node{r // 8}:{1000 + d}:{2000 + d} [{d}] "
        if i % 1000 == 999:
            body = warn
        else:
            shape = shapes[(i * 7) % len(shapes)]
            body = shape.format(c=i % 32, r=r, d=d, n=(r + 1) % 16, e=(d + 1) % 8, m=(r + 8) % 16)
        if unique:
            body += f" id 0x{(i * 2654435761) % 2**48:012x}"
        if prefixed:
            head = f"[rank{r}]: 2024-05-01T12:{i // 60 % 60:02d}:{i % 60:02d}.{i % 10**6:06d}Z " + head
        line = head + body
        lines.append(line)
        total += len(line) + 1
        i += 1
    return "\n".join(lines) + "\n"


def framework_log(size_bytes: int) -> str:
    """A training script's own log of about ``size_bytes``, with no word of the GPU stack in it: the text a paste
    carries around its NCCL lines, whose kind is decided by its words and layout."""
    lines, total, i = [], 0, 0
    while total < size_bytes:
        line = (
            f"2024-05-01 12:{i // 60 % 60:02d}:{i % 60:02d},{i % 1000:03d} INFO trainer.py:{100 + i % 900} -- step {i} "
        )
        line += f"loss {(i * 7919) % 10000 / 10000:.4f} lr 0.0001 tokens {i * 4096}"
        lines.append(line)
        total += len(line) + 1
        i += 1
    return "\n".join(lines) + "\n"


def _every_pattern(lines: list[str]) -> int:
    """Hits of every catalog pattern on every line: what the keyword prefilter saves."""
    from topoaudit.parse.signatures import catalog

    patterns = [s.pattern for s in catalog().signatures]
    return sum(1 for line in lines for p in patterns if p.search(line))


def _read_whole(text: str) -> None:
    """What analyze does with a pasted file's text: undo a page's marks, strip prefixes, read every part."""
    from topoaudit.errors import InputError
    from topoaudit.readers import load_text

    with contextlib.suppress(InputError):  # a log no reader takes is refused after the same reading
        load_text(text, "bench.txt")


def measure(repeat: int) -> dict[str, float]:
    from topoaudit.parse.paste_parts import split_parts
    from topoaudit.parse.prefixes import strip_prefixes
    from topoaudit.parse.signatures import catalog, match_lines
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
    catalog()  # read once, as a run of topoaudit does before its first paste
    logs = {
        "NCCL log 10 MB": nccl_log(10 * 2**20),
        "NCCL log 10 MB, prefixed": nccl_log(10 * 2**20, prefixed=True),
        "NCCL log 10 MB, lines unique": nccl_log(10 * 2**20, unique=True),
        "Training log 2 MB, no GPU words": framework_log(2 * 2**20),
    }
    for name, text in logs.items():
        lines = strip_prefixes(text)
        jobs = {f"{name}: strip prefixes": lambda t=text: strip_prefixes(t),
                f"{name}: split into parts": lambda ls=lines: split_parts(ls),
                f"{name}: match signatures": lambda ls=lines: match_lines(ls),
                f"{name}: read whole (analyze's reading)": lambda t=text: _read_whole(t)}  # fmt: skip
        for key, job in jobs.items():
            for _ in range(repeat):
                start = time.perf_counter()
                job()
                elapsed = time.perf_counter() - start
                best[key] = min(best.get(key, elapsed), elapsed)
    first_mb = [line.text for line in strip_prefixes(logs["NCCL log 10 MB"][: 2**20])]
    once = {
        "NCCL log 1 MB: match signatures": lambda: match_lines(first_mb),
        "NCCL log 1 MB: every pattern on every line": lambda: _every_pattern(first_mb),
    }
    for key, job in once.items():
        start = time.perf_counter()
        job()
        best[key] = time.perf_counter() - start
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
    print(f"{'paste (best of ' + str(args.repeat) + ', seconds)':<60}" + "".join(f"{n:>12}" for n in names)
          + ("   now/before" if len(names) == 2 else ""))  # fmt: skip
    for key in runs["now"]:
        values = [runs[n].get(key, float("nan")) for n in names]
        ratio = f"   {values[1] / values[0]:.2f}x" if len(values) == 2 and values[0] else ""
        print(f"{key:<60}" + "".join(f"{v:12.4f}" for v in values) + ratio)


if __name__ == "__main__":
    main()
