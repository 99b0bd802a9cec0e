"""The bandwidth oracle: what all-reduce busbw a box should reach, by algorithm, with where each figure comes from.

A figure is one of three kinds, and the report says which:

* ``measured`` -- a public measurement of the same model and GPU count with that algorithm (the catalog's band,
  ``topoaudit/catalog/gpus.toml``, each with its source), its typical plateau;
* ``gate`` -- a provider's health-check threshold for that box where no plateau was published;
* ``derived`` -- NCCL's own arithmetic, said in full: the link figures of ``model/nccl_bandwidth.py``
  (``src/graph/topo.h``, ``src/graph/topo.cc``) and the busbw model of ``src/graph/tuning.cc``
  (``ncclTopoTuneModel``: ring ``busBw = nChannels x speed``, the sum of the links NCCL found; tree ``x 0.9``;
  CollNet ``x 0.9``; A100 (sm80) capped at 235 GB/s).

Across nodes the network sets the figure: every rank of a ring sends ``2(n-1)/n x S`` bytes and each node's
part of a ring leaves it once per channel (sjeaugey in NVIDIA/nccl#457), so a node's NICs together carry
what busbw measures: ring busbw <= the sum of the node's NIC figures (NCCL's ``speed / 8000`` per NIC). CollNet
(in-network reduction) sends each byte across the network once instead of twice ("2*S intra-node and S
inter-node", same thread): busbw up to ``2(n-1)/n`` times the NICs' sum. NVLS and NVLS tree have no NCCL
arithmetic here: they are judged only against a measurement.

Pure: no torch, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoaudit.catalog import GpuSpec
from topoaudit.model.busbw import ALGORITHMS, NCCL_ALGO_VALUES, normalize_algorithm
from topoaudit.model.nccl_bandwidth import NVLINK_GBPS_PER_LINK, net_gbps, nvlink_gbps
from topoaudit.model.values import Unsupported
from topoaudit.units import format_size

TREE_FACTOR = 0.9
"""``if (a == NCCL_ALGO_TREE) busBw = std::min(busBw*.9, maxTreeBw)`` (NVIDIA/nccl src/graph/tuning.cc)."""
COLLNET_FACTOR = 0.9
"""``if (a == NCCL_ALGO_COLLNET) busBw *= .9`` (NVIDIA/nccl src/graph/tuning.cc)."""
SM80_RING_CAP_GBPS = 235.0
"""``if (compCap80) busBw = std::min(busBw, 235.0f)`` (NVIDIA/nccl src/graph/tuning.cc): NCCL's A100 ceiling."""

_SM_BY_NVLINK_GENERATION = {2: 70, 3: 80, 4: 90, 5: 100}
"""The SM version whose per-link constant NCCL uses for each NVLink generation (topo.h: SM70/SM80/SM90/SM100)."""


@dataclass(frozen=True)
class Nics:
    """The NICs of one node a multi-node all-reduce crosses: how many, and each one's rate."""

    count: int
    gbits: float  # line rate per NIC in Gb/s (400 for NDR)


@dataclass(frozen=True)
class Figure:
    """An expected all-reduce busbw plateau and its provenance."""

    busbw_gbps: float  # what the judge compares the plateau with
    algorithm: str  # one of ALGORITHMS, or "default" where the source measured NCCL's own choice
    kind: str  # "measured" | "gate" | "derived"
    source: str  # public measurement or NCCL source file
    arithmetic: str = ""  # for a derived figure: the sum, in full
    size_bytes: int = 0  # the message size the source measured at (0: a model, no size)
    floor_gbps: float = 0.0  # the lowest healthy figure the source gives (a gate), 0 when none

    def describe(self) -> str:
        """One line a reader can check: the figure, its kind, where it comes from."""
        at = f" at {format_size(self.size_bytes)}" if self.size_bytes else ""
        how = f"{self.arithmetic}; " if self.arithmetic else ""
        return f"{self.busbw_gbps:g} GB/s {self.algorithm} ({self.kind}{at}: {how}{self.source})"

    def evidence(self) -> dict[str, object]:
        return {
            "oracle_busbw_gbps": self.busbw_gbps,
            "oracle_algorithm": self.algorithm,
            "oracle_kind": self.kind,
            "oracle_source": self.source,
            "oracle_arithmetic": self.arithmetic,
            "oracle_size_bytes": self.size_bytes,
        }


def expected_busbw(
    spec: GpuSpec,
    gpus_per_node: int,
    *,
    nodes: int = 1,
    nics: Nics | None = None,
    algorithm: str = "",
    one_nvlink_domain: bool = False,
) -> Figure | Unsupported:
    """Return the large-message all-reduce busbw ``nodes`` x ``gpus_per_node`` GPUs of model ``spec`` should reach.

    ``algorithm`` is the one NCCL ran ("" when not known: the ring figure, the lowest NCCL's choices reach on an
    NVLink box, so a run is never held to a figure its algorithm cannot give). ``one_nvlink_domain`` says the
    nodes share one NVLink domain (trays of an NVL72 rack): the network is not crossed.
    """
    algo = algorithm or "ring"
    if algo not in ALGORITHMS:
        return Unsupported("oracle", f"unknown algorithm {algorithm!r}")
    total = gpus_per_node * nodes
    if total < 2:
        return Unsupported("oracle", "a single GPU: all-reduce moves no data over a link")
    if nodes > 1 and not one_nvlink_domain:
        return _across_nodes(spec, gpus_per_node, nodes, nics, algo)
    return _one_domain(spec, total, algo, unstated=not algorithm)


def _one_domain(spec: GpuSpec, gpus: int, algo: str, *, unstated: bool) -> Figure | Unsupported:
    band = spec.band(gpus, "nvls" if algo in ("nvls", "nvls_tree") else "ring")
    if band is None and algo in ("nvls", "nvls_tree"):
        band = spec.band(gpus, "default")  # the source measured NCCL's own choice on an NVLS-capable box
    if band is None and algo == "ring" and unstated:
        band = spec.band(gpus, "default")
    if band is not None and (algo in ("ring", "nvls") or band.algo == "default"):
        label = band.algo if band.algo != "default" else "default"
        if band.typical_gbps > 0:
            return Figure(
                band.typical_gbps, label, "measured", band.source, size_bytes=band.size_bytes, floor_gbps=band.min_gbps
            )
        return Figure(band.min_gbps, label, "gate", band.source, size_bytes=band.size_bytes, floor_gbps=band.min_gbps)
    if algo in ("nvls", "nvls_tree"):
        return Unsupported(
            "oracle", f"no public NVLS measurement of {gpus}x {spec.name}; NCCL's NVLS model is not reproduced"
        )
    if algo == "collnet":
        return Unsupported("oracle", "CollNet reduces in the network: it runs only across nodes")
    ring = _ring_model(spec, gpus)
    if isinstance(ring, Unsupported):
        return ring
    if algo == "tree":
        return Figure(
            round(ring.busbw_gbps * TREE_FACTOR, 1),
            "tree",
            "derived",
            "NVIDIA/nccl src/graph/tuning.cc (tree busBw x 0.9) over " + ring.source,
            arithmetic=f"({ring.arithmetic}) x {TREE_FACTOR:g}",
        )
    return ring


def _ring_model(spec: GpuSpec, gpus: int) -> Figure | Unsupported:
    """NCCL's ring figure inside one NVLink domain: the links NCCL counts x its per-link constant."""
    partial_mesh = spec.layout == "hybrid-cube-mesh"  # not every pair linked: NCCL's rings mix links, not modelled
    if not (spec.one_domain and gpus <= spec.domain_size) or not spec.nvlinks_per_gpu or partial_mesh:
        return Unsupported("oracle", f"no NCCL model for {gpus}x {spec.name}: its GPUs are not one NVLink domain")
    sm = _SM_BY_NVLINK_GENERATION.get(spec.nvlink_generation)
    figure = nvlink_gbps(sm, spec.nvlinks_per_gpu) if sm else None
    if figure is None or sm is None:
        return Unsupported("oracle", f"NVLink generation {spec.nvlink_generation} has no NCCL constant")
    per_link = next(gbps for since, gbps in NVLINK_GBPS_PER_LINK if sm >= since)
    arithmetic = f"{spec.nvlinks_per_gpu} NVLinks x {per_link:g} GB/s (sm{sm}) = {figure:g}"
    source = "NVIDIA/nccl src/graph/topo.h per-link NVLink constant, ring busBw = nChannels x speed (tuning.cc)"
    if sm == 80 and figure > SM80_RING_CAP_GBPS:
        arithmetic += f", capped at {SM80_RING_CAP_GBPS:g} for sm80"
        figure = SM80_RING_CAP_GBPS
    return Figure(figure, "ring", "derived", source, arithmetic=arithmetic)


def _across_nodes(spec: GpuSpec, gpus_per_node: int, nodes: int, nics: Nics | None, algo: str) -> Figure | Unsupported:
    if nics is None or nics.count < 1 or nics.gbits <= 0:
        return Unsupported("oracle", f"across {nodes} nodes the NICs set the figure; their count and rate are unknown")
    if algo in ("nvls", "nvls_tree"):
        return Unsupported("oracle", "no public multi-node NVLS measurement for this box; not modelled")
    per_nic = net_gbps(int(nics.gbits * 1000))
    net = round(nics.count * per_nic, 1)
    n = gpus_per_node * nodes
    net_how = f"{nics.count} NICs x {per_nic:g} GB/s ({nics.gbits:g} Gb/s / 8, NCCL's speed/8000) = {net:g}"
    source = "each node's NICs carry a ring's 2(n-1)/n x S (NVIDIA/nccl#457); NIC figure NVIDIA/nccl src/graph/topo.cc"
    if algo == "collnet":
        factor = 2 * (n - 1) / n
        value = round(net * factor * COLLNET_FACTOR, 1)
        how = f"{net_how} x 2(n-1)/n {factor:.3f} x {COLLNET_FACTOR:g} (tuning.cc)"
        return Figure(value, "collnet", "derived", source + "; CollNet sends S across, not 2S (NVIDIA/nccl#457)", how)
    intra = _one_domain(spec, gpus_per_node, "ring", unstated=True) if gpus_per_node > 1 else None
    value, how = net, net_how
    if isinstance(intra, Figure) and intra.busbw_gbps < net:
        value, how = intra.busbw_gbps, f"{net_how}; the node's own ring figure {intra.busbw_gbps:g} is lower"
    if algo == "tree":
        value, how = round(value * TREE_FACTOR, 1), f"({how}) x {TREE_FACTOR:g} (tree, tuning.cc)"
    return Figure(value, algo, "derived", source, how)


__all__ = ["ALGORITHMS", "NCCL_ALGO_VALUES", "Figure", "Nics", "expected_busbw", "normalize_algorithm"]


def oracle_markdown() -> str:
    """Return the oracle's table for one node (or one NVLink domain) per catalog model and algorithm.

    docs/bandwidth.md shows it between its markers (tests fail when the committed file differs).
    """
    from topoaudit.catalog import all_gpus

    out = [
        "| model | GPUs | algorithm | busbw GB/s | kind | measured at | source (and arithmetic, where derived) |",
        "|---|---|---|---|---|---|---|",
    ]
    for spec in all_gpus():
        counts = sorted({b.gpus for b in spec.busbw} | ({spec.node_gpus} if spec.one_domain else set()))
        for gpus in counts:
            for algo in ("ring", "tree", "nvls"):
                rack = spec.layout == "nvl72" and gpus > spec.node_gpus
                figure = expected_busbw(spec, gpus, algorithm=algo, one_nvlink_domain=rack)
                if not isinstance(figure, Figure):
                    continue
                at = format_size(figure.size_bytes) if figure.size_bytes else "–"
                how = f"{figure.arithmetic}; " if figure.arithmetic else ""
                name = figure.algorithm if figure.algorithm == algo else f"{algo} ({figure.algorithm} measured)"
                out.append(
                    f"| `{spec.key}` | {gpus} | {name} | {figure.busbw_gbps:g} | {figure.kind} | {at} | "
                    f"{how}{figure.source} |"
                )
    return "\n".join(out)


MARKER_BEGIN = "<!-- BEGIN GENERATED ORACLE -->"
MARKER_END = "<!-- END GENERATED ORACLE -->"
