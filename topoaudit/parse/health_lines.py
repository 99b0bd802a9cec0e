"""Health checkers' and the kernel's failure lines, as events: Azure NHC, DCGM and NVIDIA driver (Xid) lines.

People paste the lines a health checker or the kernel log printed, not a report: ``ERROR: nhc: Health check
failed: check_nvlink_status: GPU 0 has nvlinks inactive: Link 4: Inactive``, a ``dcgmi health`` table whose
NVLINK row says Failure, ``NVRM: Xid (PCI:0000:9b:00): 79, pid=..., GPU has fallen off the bus.``. Each becomes a
:class:`HealthEvent` naming the check (or Xid), the GPU or bus id the line names, the NVLink ports it lists and what
it means for a deployment; what a line does not say is absent with its reason.

The kernel-log recognition is the one the live probe uses (:func:`kernel_events`: Xid 74, 79 and 144-150, "fallen
off the bus", NVLink training failures); an Xid's meaning and severity come from the signature catalog
(``xid-N`` entries), never from a second table.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from topoaudit.model.finding import Severity
from topoaudit.model.health import NO_BUS, NO_GPU, NO_XID, SOURCE, HealthEvent
from topoaudit.model.host_checks import KernelEvent
from topoaudit.model.values import Failed, Probed, Unsupported
from topoaudit.parse.prefixes import Line, strip_prefixes
from topoaudit.parse.signatures import Signature, catalog
from topoaudit.units import parse_bus_id

__all__ = ["HealthEvent", "kernel_events", "read_health_lines", "xid_meaning"]

MAX_LINE_CHARS = 300
WATCHED_XIDS = frozenset({74, 79, *range(144, 151)})
"""The Xids the live probe reports: fallen off the bus, NVLink errors, the Blackwell NVLink Xids."""


# The kernel log, as the probe reads it.
_XID = re.compile(r"NVRM: Xid \(PCI:([0-9A-Fa-f:.]+)\): (\d{1,9})")
_FALLEN = re.compile(r"(?:GPU|PCI:?)\s*(?:at PCI:)?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.\d)?)"
                     r".*fallen off the bus", re.I)  # fmt: skip
_TRAINING = re.compile(r"nvlink.*(?:training|train|post.?rx.?det\w*).*fail|nvlink.*fail\w*.*(?:training|train\b)", re.I)
_ANY_BUS = re.compile(r"([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.\d)?)")

# Any Xid in a pasted line (the bus id may be elided: "PCI:..."), and NVSwitch SXids.
_ANY_XID = re.compile(
    r"Xid \((?:PCI:)?(?P<bus>[^)\s]*)[^)]*\): (?P<xid>\d{1,9}),(?: pid=(?P<pid>[^,]*), name=[^,]*,)? ?(?P<msg>.*)"
)
_SXID = re.compile(r"SXid \(PCI:(?P<bus>[^)\s]+)\): (?P<sxid>\d{1,9}), (?P<msg>.*)")
_LINK = re.compile(r"\b[Ll]ink (\d{1,9})\b")
_NVRM_FAILURE = re.compile(
    r"GPU (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d): "
    r"(?P<init>RmInitAdapter failed|rm_init_adapter failed)|probe routine failed for \d+ device"
)
_IOMMU = re.compile(
    r"(?P<bus>[0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)?:? ?AMD-Vi: Event logged \[IO_PAGE_FAULT"
    r"|DMAR: \[DMA (?:Read|Write)[^\]]*\] Request device \[(?P<dmar>[0-9A-Fa-f:.]+)\]"
)
_MESSAGE_LINES = 3  # a driver message continued on the next lines ("NVRM: The NVIDIA GPU ... / fallen off the bus")
_GPU = re.compile(r"\bGPU(?: id)? (\d{1,9})\b")

# Azure NHC (LBNL NHC's die/warning/pass lines), and DCGM's tables and failure reasons.
_NHC = re.compile(
    r"(?P<level>ERROR|WARNING|SUCCESS):\s+\S+?:\s+"
    r"(?:Health check failed|Nearing a failure threshold|Health check passed):\s+"
    r"(?:(?P<check>check_\w+):\s*)?(?P<msg>.*?)\s*$"
)
_NHC_LOGGED = re.compile(r"Node Health Check failed\.\s+(?P<msg>Check (?P<check>check_\w+) returned \d+)")
"""NHC's own log line for a failed check (its log file, or the console with ``-l -``), written before its ERROR line."""
_NHC_CHECKER_STOPPED = re.compile(r"^(?:Script timed out|Terminated by signal)|FaultCode: NHCNA")
"""NHC's own stop (its timeout, a signal) or a check it could not set up (Azure's NHCNA): nothing about the box."""
_NHC_LEVEL = {"ERROR": Severity.FAIL, "WARNING": Severity.WARN, "SUCCESS": Severity.INFO}
_XID_CHECK = re.compile(r"check_\w*xid\w*", re.I)
_NHC_LINK = re.compile(r"^\s*Link (\d{1,9}): Inactive\b")
_DCGM_ROW = re.compile(r"^\s*\|\s*(?P<name>[^|]*?)\s*\|\s*(?P<result>[^|]*?)\s*\|\s*$")
_DCGM_RESULT = re.compile(r"^(?P<word>Pass|Fail|Failure|Warn|Warning|Healthy|Skip)\b", re.I)
_DCGM_REASON = re.compile(
    r"(?P<reason>DCGM_FR_[A-Z0-9_]+)(?:\s+GPU:(?P<gpu>\d{1,9}))?(?:\s+PCI:(?P<bus>[0-9A-Fa-f:.]+))?"
)
_DCGM_DETAIL_ROWS = frozenset({"", "warning", "info", "error"})

# A Kubernetes node (``kubectl describe node``): the GPUs it has against the GPUs the device plugin offers.
_K8S_SECTION = re.compile(r"^(?P<name>[A-Z][\w ]*):\s*$")
_K8S_GPU_COUNT = re.compile(r"^\s*nvidia\.com/gpu:\s+(?P<count>\d{1,6})\b")


def read_health_lines(paste: str | Sequence[Line]) -> tuple[HealthEvent, ...]:
    """Every NHC, DCGM and kernel failure line of a paste, in line order."""
    lines = strip_prefixes(paste) if isinstance(paste, str) else paste
    events: list[HealthEvent] = []
    gpu_context: int | Unsupported = NO_GPU  # the "-> N" row of a dcgmi health table
    recent_bus: tuple[int, str] | None = None  # (line, bus id) of the last NVRM line naming one
    node_section = ""  # the section of `kubectl describe node` the lines are in ("Capacity", "Allocatable")
    gpu_capacity: int | None = None
    for line in lines:
        text = line.text
        if section := _K8S_SECTION.match(text):
            node_section = section["name"]
            continue
        if "nvidia.com/gpu" in text and (count := _K8S_GPU_COUNT.match(text)):
            if node_section == "Capacity":
                gpu_capacity = int(count["count"])
            elif node_section == "Allocatable" and gpu_capacity is not None:
                events.append(_allocatable_event(line.number, gpu_capacity, int(count["count"])))
            continue
        if "NVRM" in text and (named := _ANY_BUS.search(text)):
            recent_bus = (line.number, named.group(1))
        if "SXid (" in text and (m := _SXID.search(text)):
            fatal = "fatal" in m["msg"].lower() and "non-fatal" not in m["msg"].lower()
            events.append(HealthEvent(line.number, "kernel", f"sxid-{int(m['sxid'])}",
                                      Severity.FAIL if fatal else Severity.WARN, _shown(m["msg"]),
                                      pci_bus_id=_bus(m["bus"]), links=_links(m["msg"]),
                                      meaning=catalog().get("sxid").meaning,
                                      cause=catalog().get("sxid").cause))  # fmt: skip
        elif "Xid (" in text:
            events.append(_xid_event(line.number, text))
        elif "fallen off the bus" in text and "NVRM" in text:
            # The driver spreads this message over three NVRM lines: the bus id is on the first.
            near = recent_bus[1] if recent_bus and line.number - recent_bus[0] <= _MESSAGE_LINES else ""
            events.append(_kernel(line.number, "fallen-off-bus", text, near, "nvrm-fallen-off-bus"))
        elif "NVRM" in text and (m := _NVRM_FAILURE.search(text)):
            init = m["init"] is not None
            events.append(_kernel(line.number, "rm-init-failed" if init else "probe-failed", text, m["bus"] or "",
                                  "nvrm-init-failed" if init else "nvrm-probe-failed"))  # fmt: skip
        elif ("IO_PAGE_FAULT" in text or "DMAR: [DMA" in text) and (m := _IOMMU.search(text)):
            events.append(_kernel(line.number, "iommu-fault", text, m["bus"] or m["dmar"] or "", "iommu-io-page-fault"))
        elif "nvlink" in text.lower() and _TRAINING.search(text):
            bus = _ANY_BUS.search(text)
            events.append(HealthEvent(line.number, "kernel", "nvlink-training-failed", Severity.FAIL, _shown(text),
                                      pci_bus_id=_bus(bus.group(1)) if bus else NO_BUS,
                                      links=_links(text), cause="nvlink-down"))  # fmt: skip
        elif ("nhc" in text or "check_" in text) and (m := _NHC.search(text)):
            if not _checker_stopped(m["check"], m["msg"]):
                events.append(_nhc_event(line.number, m["level"], m["check"], m["msg"]))
        elif "Node Health Check failed" in text and (m := _NHC_LOGGED.search(text)):
            if not _checker_stopped(m["check"], m["msg"]):
                events.append(_nhc_event(line.number, "ERROR", m["check"], m["msg"]))
        elif (link := _NHC_LINK.match(text)) and events and events[-1].check == "check_nvlink_status":
            events[-1] = replace(events[-1], links=(*events[-1].links, int(link[1])))
        elif "DCGM_FR_" in text and (m := _DCGM_REASON.search(text)):
            events.append(HealthEvent(line.number, "dcgm", m["reason"], Severity.WARN, _shown(text),
                                      gpu=int(m["gpu"]) if m["gpu"] else NO_GPU,
                                      pci_bus_id=_bus(m["bus"]) if m["bus"] else NO_BUS))  # fmt: skip
        elif text.lstrip().startswith("|") and (m := _DCGM_ROW.match(text)):
            gpu_context = _dcgm_row(line.number, m, events, gpu_context)
    return tuple(events)


def _allocatable_event(number: int, capacity: int, allocatable: int) -> HealthEvent:
    """A node whose device plugin offers fewer GPUs than the node has: it withholds the ones it found unhealthy."""
    text = f"nvidia.com/gpu: capacity {capacity}, allocatable {allocatable}"
    if allocatable >= capacity:
        return HealthEvent(number, "kubernetes", "gpu-allocatable", Severity.INFO, text)
    return HealthEvent(
        number, "kubernetes", "gpu-allocatable", Severity.WARN, text,
        meaning=(f"the NVIDIA device plugin withholds {capacity - allocatable} of the node's {capacity} GPUs, which "
                 "it does when it sees a GPU lost or a critical Xid: a job asking for every GPU of the node cannot "
                 "be placed there"),
        cause="xid",
    )  # fmt: skip


def _kernel(number: int, check: str, text: str, bus: str, signature: str) -> HealthEvent:
    """A kernel line that fails a GPU, with the catalog's meaning for it."""
    sig = catalog().get(signature)
    return HealthEvent(number, "kernel", check, sig.severity, _shown(text), pci_bus_id=_bus(bus) if bus else NO_BUS,
                       meaning=sig.meaning, cause=sig.cause)  # fmt: skip


def _xid_event(number: int, text: str) -> HealthEvent:
    m = _ANY_XID.search(text)
    if m is None:
        return HealthEvent(number, "kernel", "xid", Severity.WARN, _shown(text), pci_bus_id=_bus_from(text))
    xid = int(m["xid"])
    signature = _xid_signature(xid, text)
    return HealthEvent(
        number, "kernel", f"xid-{xid}", signature.severity, _shown(m["msg"]),
        pci_bus_id=_bus(m["bus"]) if m["bus"] and "." * 3 not in m["bus"] else NO_BUS,
        xid=xid, links=_links(m["msg"]), meaning=signature.meaning, cause=signature.cause,
    )  # fmt: skip


_ROOT_XID = re.compile(r"caused by previous Xid (\d{1,9})")


def _xid_signature(xid: int, text: str) -> Signature:
    """The catalog's signature for this Xid line (its own entry, the 144-150 ones by fatality, or the generic); an Xid
    45 "caused by previous Xid N" is judged as N, the cause it names."""
    cat = catalog()
    if xid == 45 and (root := _ROOT_XID.search(text)) and root[1] != "45":
        return _xid_signature(int(root[1]), "")  # a channel torn down after an earlier Xid: that one is the cause
    if 144 <= xid <= 150:
        return cat.get("xid-144-150-nonfatal" if "Nonfatal" in text else "xid-144-150-fatal")
    try:
        return cat.get(f"xid-{xid}")
    except KeyError:
        return cat.get("xid")


def xid_meaning(xid: int) -> str:
    """What an Xid number means, as the signature catalog says (the generic sentence for unlisted numbers)."""
    return _xid_signature(xid, "").meaning


def _checker_stopped(check: str | None, message: str) -> bool:
    """Whether an NHC failure is the checker's own (it stopped, or could not set its check up), not the box's."""
    return check == "check_all_reduce_dependencies" or bool(_NHC_CHECKER_STOPPED.search(message))


def _nhc_event(number: int, level: str, named_check: str | None, message: str) -> HealthEvent:
    check = named_check or "nhc"
    xid = _ANY_XID.search(message)
    gpu = _GPU.search(message)
    return HealthEvent(
        number, "nhc", check, _NHC_LEVEL[level], _shown(message),
        gpu=int(gpu[1]) if gpu else NO_GPU,
        pci_bus_id=_bus(xid["bus"]) if xid and xid["bus"] and "..." not in xid["bus"] else NO_BUS,
        xid=int(xid["xid"]) if xid else NO_XID,
        links=_links(message) if check == "check_nvlink_status" else (),
        # a check of the kernel log's Xids (Azure's check_gpu_xid, a site's own "check_xid_errors returned 1")
        cause="xid" if xid or _XID_CHECK.search(f"{check} {message}") else "",
    )  # fmt: skip


def _dcgm_row(number: int, m: re.Match[str], events: list[HealthEvent], gpu: int | Unsupported) -> int | Unsupported:
    """Read one row of a dcgmi health/diag table; returns the GPU the rows below it are about."""
    name, result = m["name"], m["result"]
    bare = name.removeprefix("->").strip()
    outcome = _DCGM_RESULT.match(result)
    if name.lower() in _DCGM_DETAIL_ROWS or outcome is None:
        detail = result if name.lower() in _DCGM_DETAIL_ROWS else ""
        if detail and events and events[-1].source == "dcgm" and events[-1].line < number:
            last = events[-1]
            named = _GPU.search(detail)
            events[-1] = replace(
                last,
                text=_shown(f"{last.text} {detail}"),
                gpu=int(named[1]) if named and isinstance(last.gpu, Unsupported) else last.gpu,
                links=(*last.links, *_links(detail)),
            )
        return gpu
    word = outcome[1].lower()
    if name.startswith("->") and bare.isdecimal() and len(bare) <= 9:
        return int(bare)  # "-> 0": the GPU the following subsystem rows are about
    if bare.lower() == "overall health" or word in ("pass", "healthy", "skip"):
        return gpu
    severity = Severity.FAIL if word.startswith("fail") else Severity.WARN
    events.append(HealthEvent(number, "dcgm", bare, severity, "", gpu=gpu))
    return gpu


def _links(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in _LINK.findall(text))


def _shown(text: str) -> str:
    return text.strip()[:MAX_LINE_CHARS]


def _bus(text: str) -> Probed[str]:
    parsed = parse_bus_id(text)
    return parsed if parsed else Failed(SOURCE, f"not a PCI bus id: {text!r}")


def _bus_from(text: str) -> Probed[str]:
    m = _ANY_BUS.search(text)
    return _bus(m.group(1)) if m else NO_BUS


# --- the kernel log as the live probe reads it ----------------------------------------------------------------------

_PROBE_NO_BUS = Unsupported("kernel log", "the line names no PCI bus id")


def kernel_events(text: str) -> tuple[KernelEvent, ...]:
    """Every line of a kernel log with a GPU failure the probe watches (Xid 74, 79, 144-150, fallen off the bus,
    NVLink training failures), in log order, each with the GPU's bus id."""
    events = []
    for raw in text.splitlines():
        line = raw.strip()
        if "NVRM" not in line and "nvlink" not in line.lower() and "fallen off" not in line:
            continue
        shown = line[:MAX_LINE_CHARS]
        if m := _XID.search(line):
            xid = int(m.group(2))
            if xid in WATCHED_XIDS:
                events.append(KernelEvent(f"xid-{xid}", _kernel_bus(m.group(1)), shown))
        elif m := _FALLEN.search(line):
            events.append(KernelEvent("fallen-off-bus", _kernel_bus(m.group(1)), shown))
        elif _TRAINING.search(line):
            bus = _ANY_BUS.search(line)
            events.append(KernelEvent("nvlink-training-failed", _kernel_bus(bus.group(1)) if bus else _PROBE_NO_BUS,
                                      shown))  # fmt: skip
    return tuple(events)


def _kernel_bus(text: str) -> Probed[str]:
    parsed = parse_bus_id(text)
    return parsed if parsed else Failed("kernel log", f"not a PCI bus id: {text!r}")
