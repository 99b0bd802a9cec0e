"""What a point-to-point transfer test's figure says of the path it crossed, without knowing the path.

OSU's osu_bw, ``ucx_perftest``, perftest's ``ib_*_bw`` and CUDA's bandwidthTest print a table whose last row is the
test's largest message, where the bandwidth levels off (the catalog's table signatures read that row). Nothing in
the table names the path, so only figures no healthy path of its kind gives are judged: under 1 GB/s between GPU or
host buffers (TCP over a slow network, or copies staged through host memory), under 10 Gb/s over an RDMA NIC (none
is that slow), under 3 GB/s between host and GPU (less than a PCIe Gen3 x4 link), and over 60 GB/s between buffers
(no PCIe link carries that: NVLink does, or a copy within one host's memory). A figure between says nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from topoaudit.model.paste import Hit

Reading = Literal["low", "fast", "unjudged"]


@dataclass(frozen=True)
class Floor:
    """How one table's figure is read: the named group that holds it and the bounds that judge it (in MB/s)."""

    value: str  # the named group holding the figure
    low_mbps: float  # below: no healthy path of this kind is this slow
    fast_mbps: float | None = None  # above: faster than any PCIe link, so NVLink carried it
    min_size_bytes: int = 0  # a table that stopped at smaller messages has not levelled off: it says nothing


PCIE_CEILING_MBPS = 60_000.0
"""More than a PCIe Gen5 x16 link carries one way (about 53 GB/s measured): only NVLink moves GPU data faster."""

TRANSFER_TABLES: dict[str, Floor] = {
    "osu-bandwidth": Floor("mbps", low_mbps=1_000.0, fast_mbps=PCIE_CEILING_MBPS, min_size_bytes=256 << 10),
    "ucx-perftest-bandwidth": Floor("mbps", low_mbps=1_000.0, fast_mbps=PCIE_CEILING_MBPS),
    # 10 Gb/s: slower than any RDMA NIC; a table that stopped below 4 KiB (`-a` cut short) is bound by the message rate
    "perftest-bandwidth": Floor("average", low_mbps=10_000 / 8, min_size_bytes=4 << 10),
    # host to GPU: less than a PCIe Gen3 x4 link carries (a copy within the GPU is never that slow)
    "cuda-bandwidthtest-copy": Floor("value", low_mbps=3_000.0, min_size_bytes=1 << 20),
    # its one-line form judges every size it printed: only copies large enough to have levelled off
    "cuda-bandwidthtest-csv": Floor("value", low_mbps=3_000.0, min_size_bytes=16 << 20),
}
_UNIT_MBPS = {"Gb/sec": 1_000 / 8, "MB/sec": 1.0, "MiB/sec": 1.048576, "MB/s": 1.0, "GB/s": 1_000.0}


def mbps(hit: Hit) -> float | None:
    """Return the figure in MB/s (perftest names its unit in its header: MB/sec, or Gb/sec with --report_gbits)."""
    floor = TRANSFER_TABLES[hit.signature]
    try:
        value = float(hit.values[floor.value])
    except (KeyError, ValueError):
        return None
    return value * _UNIT_MBPS.get(hit.values.get("unit", "MB/sec"), 1.0)


def reading(hit: Hit) -> Reading:
    """Whether the figure is too low for any healthy path, faster than PCIe carries, or says nothing either way."""
    floor = TRANSFER_TABLES[hit.signature]
    figure = mbps(hit)
    size = hit.values.get("size_bytes")
    if figure is None or (size is not None and size.isdigit() and int(size) < floor.min_size_bytes):
        return "unjudged"
    if figure < floor.low_mbps:
        return "low"
    if floor.fast_mbps is not None and figure > floor.fast_mbps:
        return "fast"
    return "unjudged"


_SAID = {
    "low": "slower than any healthy path of its kind",
    "fast": "faster than any PCIe link carries, so NVLink carried it (or both buffers sat in one host's memory)",
    "unjudged": "a figure the table alone cannot hold to a path",
}


def describe(hit: Hit) -> str:
    """Say the figure and what it says, as a sentence without its full stop ("It reads 93.1 GB/s at 32 MiB: ...")."""
    figure = mbps(hit)
    if figure is None:
        return ""
    size = hit.values.get("size_bytes", "")
    at = f" at {_size(int(size))}" if size.isdigit() else ""
    return f"It reads {figure / 1000:.3g} GB/s{at}: {_SAID[reading(hit)]}"


def _size(size_bytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size_bytes >= scale and size_bytes % scale == 0:
            return f"{size_bytes // scale} {unit}"
    return f"{size_bytes} bytes"
