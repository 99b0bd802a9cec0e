"""Cross-check NVML against ``nvidia-smi`` text: the two should tell the same story.

``nvidia-smi`` text is not a stable interface, so it never replaces NVML; it is read only to compare.
Only what the text states is compared (an elided or truncated capture is not a disagreement), and a text
that could not be captured is recorded as such, not as a disagreement.
"""

from __future__ import annotations

from topoaudit.errors import InputError
from topoaudit.model.machine import Gpu, Link, PathLevel, SourceDisagreement
from topoaudit.model.values import Failed, Probed, Unsupported
from topoaudit.probe.snapshot import Snapshot

TOPO_M = "nvidia-smi topo -m"
NVLINK_S = "nvidia-smi nvlink -s"

ALL_LINKS = -1  # key for "every link of this GPU" (NVML's "all links are inactive"), as the nvlink parser keys it


def link_states(text: str) -> dict[int, dict[int, str]]:
    """``nvidia-smi nvlink -s`` -> {gpu: {link: "active" | "inactive"}}, read by the one nvlink parser.

    GPUs without link lines map to {}; an empty or unreadable capture states nothing ({}).
    """
    from topoaudit.parse.nvlink_status import parse_nvlink_status

    try:
        parsed = parse_nvlink_status(text, NVLINK_S)
    except InputError:
        return {}
    return {
        g.index: {p.link: p.state for p in g.nvlink_ports if isinstance(p.state, str)}
        if isinstance(g.nvlink_ports, tuple)
        else {}
        for g in parsed.machine.gpus
    }


def cross_check(snapshot: Snapshot, gpus: tuple[Gpu, ...], links: list[Link]) -> Probed[tuple[SourceDisagreement, ...]]:
    """Disagreements between NVML's answers and the ``topo -m`` / ``nvlink -s`` texts of the same probe."""
    texts = {c.command: c.text for c in snapshot.commands}
    if not any(isinstance(t, str) for t in texts.values()):
        reasons = "; ".join(f"{cmd}: {t}" for cmd, t in texts.items()) or "no nvidia-smi text captured"
        return Unsupported("nvidia-smi", reasons)
    found: list[SourceDisagreement] = []
    topo = texts.get(TOPO_M)
    if isinstance(topo, str):
        found.extend(_check_topo(topo, gpus, links))
    status = texts.get(NVLINK_S)
    if isinstance(status, str):
        found.extend(_check_nvlink(status, gpus))
    return tuple(found)


def _check_topo(text: str, gpus: tuple[Gpu, ...], links: list[Link]) -> list[SourceDisagreement]:
    from topoaudit.parse.topo_matrix import parse_topo_matrix

    try:
        parsed = parse_topo_matrix(text).machine
    except InputError as exc:
        return [SourceDisagreement("topo -m text", "readable", f"unreadable: {exc}", TOPO_M)]
    out: list[SourceDisagreement] = []
    live = [g for g in gpus if not isinstance(g.status, Failed)]
    if len(parsed.gpus) != len(gpus):
        out.append(SourceDisagreement("GPU count", str(len(gpus)), str(len(parsed.gpus)), TOPO_M))
    ok = {g.label for g in live}
    mine = {(lk.a, lk.b): lk for lk in links if lk.a.startswith("GPU") and lk.b.startswith("GPU")}
    for other in parsed.links:
        if not (other.a.startswith("GPU") and other.b.startswith("GPU")):
            continue
        key = (other.a, other.b) if (other.a, other.b) in mine else (other.b, other.a)
        lk = mine.get(key)
        if lk is None or lk.a not in ok or lk.b not in ok or lk.level == PathLevel.UNKNOWN:
            continue
        if other.level == PathLevel.UNKNOWN:
            continue
        if (lk.level, lk.nvlinks) != (other.level, other.nvlinks):
            out.append(SourceDisagreement(f"{lk.a}-{lk.b}", lk.code, other.code, TOPO_M))
    return out


def _check_nvlink(text: str, gpus: tuple[Gpu, ...]) -> list[SourceDisagreement]:
    out: list[SourceDisagreement] = []
    stated = link_states(text)
    for gpu in gpus:
        if gpu.index not in stated or isinstance(gpu.status, Failed) or not isinstance(gpu.nvlink_ports, tuple):
            continue
        for port in gpu.nvlink_ports:
            said = stated[gpu.index].get(port.link, stated[gpu.index].get(ALL_LINKS))
            if said is None or not isinstance(port.state, str):
                continue
            if said != port.state:
                out.append(SourceDisagreement(f"{gpu.label} NVLink {port.link}", port.state, said, NVLINK_S))
    return out
