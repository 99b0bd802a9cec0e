"""`nvidia-smi -q` output, whole or in pieces (``nvidia-smi -q | grep -A12 Fabric``), or its XML form (``-q -x``):
each GPU's NVLink fabric state and health, ECC mode, PCIe link and remapped memory rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.smi_query import SmiQuery
    from topoaudit.parse.prefixes import Line


def sniff(text: str) -> bool:
    head = text[:200_000]
    cheap = ("NVSMI LOG", "Fabric", "GPU 0", "Link Width", "Remapped Rows", "<nvidia_smi_log")
    if not any(word in head for word in cheap):  # cheap first
        return False
    from topoaudit.parse.smi_query import looks_like_smi_query

    return looks_like_smi_query(text)


def load(text: str, name: str) -> Facts:
    from topoaudit.parse.prefixes import strip_prefixes

    return load_lines(strip_prefixes(text), name)


def load_lines(lines: Sequence[Line], name: str) -> Facts:
    """The fabric, ECC and PCIe facts of every GPU the paste shows, judged by the rules over ``nvidia-smi -q``.

    Only the whole output (every attached GPU) becomes the machine: pieces of it say nothing of the GPUs they
    leave out, so the machine then names none (the facts still name the GPUs the pieces show).
    """
    from topoaudit.model.facts import Facts
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.smi_query import read_smi_query

    query = read_smi_query(lines, name)
    shown = f"{len(query.gpus)} GPU(s)" + (", excerpts" if query.excerpt else "")
    return Facts(
        _machine(query),
        SourceInfo("nvidia-smi-q", name, description=f"nvidia-smi -q output: {shown}"),
        smi_query=query,
        used=frozenset(query.used_lines),
        what="`nvidia-smi -q`",
    )


def _machine(query: SmiQuery) -> Machine:
    from topoaudit.model.machine import Gpu, Host, Machine

    host = Host(driver_version=query.driver_version) if isinstance(query.driver_version, str) else Host()
    if query.excerpt:
        return Machine(source="nvidia-smi-q", gpus=(), host=host)
    gpus = tuple(Gpu(i, name=g.product_name, pci_bus_id=g.bus_id) for i, g in enumerate(query.gpus))
    return Machine(source="nvidia-smi-q", gpus=gpus, host=host)


READER = Reader(
    "nvidia-smi-q",
    35,
    "`nvidia-smi -q` output (whole, or its Fabric block), or its XML form (`nvidia-smi -q -x`)",
    sniff,
    load,
    parts=("nvidia-smi-q",),
    joins=("gpu.name", "host.driver_version"),
    load_lines=load_lines,
)
