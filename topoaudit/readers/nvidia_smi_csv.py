"""`nvidia-smi --query-gpu=... --format=csv`: the fields asked for, one row per GPU (read as `nvidia-smi -q` is)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts
    from topoaudit.parse.prefixes import Line


def sniff(text: str) -> bool:
    if "," not in text[:200_000]:
        return False
    from topoaudit.parse.smi_csv import looks_like_smi_csv

    return looks_like_smi_csv(text)


def load(text: str, name: str) -> Facts:
    from topoaudit.parse.prefixes import strip_prefixes

    return load_lines(strip_prefixes(text), name)


def load_lines(lines: Sequence[Line], name: str) -> Facts:
    """The GPUs the table lists, with the fields the rules over `nvidia-smi -q` judge (their PCIe link, model)."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Gpu, Machine
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.smi_csv import read_smi_csv

    table = read_smi_csv(lines, name)
    gpus = tuple(Gpu(i, name=g.product_name, pci_bus_id=g.bus_id) for i, g in enumerate(table.gpus))
    return Facts(
        Machine(source="nvidia-smi-csv", gpus=gpus),
        SourceInfo("nvidia-smi-csv", name, description=f"nvidia-smi --query-gpu output: {len(gpus)} GPU(s)"),
        smi_query=table,
        used=frozenset(table.used_lines),
        what="`nvidia-smi --query-gpu`",
    )


READER = Reader(
    "nvidia-smi-csv",
    36,
    "`nvidia-smi --query-gpu=... --format=csv` output (with its header)",
    sniff,
    load,
    joins=("gpu.name",),
    load_lines=load_lines,
)
