"""What the box is, and how the judge knows it.

The GPU model and the line or option that named it, or, when nothing names the model, the hardware class the
links show.

A ``topo -m`` paste names no GPU model, yet its links often say what the box is: NV18 on every pair is an NVSwitch
baseboard of 18-link GPUs, NV12 pairs are PCIe cards joined by NVLink bridges, NV1/NV2 to four peers is a DGX-1
hybrid cube-mesh; no NVLink at all, in a layout no NVLink baseboard has, is a box of PCIe cards. A class carries
what such a box is built like (:class:`HardwareClass`), so the topology rules judge it as they judge a catalog
model, and every report says which evidence showed it (:class:`Identification`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HardwareClass:
    """A kind of box the links show, with what the topology rules need of it (the fields a catalog entry has)."""

    key: str
    name: str  # in words, as a finding says it
    build: str  # "nvswitch" | "mesh" | "bridge" | "pcie"
    layout: str  # as the catalog's layouts: "nvswitch", "hybrid-cube-mesh", "bridged-pairs"
    domain_size: int  # GPUs in one NVLink domain of the standard node
    node_gpus: int  # GPUs of the standard baseboard or node
    nvlinks_per_gpu: int  # links a healthy GPU of the class has active
    domain_sizes_by_design: tuple[int, ...] = ()
    basis: str = ""  # why a box showing this evidence is built so (the public sources of the catalog's entries)

    @property
    def one_domain(self) -> bool:
        """True when the whole standard node is one NVLink domain (as :attr:`GpuSpec.one_domain`)."""
        return self.build in ("nvswitch", "mesh") and self.domain_size >= self.node_gpus

    @property
    def by_design_domains(self) -> tuple[int, ...]:
        """Domain sizes (2+ GPUs) a healthy box of the class shows."""
        return self.domain_sizes_by_design or ((self.domain_size,) if self.domain_size >= 2 else ())

    def source_of(self, field: str) -> str:
        """Where a figure comes from: the evidence shows the class, and the class's basis says why it is so."""
        return f"inferred: {self.name}" + (f"; {self.basis}" if self.basis else "")


NVSWITCH_18 = HardwareClass(
    "nvswitch-18",
    "an NVSwitch baseboard of 18-link GPUs of the H100, H200, H20 or B200 class",
    "nvswitch",
    "nvswitch",
    8,
    8,
    18,
    basis="NV18 between a pair is the GPU's 18 links shared through NVSwitches: HGX H100, H200, H20 and B200 boards",
)
NVSWITCH_12 = HardwareClass(
    "nvswitch-12",
    "an NVSwitch baseboard of 12-link GPUs of the A100 SXM class",
    "nvswitch",
    "nvswitch",
    8,
    8,
    12,
    basis="NV12 between three or more GPUs is the A100's 12 links shared through NVSwitches (HGX A100 8-GPU)",
)
BRIDGED_PAIRS_12 = HardwareClass(
    "bridged-pairs-12",
    "PCIe cards joined in pairs by NVLink bridges of 12 links, as A100 PCIe and H100 PCIe or NVL cards are",
    "bridge",
    "bridged-pairs",
    2,
    8,
    12,
    basis="three NVLink bridges carry 12 links between two PCIe cards; nothing larger than a pair is joined",
)
HYBRID_CUBE_MESH = HardwareClass(
    "hybrid-cube-mesh",
    "a DGX-1-style hybrid cube-mesh of V100-class GPUs, 6 NVLinks each to four peers",
    "mesh",
    "hybrid-cube-mesh",
    8,
    8,
    6,
    basis="eight GPUs each linked directly to four peers, the rest over PCIe: DGX-1 and HGX-1 V100 boards",
)
NVSWITCH_NVLS = HardwareClass(
    "nvswitch-nvls",
    "an NVSwitch box of Hopper or newer GPUs, where NCCL's NVLS multicast runs",
    "nvswitch",
    "nvswitch",
    0,
    0,
    0,
    basis="NVLink SHARP needs third-generation NVSwitches or newer (NCCL 2.17+, Hopper and Blackwell)",
)
PCIE_CARDS = HardwareClass(
    "pcie-cards",
    "PCIe cards without NVLink",
    "pcie",
    "pcie",
    1,
    0,
    0,
    basis=(
        "NVLink baseboards (HGX, DGX) carry 4, 8 or 16 GPUs with a NIC on the PCIe switch beside each GPU; a "
        "topology with no NVLink and not that layout is a server or workstation of PCIe cards"
    ),
)
CLASSES = {c.key: c for c in (NVSWITCH_18, NVSWITCH_12, BRIDGED_PAIRS_12, HYBRID_CUBE_MESH, NVSWITCH_NVLS, PCIE_CARDS)}


@dataclass(frozen=True)
class Identification:
    """How the judge knows what the box is.

    ``how``: ``option`` (``--gpu-model``), ``input`` (a line of the paste names the GPUs), ``source`` (the source
    reports them: a probe, a snapshot, a saved report), ``links`` (no name; the links show a class), ``nccl`` (NCCL's
    own lines show a class), ``unknown``.
    """

    how: str = "unknown"
    model: str = ""  # the product name as named ("" when only a class is known)
    evidence: str = ""  # the option, or the line that named the model ("line 6: '...'")
    hardware_class: str = ""  # a CLASSES key the links or NCCL's lines show ("" when none)
    class_evidence: str = ""  # what shows it ("NV18 on all 28 pairs of GPUs {0-7}", "line 12: '...'")
    note: str = ""  # what the name matched in the catalog, or that the catalog has no entry for it
    contradiction: str = ""  # the named model against what the links show ("" when they agree)

    @property
    def sentence(self) -> str:
        """One sentence a report shows beside the GPU model: what it is, and what showed it."""
        parts = []
        if self.model and self.evidence:
            parts.append(f"{self.model!r} from {self.evidence}")
        if self.note:
            parts.append(self.note)
        if self.hardware_class in CLASSES:
            parts.append(f"{CLASSES[self.hardware_class].name}, shown by {self.class_evidence}")
        if self.contradiction:
            parts.append(self.contradiction)
        return "; ".join(parts)


UNIDENTIFIED = Identification()
