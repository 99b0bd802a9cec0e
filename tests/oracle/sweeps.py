"""nccl-tests all_reduce_perf output for a run of a given shape and plateau, for judging runs the issue names.

The rows are those of the real 8x A100 capture (tests/fixtures/nccltests/
nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt) from 1 MiB up, scaled so that the plateau is the
figure asked for; the rank lines put ``per_host`` ranks on each host and name the GPU model.
"""

from __future__ import annotations

from pathlib import Path

A100 = (
    Path(__file__).parents[1]
    / "fixtures"
    / "nccltests"
    / "nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt"
)
A100_PLATEAU = 235.14
HEADER = "#       size         count      type   redop    root     time   algbw   busbw #wrong" + (
    "     time   algbw   busbw #wrong"
)
UNITS = "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)"


def sweep(gpu: str, hosts: int, per_host: int, plateau: float, *, extra: str = "", version: str = "") -> str:
    """The text of an all_reduce_perf run over ``hosts`` x ``per_host`` ranks of ``gpu`` plateauing at ``plateau``."""
    scale = plateau / A100_PLATEAU
    lines = [f"# nccl-tests version 2.13.9 {version}".rstrip(), "# Using devices"]
    for rank in range(hosts * per_host):
        host, dev = divmod(rank, per_host)
        where = f"on node{host:02d} device {dev:2d} [0x{16 + dev:02x}]"
        lines.append(f"#  Rank {rank:2d} Group  0 Pid {1000 + rank:6d} {where} {gpu}")
    if extra:
        lines.append(extra)
    lines += ["#", HEADER, UNITS]
    for line in A100.read_text().splitlines():
        tokens = line.split()
        if len(tokens) < 13 or not tokens[0].isdigit() or int(tokens[0]) < (1 << 20):
            continue
        size, count = int(tokens[0]), tokens[1]
        bus = [float(tokens[7]) * scale, float(tokens[11]) * scale]
        factor = 2 * (hosts * per_host - 1) / (hosts * per_host)
        alg = [b / factor for b in bus]
        times = [size / 1e9 / a * 1e6 for a in alg]
        lines.append(
            f"{size:12d} {count:>13} {'float':>9} {'sum':>7} {-1:>7} {times[0]:8.1f} {alg[0]:7.2f} {bus[0]:7.2f} "
            f"{0:6d} {times[1]:8.1f} {alg[1]:7.2f} {bus[1]:7.2f} {0:6d}"
        )
    lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 100.0 ", "#"]
    return "\n".join(lines) + "\n"


def net_ib(hosts: int, nics: int = 8, speed_mbps: int | None = 400000, layer: str = "IB") -> str:
    """NCCL INFO lines listing each host's NICs (``NET/IB : Using [0]mlx5_0:1/IB ...``), with NCCL 2.27's
    per-device ``speed=`` line (Mb/s) unless ``speed_mbps`` is None."""
    lines = []
    for host in range(hosts):
        prefix = f"node{host:02d}:{1000 + 8 * host}:{1000 + 8 * host} [0] NCCL INFO"
        devices = " ".join(f"[{i}]mlx5_{i}:1/{layer}" for i in range(nics))
        lines.append(f"{prefix} NET/IB : Using {devices} [RO]; OOB ib0:10.0.0.{host + 1}<0>")
        if speed_mbps is not None:
            lines += [
                f"{prefix} NET/IB: [{i}] mlx5_{i}:uverbs{i}:1/{layer} provider=Mlx5 speed={speed_mbps} context=0x5 "
                f"pciPath=/sys/devices/pci0000:00 ar=0"
                for i in range(nics)
            ]
    return "\n".join(lines)
