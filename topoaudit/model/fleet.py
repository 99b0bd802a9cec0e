"""The fleet report: many node reports judged alike, one verdict, the outliers and the drain list.

A :class:`FleetReport` is the canonical artefact of ``topoaudit fleet`` (every fleet format renders from
it). Its JSON has its own ``schema_version`` and ``"kind": "topoaudit-fleet"`` so a reader never mistakes
it for a node report. Units are in the field names (``_gbps`` GB/s, ``_s`` seconds).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from topoaudit.errors import InputError
from topoaudit.model.codec import DecodeError, decode, encode
from topoaudit.model.finding import Severity

FLEET_SCHEMA_VERSION = 1
"""Bump on a breaking change to the fleet JSON; readers refuse newer versions with a clear message."""
FLEET_KIND = "topoaudit-fleet"


@dataclass(frozen=True)
class FleetOptions:
    """How the fleet was judged: the node gate and the fleet rules' thresholds (stated in every output)."""

    fail_on: Severity = Severity.FAIL
    strict: bool = False
    outlier_mad_threshold: float = 3.5  # |x - median| / (1.4826 MAD) above this is an outlier
    outlier_floor_ratio: float = 0.02  # the spread is at least 2% of the median (identical peers, run noise)
    outlier_floor_links: float = 0.25  # for link counts a quarter link instead: one link off is named
    outlier_cap_ratio: float = 0.15  # a measured figure 15% or more off the median is named whatever the MAD
    outlier_fail_ratio: float = 0.9  # a low outlier under 0.9x the median fails the node
    outlier_min_nodes: int = 3  # fewer nodes reporting a figure: no outlier rule for it
    max_report_age_s: float = 86400.0  # older than the newest report by more: stale
    rack_gpus: int = 72  # the GPUs an NVL rack's NVLink domain is sold with (72, or 36)
    expected_nodes: tuple[str, ...] = ()  # --expect-nodes: hosts that must report

    @property
    def outlier_rule(self) -> str:
        """State the outlier test in words, with these thresholds, so every format can print it."""
        return (
            f"median and MAD per hardware group: a figure is an outlier when |value - median| > "
            f"{self.outlier_mad_threshold:g} x max(1.4826 x MAD, {self.outlier_floor_ratio:.0%} of the median; "
            f"{self.outlier_floor_links:g} link for link counts) or, for measured figures, when it is "
            f"{self.outlier_cap_ratio:.0%} or more off the median (a group split in two widens the MAD), "
            f"among at least {self.outlier_min_nodes} nodes reporting it; a low outlier under "
            f"{self.outlier_fail_ratio:g}x the median fails the node"
        )


@dataclass(frozen=True)
class FleetFinding:
    """Something only a fleet shows: an outlier, a duplicate identity, a stale or missing report, a rack."""

    code: str  # registered in topoaudit/rules/codes.py
    severity: Severity
    hosts: tuple[str, ...]  # the nodes it names (empty: the rack or fleet as a whole)
    message: str
    evidence: dict[str, Any]


@dataclass(frozen=True)
class NodeResult:
    """One node as the fleet judged it (its own report, reduced to what the fleet shows)."""

    host: str
    input: str  # the file or bundle it came from
    status: str  # "pass" | "fail" | "error" (input unusable) | "missing" (expected, never reported)
    node_verdict: str  # the node report's own verdict: "pass" | "warn" | "fail" | "" (no report)
    codes: tuple[str, ...]  # finding codes at or above --fail-on: the node's own, then the fleet's
    warnings: tuple[str, ...]  # codes below --fail-on
    reason: str  # one line: the worst finding's message, or why the input is unusable
    group: str  # hardware fingerprint label ("" for error/missing)
    captured_at: str  # ISO 8601 of the node report or snapshot; "" when the input carries none
    incomplete: bool  # the node's audit was incomplete (skipped rules, recovered input, lost GPU)
    gpu_count: int = 0
    saved_verdict: str = ""  # the verdict the saved report recorded ("" when the input was not a saved report)
    judged_with: str = ""  # the request the node was judged with: the report's own, the fleet's where it overrode
    note: str = ""  # why the fleet's verdict differs from the saved one ("" when it does not)


@dataclass(frozen=True)
class FigureStats:
    """One figure across a hardware group: where most nodes are and where the outlier limits lie."""

    figure: str
    unit: str
    nodes: int
    median: float
    mad: float
    low: float  # smallest value
    high: float  # largest value
    low_limit: float  # below this: an outlier (the limits are shown even where too few nodes apply the rule)
    high_limit: float
    outliers: int


@dataclass(frozen=True)
class HardwareGroup:
    """Nodes with one hardware fingerprint (one SKU as the fleet sees it)."""

    label: str  # "8x NVIDIA H100 80GB HBM3; NVLink domains 8; 8 NICs @ 400 Gb/s; driver 550.54.15"
    gpu_model: str
    gpu_count: int
    domain_sizes: tuple[int, ...]
    nic_count: int
    nic_rates_gbps: tuple[float, ...]
    driver: str
    hosts: tuple[str, ...]
    figures: tuple[FigureStats, ...]  # every figure compared across the group, those with outliers first


@dataclass(frozen=True)
class Outlier:
    """One figure of one node far from its group's median (median/MAD rule in FleetOptions)."""

    host: str
    group: str
    figure: str  # "busbw all @ 1 GiB", "NVLinks GPU0-GPU1", "NIC mlx5_0 rate"
    unit: str  # "GB/s", "links", "Gb/s", "us"
    value: float
    median: float
    mad: float
    ratio: float  # value / median
    direction: str  # "low" | "high"
    peers: int  # nodes in the group reporting this figure


@dataclass(frozen=True)
class Tray:
    """One node's NVLink fabric registration (its GPUs' fabric records)."""

    host: str
    gpus: int
    state: str  # "completed" | "in-progress" | ... | "mixed"
    status: str  # "SUCCESS" | NVML error name | "mixed"
    health: str  # health mask/summary as recorded, or "not recorded"
    evidence: tuple[str, ...] = ()  # why its NVLink domain is taken to span nodes (a tray in no rack)


@dataclass(frozen=True)
class Rack:
    """An NVL rack's NVLink domain, assembled from trays sharing (cluster UUID, clique id)."""

    cluster_uuid: str
    clique_id: int
    gpus: int
    expected_gpus: int
    trays: tuple[Tray, ...]
    odd_trays: tuple[str, ...]  # hosts whose state, status or health differ from the rack's


@dataclass(frozen=True)
class FabricScope:
    """Fabric-attached nodes of one GPU model whose NVLink domain lies inside the node.

    HGX/DGX NVSwitch baseboards: no rack is assembled from them, and the evidence that decided it is stated.
    """

    gpu_model: str
    hosts: tuple[str, ...]
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class DrainEntry:
    """A node to take out: the reason Slurm will show (``sinfo -R``) and the command that drains it."""

    host: str
    reason: str  # "topoaudit: <code> <message>"
    command: str  # scontrol update nodename=... state=drain reason="..."


@dataclass(frozen=True)
class DrainResult:
    """What ``--apply`` did for one node."""

    host: str
    exit_code: int
    output: str


@dataclass(frozen=True)
class FleetGate:
    """The fleet's verdict, its exit code and the reason for it, decided once for every format."""

    verdict: str  # "pass" | "warn" | "fail"
    exit_code: int
    reason: str
    incomplete: bool


@dataclass(frozen=True)
class FleetReport:
    """Everything the fleet audit learned and decided."""

    schema_version: int
    kind: str
    tool_version: str
    generated_at: str
    options: FleetOptions
    outlier_rule: str  # the rule in words, as every format states it
    nodes: tuple[NodeResult, ...]  # worst first, then by host
    groups: tuple[HardwareGroup, ...]
    outliers: tuple[Outlier, ...]
    findings: tuple[FleetFinding, ...]
    racks: tuple[Rack, ...]
    drain: tuple[DrainEntry, ...]
    gate: FleetGate
    applied: tuple[DrainResult, ...] = ()
    in_node_fabrics: tuple[FabricScope, ...] = ()  # fabric-attached nodes not assembled into racks, and why

    @property
    def verdict(self) -> str:
        """Return the gate's verdict ("pass", "warn" or "fail")."""
        return self.gate.verdict


def fleet_to_dict(report: FleetReport) -> dict[str, Any]:
    """Encode a fleet report as plain JSON data, with the verdict at the top level for easy querying."""
    data: dict[str, Any] = encode(report)
    data["verdict"] = report.gate.verdict
    return data


def fleet_to_json(report: FleetReport) -> str:
    """Serialise a fleet report as the indented JSON document written to disk."""
    return json.dumps(fleet_to_dict(report), indent=2, ensure_ascii=False) + "\n"


def fleet_from_dict(data: Any) -> FleetReport:
    """Read a fleet report written by :func:`fleet_to_dict`; InputError on a foreign or newer document."""
    if not isinstance(data, dict) or data.get("kind") != FLEET_KIND:
        raise InputError('this JSON is not a topoaudit fleet report (no "kind": "topoaudit-fleet")')
    version = data.get("schema_version")
    if not isinstance(version, int) or version > FLEET_SCHEMA_VERSION:
        raise InputError(
            f"fleet report schema_version {version!r} is newer than this topoaudit understands "
            f"({FLEET_SCHEMA_VERSION})",
            hint="upgrade topoaudit to re-render it",
        )
    body = {k: v for k, v in data.items() if k != "verdict"}
    try:
        report: FleetReport = decode(FleetReport, body)
    except DecodeError as exc:
        raise InputError(f"the fleet report is damaged: {exc}") from exc
    return report
