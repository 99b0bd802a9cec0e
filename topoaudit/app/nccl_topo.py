"""``nccl-topo``: write an ``NCCL_TOPO_FILE`` for this box (a live probe), a saved snapshot, or a saved report.

The snapshot keeps every GPU's and NIC's sysfs path, so the switches above them are placed by NCCL's own rule;
a report keeps the path class between devices (PIX, PXB), from which the switches are inferred. ``--switch``
names devices the user knows share a switch (a provider's documentation, the host's ``lspci -tv``), which is
how a VM that flattens its PCIe tree gets a useful file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from topoaudit.app.audit import ProbeRequest
from topoaudit.topofile.build import (
    apply_switch_groups,
    flat_warnings,
    from_machine,
    from_snapshot,
    placed,
    summary,
    without_nvlinks,
)

if TYPE_CHECKING:
    from topoaudit.topofile.write import TopologyFile

STDIN_INPUT = "a snapshot or saved report, e.g. topoaudit probe | topoaudit nccl-topo -"


@dataclass(frozen=True)
class NcclTopoRequest:
    """What ``nccl-topo`` was asked: the input (None: probe this machine), the file, the user's switch groups."""

    path: str | None = None
    output: str | None = None
    switches: tuple[str, ...] = ()  # each "A,B,..." (bus ids, GPU labels such as GPU3, RDMA names such as mlx5_0)
    nvlinks: bool = True  # write the NVLinks the probe saw (NCCL then skips its own NVLink detection)
    probe: ProbeRequest = field(default_factory=ProbeRequest)


@dataclass(frozen=True)
class NcclTopoResult:
    """The file's text, where it went, the line to use, and what the user must know."""

    xml: str
    written_to: str | None
    env_line: str  # NCCL_TOPO_FILE=/abs/path (or a placeholder path when the file went to standard output)
    summary: str
    warnings: tuple[str, ...] = ()


def nccl_topo(request: NcclTopoRequest) -> NcclTopoResult:
    """Build the topology file and write it (``-o``), or return it for standard output."""
    from topoaudit import __version__
    from topoaudit.topofile.write import check_writable, topology_xml

    topo, taken_at = _topology(request)
    check_writable(topo, topo.source)
    if request.switches:
        topo = apply_switch_groups(topo, request.switches)
    topo = replace(topo, warnings=flat_warnings(topo))
    path = os.path.abspath(request.output) if request.output else "/path/to/topo.xml"
    header = _header(topo, __version__, taken_at, path, request.nvlinks)
    if not request.nvlinks:
        topo = without_nvlinks(topo)
    text = topology_xml(topo, header)
    if request.output:
        from topoaudit.app.common import write_text_file

        write_text_file(request.output, text)
    return NcclTopoResult(text, request.output, f"NCCL_TOPO_FILE={path}", summary(topo), topo.warnings)


# --- where the machine comes from ------------------------------------------------------------------------


def _topology(request: NcclTopoRequest) -> tuple[TopologyFile, str]:
    if request.path is None:
        from topoaudit.probe.collect import probe as collect

        probe = request.probe
        snapshot = collect(probe.sysfs_root, call_timeout_s=probe.call_timeout_s, smi_timeout_s=probe.smi_timeout_s)
        return from_snapshot(snapshot, "this machine"), snapshot.taken_at
    from topoaudit.app.common import read_input
    from topoaudit.model.values import Unsupported
    from topoaudit.probe.snapshot import looks_like_snapshot, snapshot_from_json

    text = read_input(request.path, STDIN_INPUT)
    name = "<stdin>" if request.path == "-" else request.path
    if looks_like_snapshot(text):
        snapshot = snapshot_from_json(text, name)
        return from_snapshot(snapshot, name), snapshot.taken_at
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.readers import load_text

    loaded = load_text(text, name)
    taken_at = loaded.saved.generated_at if loaded.saved is not None else ""
    captures = loaded.saved.captures if loaded.saved is not None else loaded.captures
    dump = captures.nccl_topology if isinstance(captures, Captures) else None
    return from_machine(loaded.machine, name, dump if not isinstance(dump, Unsupported) else None), taken_at


def _header(topo: TopologyFile, version: str, taken_at: str, path: str, nvlinks: bool) -> list[str]:
    when = f", probed {taken_at}" if taken_at else ""
    lines = [
        f"NCCL topology file written by topoaudit {version} from {topo.source}{when}.",
        f"Use it with: NCCL_TOPO_FILE={path}",
        "NCCL loads this file first and reads from the box only what it leaves out: GPU dev, sm and gdr, the",
        "network devices (names, speed, GPUDirect RDMA) and the CPU model are left to NCCL on purpose.",
        "PCIe switches: none above any GPU or NIC in the sysfs paths."
        if topo.flat
        else {
            "sysfs": "PCIe switches: from the sysfs paths, by NCCL's rule (a switch is its upstream port).",
            "paths": "PCIe switches: inferred from the path classes between devices (stand-ins ffff:ff:NN.0).",
            "given": "PCIe switches: as the sysfs paths show, and the groups given on the command line "
            "(stand-ins ffff:ff:NN.0).",
        }.get(topo.grouping, "PCIe switches: none known."),
    ]
    if nvlinks and any(e.nvlinks for e in topo.endpoints):
        lines.append("NVLinks: as probed; NCCL takes them from here instead of asking NVML, so write the file again")
        lines.append("after a GPU, link or driver change.")
    lines += ["", "Devices:"]
    for cpu, chain, end in placed(topo):
        under = f", under switch {' / '.join(chain)}" if chain else ", on the CPU (no switch)"
        lines.append(f"  {end.label:<8} {end.bus_id}  NUMA {cpu}{under}")
    for note in topo.notes:
        lines.append(f"Note: {note}")
    for warning in flat_warnings(topo, in_file=True):
        lines += ["", f"WARNING: {warning}"]
    return lines
