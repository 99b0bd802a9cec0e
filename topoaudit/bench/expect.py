"""What busbw a group of GPUs should reach, from the topology graph. Pure; no torch.

The prediction is ``raw unidirectional GB/s of the bottleneck x achievable fraction`` for a ring
all-reduce (NCCL's ring reaches ~80% of the NVLink wire rate; NVLS/tree can exceed the ring model, which is
noted, not flagged). Every constant is in :data:`CONSTANTS` with the published figure it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoaudit.catalog import find_gpu, nvlink_rate_gbps
from topoaudit.model.machine import Machine, PathLevel
from topoaudit.model.topology import MAX_NVLINKS_PER_GPU, bottleneck
from topoaudit.model.values import Unsupported


@dataclass(frozen=True)
class Constant:
    name: str
    value: float
    unit: str
    provenance: str


CONSTANTS: dict[str, Constant] = {
    c.name: c
    for c in (
        Constant(
            "ring_efficiency_nvlink",
            0.80,
            "fraction of raw uni-directional NVLink GB/s",
            "HGX H200 ring busbw 367.61 of 450 (ml-engineering, NCCL_NVLS_ENABLE=0); HGX A100 ~230-235 of 300 "
            "(nccl-tests#149, SuperBench NDmv4 235.65); NCCL models 20.6 GB/s per NVLink4 link of 25 (topo.h)",
        ),
        Constant(
            "ring_efficiency_pcie_p2p",
            0.72,
            "fraction of raw uni-directional PCIe GB/s (P2P through a switch or root complex)",
            "8x RTX 5090 Gen5 P2P 45.7 of 63 (nccl-tests fixture, patched driver); 8x RTX 4090 Gen4 P2P 20.6 "
            "of 31.5 (tinygrad driver fixture); NCCL models 48 of 63 for Gen5 x16 (topo.h width x speed/80)",
        ),
        Constant(
            "host_staged_efficiency",
            0.45,
            "fraction of raw PCIe GB/s when NCCL stages through host memory (SHM; no P2P across NODE/SYS)",
            "8x RTX 4090 P2P disabled 15.0 of 31.5 (fixture); 8x A100 PCIe across NVLink pairs ~20 of 31.5 "
            "(nccl-tests#178); NCCL's default P2P level is PXB (paths.cc)",
        ),
        Constant(
            "pcie_gbps_per_lane_gen3",
            0.985,
            "GB/s per lane per direction",
            "PCIe 3.0 8 GT/s 128b/130b; Gen3 x16 ~15.75 GB/s (ml-engineering network notes)",
        ),
        Constant(
            "pcie_gbps_per_lane_gen4",
            1.969,
            "GB/s per lane per direction",
            "PCIe 4.0 16 GT/s x 128/130 / 8 bits = 1.969; Gen4 x16 31.5 GB/s (ml-engineering network notes)",
        ),
        Constant(
            "pcie_gbps_per_lane_gen5",
            3.938,
            "GB/s per lane per direction",
            "PCIe 5.0 32 GT/s x 128/130 / 8 bits = 3.938; Gen5 x16 63 GB/s (ml-engineering network notes)",
        ),
        Constant(
            "pcie_gbps_per_lane_gen6",
            7.5625,
            "GB/s per lane per direction",
            "Gen6 x16 121 GB/s (ml-engineering network notes) / 16 lanes = 7.5625: 64 GT/s / 8 bits less the "
            "FLIT overhead (242 of 256 bytes carry data); Gen6 does not use 128b/130b",
        ),
        Constant(
            "warn_below_ratio",
            0.75,
            "measured plateau / expected",
            "bridged H100 NVL pairs measure 193-208 of a 240 model (0.80-0.87; Azure NC80adis gate, "
            "nccl-tests#178): healthy boxes stay above 0.75",
        ),
        Constant(
            "fail_below_ratio",
            0.50,
            "measured plateau / expected",
            "half the model is a lost link class, not noise: an NVLink pair falling to PCIe, SHM staging",
        ),
        Constant(
            "nvls_above_ratio",
            1.15,
            "measured plateau / expected",
            "NVLS reduces inside the NVSwitch: H100/H200 ~480 vs ring ~370 (nccl-tests#212, nccl#1374)",
        ),
    )
}


def const(name: str) -> float:
    return CONSTANTS[name].value


@dataclass(frozen=True)
class Expectation:
    busbw_gbps: float | Unsupported
    basis: str  # one line: how the number was built


def pcie_raw_gbps(generation: int, width: int) -> float:
    key = f"pcie_gbps_per_lane_gen{generation}"
    return const(key) * width if key in CONSTANTS else 0.0


def _gpu_nvlink_generation(machine: Machine, index: int) -> int:
    gpu = next((g for g in machine.gpus if g.index == index), None)
    if gpu is not None and isinstance(gpu.nvlink_ports, tuple):
        versions = [p.version for p in gpu.nvlink_ports if isinstance(p.version, int) and p.state == "active"]
        if versions:
            return min(versions)
    name = gpu.name if gpu is not None and isinstance(gpu.name, str) else machine.gpu_model
    spec = find_gpu(name) if name else None
    return spec.nvlink_generation if spec else 0


def _active_links(machine: Machine, index: int, members: tuple[int, ...]) -> int:
    """NVLinks a GPU can use toward the group: its active switch links, or direct links to the members.

    ``NV18`` toward every peer of an NVSwitch box is one per-GPU count shared by all peers:
    when the per-pair counts add up to more links than a GPU has, the largest one is the GPU's total.
    """
    gpu = next((g for g in machine.gpus if g.index == index), None)
    if gpu is not None and isinstance(gpu.nvlink_ports, tuple):
        switch = sum(1 for p in gpu.nvlink_ports if p.state == "active" and p.remote_device_type == "switch")
        if switch:
            return switch
    per_pair = []
    for other in members:
        link = machine.link(f"GPU{index}", f"GPU{other}") if other != index else None
        if link is not None and link.level == PathLevel.NVLINK:
            per_pair.append(link.nvlinks)
    if sum(per_pair) > MAX_NVLINKS_PER_GPU:
        return max(per_pair)
    return sum(per_pair)


def _pcie(machine: Machine, members: tuple[int, ...]) -> tuple[int, int] | None:
    gens, widths = [], []
    for gpu in machine.gpus:
        if gpu.index in members:
            gen = gpu.pcie.gen_max if isinstance(gpu.pcie.gen_max, int) else gpu.pcie.gen_current
            width = gpu.pcie.width_current if isinstance(gpu.pcie.width_current, int) else gpu.pcie.width_max
            if not isinstance(gen, int) or not isinstance(width, int):
                spec = find_gpu(gpu.name) if isinstance(gpu.name, str) else None
                if spec is None or not spec.pcie_generation:
                    return None
                gen, width = spec.pcie_generation, 16
            gens.append(gen)
            widths.append(width)
    return (min(gens), min(widths)) if gens else None


def expected_busbw(machine: Machine, gpus: tuple[int, ...]) -> Expectation:
    """Predicted large-message ring all-reduce busbw for GPUs ``gpus`` of one host (machine indices)."""
    members = tuple(sorted(set(gpus)))
    if len(members) < 2:
        return Expectation(Unsupported("bench-model", "a single GPU: all-reduce moves no data over a link"), "")
    hop = bottleneck(machine, members)
    if hop.level == PathLevel.NVLINK:
        gen = min(_gpu_nvlink_generation(machine, i) for i in members)
        rate = nvlink_rate_gbps(gen)
        if not rate:
            return Expectation(Unsupported("bench-model", "NVLink generation unknown"), "")
        links = min(_active_links(machine, i, members) for i in members)
        eff = const("ring_efficiency_nvlink")
        return Expectation(
            round(links * rate * eff, 1),
            f"{links} NVLink{gen} links x {rate:g} GB/s x ring efficiency {eff:.2f}",
        )
    pcie = _pcie(machine, members)
    if hop.level in (PathLevel.PIX, PathLevel.PXB, PathLevel.PHB):
        if pcie is None:
            return Expectation(Unsupported("bench-model", "PCIe generation/width unknown"), "")
        raw = pcie_raw_gbps(*pcie)
        eff = const("ring_efficiency_pcie_p2p")
        return Expectation(
            round(raw * eff, 1), f"PCIe Gen{pcie[0]} x{pcie[1]} {raw:.1f} GB/s x P2P efficiency {eff:.2f}"
        )
    if hop.level in (PathLevel.NODE, PathLevel.SYS):
        if pcie is None:
            return Expectation(Unsupported("bench-model", "PCIe generation/width unknown"), "")
        raw = pcie_raw_gbps(*pcie)
        eff = const("host_staged_efficiency")
        return Expectation(
            round(raw * eff, 1),
            f"{hop.level.name} crossing staged through host memory: PCIe Gen{pcie[0]} x{pcie[1]} {raw:.1f} GB/s "
            f"x {eff:.2f}",
        )
    return Expectation(Unsupported("bench-model", f"no model for a {hop.level.label} bottleneck"), "")


def judge_ratio(ratio: float) -> str:
    """``"fail"`` / ``"warn"`` / ``"nvls"`` (above the ring model) / ``"ok"``."""
    if ratio < const("fail_below_ratio"):
        return "fail"
    if ratio < const("warn_below_ratio"):
        return "warn"
    if ratio > const("nvls_above_ratio"):
        return "nvls"
    return "ok"
