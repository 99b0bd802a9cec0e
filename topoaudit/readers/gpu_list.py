"""`nvidia-smi -L`: the GPUs of a box, their names and UUIDs, and nothing about the links between them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts

_GPU = re.compile(r"^\s*GPU (?P<index>\d{1,4}): (?P<name>.+?) \(UUID: (?P<uuid>GPU-[0-9a-fA-F-]+)\)\s*$", re.M)
_LINK = re.compile(r"^\s*Link \d+", re.M)  # `nvidia-smi nvlink -s` heads each GPU's links with the same line


def sniff(text: str) -> bool:
    head = text[:200_000]
    return "(UUID: GPU-" in head and _GPU.search(head) is not None and _LINK.search(head) is None


def load(text: str, name: str) -> Facts:
    """Each listed GPU, with the name and UUID it prints; the box's links stay unknown (judged: nothing)."""
    from topoaudit.errors import InputError
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Gpu, Machine
    from topoaudit.model.report import SourceInfo

    found = {int(m["index"]): m for m in _GPU.finditer(text)}
    if not found:
        raise InputError(f"{name}: no `GPU N: name (UUID: ...)` line of `nvidia-smi -L` in the input")
    gpus = tuple(Gpu(i, name=m["name"].strip(), uuid=m["uuid"]) for i, m in sorted(found.items()))
    used = frozenset(text.count("\n", 0, m.start()) + 1 for m in found.values())
    return Facts(
        Machine(source="gpu-list", gpus=gpus),
        SourceInfo("gpu-list", name, description=f"`nvidia-smi -L`: {len(gpus)} GPU(s), no links"),
        used=used,
        what="`nvidia-smi -L`",
    )


READER = Reader(
    "gpu-list",
    108,
    "`nvidia-smi -L` (the GPUs, without their links)",
    sniff,
    load,
    parts=("gpu-list",),
    joins=("gpu.name", "gpu.uuid"),
    capture=True,
)
