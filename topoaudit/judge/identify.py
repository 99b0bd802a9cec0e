"""What the box is: the GPU model the user named or the input names (and the line that names it), else the hardware
class its links or NCCL's lines show; and whether a named model contradicts the links.

The topology rules judge a box against its catalog entry; when nothing names the model, against the class its
links show (NV18 on every pair: an NVSwitch baseboard of 18-link GPUs; NV12 pairs: bridged PCIe cards; NV1/NV2 to
four peers: a DGX-1 hybrid cube-mesh), so half an NVSwitch fabric fails and a cube-mesh GPU that lost a bond is
degraded without ``--gpu-model``. A named model whose links it cannot have (an RTX 3090 with NV18 to seven peers)
is not believed: the box is judged as its links show, and a finding says so.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from topoaudit.catalog import GpuSpec, find_gpu, matched_as, product_name
from topoaudit.model.identity import (
    BRIDGED_PAIRS_12,
    HYBRID_CUBE_MESH,
    NVSWITCH_12,
    NVSWITCH_18,
    NVSWITCH_NVLS,
    PCIE_CARDS,
    HardwareClass,
    Identification,
)
from topoaudit.model.machine import PathLevel
from topoaudit.model.topology import (
    Domain,
    format_gpus,
    gpu_pair_links,
    gpus_with_unknown_pairs,
    nvlink_pairs,
    nvlink_peers,
)
from topoaudit.model.values import Unsupported

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.nccl import NcclView
    from topoaudit.model.report import AuditOptions

SOURCES_THAT_NAME = ("nvml", "snapshot", "report", "example")
"""Sources whose GPU names are the GPUs' own (NVML's, or a saved report's): no line of a paste to quote."""

MAX_SCANNED_LINES = 200_000
"""Lines of a paste read for a product name; a log longer than this names its GPUs earlier if at all."""

_PRODUCT = re.compile(
    r"\b(?:NVIDIA|Tesla|Quadro|AMD Instinct)(?:[\s-]+(?:GeForce|RTX|PRO|Tesla))*(?:\s+|-(?=[A-Z]))"
    r"(?:[A-Z]{1,3}\d{2,4}[A-Za-z]*|(?<=RTX )\d{4}[A-Za-z]*|(?<=PRO )\d{4})"
    r"(?:[- ](?:SXM\d?|PCIe|PCIE|NVL|\d+GB|\d+G|HBM\d?e?|Ada(?: Generation)?|Blackwell|Ti|D|AC|3e|\d+))*"
)
"""A product name as drivers and tools print it: "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB", "NVIDIA GeForce
RTX 4090", "NVIDIA RTX 6000D", "AMD Instinct MI355X", and hyphenated as node agents print it ("NVIDIA-H100-80GB-HBM3",
"NVIDIA-GB200"); not "NVIDIA-SMI 535" nor "NVIDIA Corporation"."""


@dataclass(frozen=True)
class Identified:
    """The model the box is judged as, its catalog entry, the class the rules use without one, and how it is known."""

    gpu_model: str | Unsupported
    spec: GpuSpec | None
    hardware: HardwareClass | None  # what the links show, judged by when no catalog entry is believed
    identification: Identification


def identify(facts: Facts, options: AuditOptions, domains: tuple[Domain, ...], plan_gpu: str | None) -> Identified:
    """Name the box: ``--gpu-model``, else the input's own GPU names, else the card the plan sizes on."""
    machine = facts.machine
    shown, shown_by = class_of_links(machine, domains)
    if shown is None:
        shown, shown_by = class_of_nccl(facts.nccl)
    named, how, evidence = _named(facts, options, plan_gpu)
    if isinstance(named, Unsupported):
        return Identified(_unnamed(named, shown), None, shown, Identification("unknown", "", "", _key(shown), shown_by))
    spec = find_gpu(named)
    if spec is None and shown is None:
        shown, shown_by = _class_of_name(named)
    note = matched_as(named, spec) if spec is not None else f"the catalog has no entry for {product_name(named)!r}"
    contradiction = contradicts(named, spec, machine, shown, shown_by) if spec is not None else ""
    believed = None if contradiction else spec
    identification = Identification(
        how, named, evidence, _key(shown) if believed is None else "", shown_by if believed is None else "", note,
        contradiction,
    )  # fmt: skip
    return Identified(named, believed, shown if believed is None else None, identification)


_CARD_WORDS = re.compile(r"\b(GeForce|TITAN|Quadro|RTX|PCIe|PCIE)\b")
"""Words in a product name only PCIe cards carry: no NVLink baseboard holds a GeForce, TITAN, Quadro or RTX-branded
GPU, nor one named for its PCIe form."""


def _class_of_name(named: str) -> tuple[HardwareClass | None, str]:
    """PCIe cards, when a name the catalog lacks says the GPU is one ("NVIDIA GeForce RTX 2080 Ti")."""
    word = _CARD_WORDS.search(named)
    if word is None:
        return None, ""
    return PCIE_CARDS, f"the GPU name {product_name(named)!r}: {word[1]} GPUs are PCIe cards"


def _key(shown: HardwareClass | None) -> str:
    return shown.key if shown is not None else ""


def _unnamed(why: Unsupported, shown: HardwareClass | None) -> Unsupported:
    if shown is None:
        return why
    return Unsupported(why.source, f"the source does not name the GPU model; its links show {shown.name}")


def _named(facts: Facts, options: AuditOptions, plan_gpu: str | None) -> tuple[str | Unsupported, str, str]:
    """The model named for the box, how (option, source, input) and the evidence (the option, the line)."""
    machine = facts.machine
    if isinstance(options.gpu_model, str):
        return options.gpu_model, "option", "the command line"
    names = {product_name(g.name) for g in machine.gpus if isinstance(g.name, str) and g.name.strip()}
    if len(names) > 1:
        return Unsupported(machine.source, "GPUs report different models"), "unknown", ""
    if names:
        name = names.pop()
        if facts.source.kind in SOURCES_THAT_NAME or machine.source in SOURCES_THAT_NAME:
            return name, "source", f"the {facts.source.kind} source"
        line = _line_naming(getattr(facts, "text", ""), name)
        return name, "input", line or f"the {facts.source.kind} input's GPU names"
    scanned = _product_in_text(getattr(facts, "text", "")) if facts.source.kind not in SOURCES_THAT_NAME else None
    if scanned is not None:
        return scanned[0], "input", scanned[1]
    saved = facts.saved
    if saved is not None and isinstance(saved.gpu_model, str):  # named by a line of the paste it was made from
        return (
            saved.gpu_model,
            "source",
            "the saved report" + (f", {saved.identified.evidence}" if saved.identified.evidence else ""),
        )
    if plan_gpu and machine.gpus:
        return plan_gpu, "option", f"the deploy plan's card {plan_gpu!r}"
    return Unsupported(machine.source, "the source does not name the GPU model; pass --gpu-model"), "unknown", ""


def _quote(number: int, line: str) -> str:
    text = " ".join(line.split())
    return f"line {number}: {text[:157] + '...' if len(text) > 160 else text!r}"


def _line_naming(text: str, name: str) -> str:
    """The first line of the paste naming ``name``, quoted ("" when the text is not at hand or does not name it)."""
    if not text or not name:
        return ""
    for number, line in enumerate(text.splitlines()[:MAX_SCANNED_LINES], 1):
        if name in line:
            return _quote(number, line)
    return ""


def _product_in_text(text: str) -> tuple[str, str] | None:
    """The one GPU product a paste names in its lines, and the first line naming it; None for none or several."""
    if not text:
        return None
    found: dict[str, tuple[str, str]] = {}  # catalog key (or the name itself) -> (name, line)
    for number, line in enumerate(text.splitlines()[:MAX_SCANNED_LINES], 1):
        if "NVIDIA" not in line and "Tesla" not in line and "Instinct" not in line:
            continue
        for match in _PRODUCT.finditer(line):
            name = match.group(0).strip()
            spec = find_gpu(name)
            found.setdefault(spec.key if spec is not None else name, (name, _quote(number, line)))
    return next(iter(found.values())) if len(found) == 1 else None


# --- what the links and NCCL's lines show ------------------------------------------------------------------


def class_of_links(machine: Machine, domains: tuple[Domain, ...]) -> tuple[HardwareClass | None, str]:
    """The class of box the NVLink pairs show, and the pairs that show it; (None, "") when they show none."""
    pairs = nvlink_pairs(machine)
    if not pairs:
        return _pcie_cards(machine)
    tally = Counter(n for _, _, n in pairs)
    modal = max(tally, key=lambda n: (tally[n], n))
    linked = sorted({g for a, b, _ in pairs for g in (a, b)})
    where = f"GPUs {format_gpus(linked)}"
    share = "all" if tally[modal] == len(pairs) else f"{tally[modal]} of the"
    if modal >= NVSWITCH_18.nvlinks_per_gpu:
        return NVSWITCH_18, f"NV{modal} on {share} {len(pairs)} NVLink pairs of {where}"
    multi = [d for d in domains if d.size >= 2]
    if modal == NVSWITCH_12.nvlinks_per_gpu and multi:
        if all(d.size == 2 for d in multi):
            joined = ", ".join(f"GPU{d.gpus[0]}-GPU{d.gpus[1]}" for d in multi[:4]) + (" ..." if len(multi) > 4 else "")
            return BRIDGED_PAIRS_12, f"NV12 joining GPUs in pairs only: {joined}"
        if any(d.size >= 3 and d.build == "nvswitch" for d in multi):
            return NVSWITCH_12, f"NV12 on {share} {len(pairs)} NVLink pairs of {where}"
    return _cube_mesh(machine, pairs)


BASEBOARD_GPU_COUNTS = (4, 8, 16)
"""GPUs on an NVLink baseboard (HGX 4-GPU and 8-GPU, DGX-2); a box of any other count is not one."""


def _pcie_cards(machine: Machine) -> tuple[HardwareClass | None, str]:
    """A ``topo -m`` with no NVLink on any pair, in a layout no NVLink baseboard has: PCIe cards.

    An NVLink baseboard whose links are all down shows no NVLink either, so the layout decides: such boards carry
    4, 8 or 16 GPUs, and a training board puts a NIC on the PCIe switch beside each GPU (PIX or PXB). A matrix
    of such a count that shows a NIC beside most GPUs, or no NIC to tell, is left undecided (the model must be
    named); any other is judged as PCIe cards.
    """
    if machine.source != "topo-matrix" or len(machine.gpus) < 2:
        return None, ""
    described = [lk for lk in gpu_pair_links(machine).values() if lk.level != PathLevel.UNKNOWN]
    if not described:
        return None, ""
    gpus = {g.label for g in machine.gpus}
    nics = {n.label for n in machine.nics}
    near = {
        gpu
        for lk in machine.links
        if lk.level in (PathLevel.PIX, PathLevel.PXB)
        for gpu, other in ((lk.a, lk.b), (lk.b, lk.a))
        if gpu in gpus and other in nics
    }
    count = len(machine.gpus)
    pairs = f"no NVLink on any of the {len(described)} GPU pairs"
    if count not in BASEBOARD_GPU_COUNTS:
        return PCIE_CARDS, f"{pairs}, and {count} GPUs, a count no NVLink baseboard carries"
    if 2 * len(near) >= count or not nics:
        return None, ""  # a NIC beside most GPUs (a baseboard's layout), or no NIC shown to tell: links may all be down
    nic_words = f"a NIC at PIX/PXB of {len(near)} of {count} GPUs" if near else "no NIC at PIX/PXB"
    return PCIE_CARDS, f"{pairs}, and {nic_words}, where NVLink baseboards put one beside each GPU"


def _cube_mesh(machine: Machine, pairs: tuple[tuple[int, int, int], ...]) -> tuple[HardwareClass | None, str]:
    """Eight GPUs, each linked to at most four peers by NV1 or NV2, most with six links: a DGX-1 cube-mesh.

    Only GPUs whose every peer the source shows are counted: GPU0's row alone (NV1, NV1, NV2, NV2) shows six.
    """
    if len(machine.gpus) != HYBRID_CUBE_MESH.node_gpus or any(n not in (1, 2) for _, _, n in pairs):
        return None, ""
    peers = nvlink_peers(machine)
    if any(len(linked) > 4 for linked in peers.values()):
        return None, ""
    undescribed = gpus_with_unknown_pairs(machine)
    totals = Counter(sum(linked.values()) for gpu, linked in peers.items() if gpu not in undescribed)
    if not totals:
        return None, ""
    modal = max(totals, key=lambda n: (totals[n], n))
    if modal != HYBRID_CUBE_MESH.nvlinks_per_gpu:
        return None, ""
    described = " whose peers are all shown" if undescribed else ""
    shown = f"NV1 or NV2 from each GPU to at most four peers, {modal} links on {totals[modal]} of 8 GPUs{described}"
    return HYBRID_CUBE_MESH, shown


def class_of_nccl(view: NcclView | Unsupported) -> tuple[HardwareClass | None, str]:
    """What NCCL's own lines show of the box: NVLS multicast available is an NVSwitch box of Hopper or newer."""
    if isinstance(view, Unsupported):
        return None, ""
    available = next((s.evidence for s in view.nvls_support if s.available), None)
    if available is None:
        return None, ""
    return NVSWITCH_NVLS, _quote(available.line, available.text)


def contradicts(named: str, spec: GpuSpec, machine: Machine, shown: HardwareClass | None, shown_by: str) -> str:
    """Why the links cannot be ``spec``'s ("" when they can): NVLink on a model without it, or more links on a
    pair than the model's GPUs have. Fewer links are a fault of the box (nvlink-degraded), not a contradiction."""
    pairs = nvlink_pairs(machine)
    if not pairs:
        return ""
    a, b, most = max(pairs, key=lambda p: p[2])
    if spec.build == "pcie":
        why = f"{spec.name} has no NVLink, yet GPU{a}-GPU{b} show NV{most}"
    elif spec.nvlinks_per_gpu and most > spec.nvlinks_per_gpu:
        peers = len(nvlink_peers(machine).get(a, {}))
        why = f"{spec.name} has {spec.nvlinks_per_gpu} NVLinks per GPU, yet GPU{a}-GPU{b} show NV{most}" + (
            f" and GPU{a} reaches {peers} peers over NVLink" if peers > 1 else ""
        )
    else:
        return ""
    judged = f"judged as what the links show, {shown.name}: {shown_by}" if shown is not None else "judged by its links"
    return f"{product_name(named)!r} contradicts the links: {why}; {judged}"
