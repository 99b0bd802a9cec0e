"""A failure (or pass) line a health checker or the kernel printed: Azure NHC, DCGM, the NVIDIA driver's Xid lines.

Read by :mod:`topoaudit.parse.health_lines`; what a line does not say is absent with its reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from topoaudit.model.finding import Severity
from topoaudit.model.values import Probed, Unsupported

SOURCE = "health lines"
NO_GPU = Unsupported(SOURCE, "the line names no GPU index")
NO_BUS = Unsupported(SOURCE, "the line names no PCI bus id")
NO_XID = Unsupported(SOURCE, "not an Xid line")


HOST_ONLY_CHECKS = re.compile(
    r"check_(?:fs_\w+|ps_\w+|file_\w+|moab_\w+|dmi_\w+|hw_(?:physmem|swap|mem|cpuinfo)(?:_free)?)"
)
"""NHC's checks of the host itself (its memory, swap, CPUs, file systems, processes, DMI strings, scheduler): a
failure there is the node's, not its GPUs' or their links', and judges nothing of the interconnect."""


@dataclass(frozen=True)
class HealthEvent:
    """One failure (or pass) a health checker or the kernel printed."""

    line: int  # 1-based line in the paste
    source: str  # "nhc" | "dcgm" | "kernel" | "kubernetes"
    check: str  # NHC check ("check_nvlink_status"), DCGM subsystem or reason, "xid-79", "sxid-12028", "fallen-off-bus"
    severity: Severity  # what it means for a deployment (NHC's ERROR is a fail, WARNING a warn, SUCCESS info)
    text: str  # the line's message, trimmed
    gpu: int | Unsupported = NO_GPU
    pci_bus_id: Probed[str] = NO_BUS
    xid: int | Unsupported = NO_XID
    links: tuple[int, ...] = ()  # NVLink ports the line names (inactive, down)
    meaning: str = ""  # what the Xid or check means, where the catalog says
    cause: str = ""  # its class of cause, where the catalog or the line says ("nvlink-down" for Xid 74)

    @property
    def of_the_host_only(self) -> bool:
        """Whether this is an NHC check of the host itself (:data:`HOST_ONLY_CHECKS`), not of its GPUs or links."""
        return self.source == "nhc" and bool(HOST_ONLY_CHECKS.fullmatch(self.check))
