"""NCCL's own bandwidth arithmetic, reproduced to explain its choices.

NCCL gives a PCIe link, an NVLink bundle and a NIC a figure in GB/s, from which it searches rings and trees
and picks transports.

Each constant names the NCCL source file it comes from (NVIDIA/nccl). NCCL prints these figures in its
GRAPH output (``+ PCI[48.0] - GPU/...``, ``+ NVL[370.8] - NVS/0-0``, ``+ NET[50.0] - NET/0``) and derives them
from the topology XML (``link_width``, ``link_speed``, ``<nvlink count>``, ``<net speed>``).
"""

from __future__ import annotations

import math
import re

# PCIe: GB/s = link_width x per-lane(speed) / 80. The per-lane figure is NCCL's table keyed on the link speed
# string ("16.0 GT/s PCIe"), src/graph/topo.cc (the pci link speed table used by ncclTopoAddPci).
PCI_PER_LANE = {2.5: 15, 5.0: 30, 8.0: 60, 16.0: 120, 32.0: 240, 64.0: 480}
PCI_GENERATION = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}
PCI_UNKNOWN_PER_LANE = 60  # an unreadable speed counts as Gen3 (src/graph/topo.cc)
PCI_UNKNOWN_WIDTH = 16  # a width of 0 or none counts as x16 (src/graph/topo.cc)
PCI_DIVISOR = 80

# NVLink: GB/s per link by the GPU's SM version, src/graph/topo.h (SM60_NVLINK_BW, SM70_NVLINK_BW,
# SM80_NVLINK_BW, SM86_NVLINK_BW, SM90_NVLINK_BW, SM100_NVLINK_BW); the newest first, each for sm >= key.
NVLINK_GBPS_PER_LINK = ((100, 40.1), (90, 20.6), (87, 20.0), (86, 12.0), (70, 20.0), (60, 18.0))
NVLINK_GENERATIONS = {40.1: "sm100 and newer", 20.6: "sm90", 20.0: "sm70/sm80", 12.0: "sm86", 18.0: "sm60"}

# Network: GB/s = speed (Mb/s) / 8000; a speed of 0 or less counts as 10000 Mb/s, src/graph/topo.cc
# (ncclTopoAddNet).
NET_DIVISOR = 8000
NET_UNKNOWN_SPEED_MBPS = 10000


def pci_gbps(link_speed_gts: float | None, link_width: int | None) -> float:
    """NCCL's PCIe figure: ``width x per_lane / 80`` (Gen5 x16 = 48.0, Gen4 x16 = 24.0)."""
    per_lane = PCI_PER_LANE.get(link_speed_gts, PCI_UNKNOWN_PER_LANE) if link_speed_gts else PCI_UNKNOWN_PER_LANE
    return (link_width or PCI_UNKNOWN_WIDTH) * per_lane / PCI_DIVISOR


def nccl_pci_gbps(link_speed: str, link_width: int) -> float:
    """:func:`pci_gbps` from the XML's text form (``"32.0 GT/s PCIe"``, ``"16 GT/s"``, ``""``)."""
    match = re.match(r"\s*([\d.]+)", link_speed)
    return pci_gbps(float(match.group(1)) if match else None, link_width)


def nvlink_gbps_per_link(sm: int) -> float | None:
    """NCCL's per-link NVLink figure for a GPU of SM version ``sm`` (90: 20.6); None below sm60."""
    return next((gbps for since, gbps in NVLINK_GBPS_PER_LINK if sm >= since), None)


def nvlink_gbps(sm: int, count: int) -> float | None:
    """NCCL's NVLink figure for ``count`` links: H100 (sm90) with 18 links = 18 x 20.6 = 370.8."""
    per_link = nvlink_gbps_per_link(sm)
    return None if per_link is None else round(count * per_link, 1)


def net_gbps(speed_mbps: int) -> float:
    """NCCL's NIC figure: ``speed / 8000`` (a 400 Gb/s port, speed 400000: 50.0)."""
    return (speed_mbps if speed_mbps > 0 else NET_UNKNOWN_SPEED_MBPS) / NET_DIVISOR


def explain(kind: str, gbps: float) -> str:
    """Say in words which inputs give the figure NCCL printed for a link of ``kind`` (PCI, NVL, NET).

    "" when no combination of NCCL's constants gives it (a C2C, SYS or a figure scaled by NCCL's search), or the
    figure is no finite number (a damaged saved report).
    """
    if not math.isfinite(gbps):
        return ""
    if kind == "PCI":
        fits = [
            f"Gen{PCI_GENERATION[speed]} x{width} ({width} lanes x {per_lane}/{PCI_DIVISOR})"
            for speed, per_lane in PCI_PER_LANE.items()
            for width in (16, 8, 4, 2, 1)
            if abs(width * per_lane / PCI_DIVISOR - gbps) < 0.05
        ]
        if fits:
            return f"PCIe {' or '.join(fits[:2])} = {gbps:.1f} GB/s"
    if kind == "NVL":
        for per_link, generation in NVLINK_GENERATIONS.items():
            count = round(gbps / per_link)
            if count >= 1 and abs(count * per_link - gbps) < 0.05:
                return f"{count} NVLinks x {per_link} GB/s ({generation}) = {gbps:.1f} GB/s"
    if kind == "NET":
        return f"a {gbps * NET_DIVISOR / 1000:g} Gb/s port: speed {gbps * NET_DIVISOR:.0f} Mb/s / {NET_DIVISOR}"
    return ""
