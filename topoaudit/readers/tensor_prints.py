"""Tensors a pasted Python session printed (``tensor([0., 0.], device='cuda:1')``) after copying them between GPUs:
whether the copies arrived with the values they left with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    from topoaudit.parse.tensor_prints import looks_like_tensor_prints

    return looks_like_tensor_prints(text)


def load(text: str, name: str) -> Facts:
    """The prints and the copies among them; no machine: a print names a device, not how the box links it."""
    from topoaudit.errors import InputError
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.tensor_prints import read_tensor_prints

    read = read_tensor_prints(text)
    if read is None or not read.copies:
        raise InputError(f"{name}: tensors printed without a copy between devices among them")
    lines = {n for p in read.prints for n in range(p.line, p.last + 1)} | {
        n for c in read.copies for n in (c.shown_on, c.source.line)
    }
    devices = sorted({p.device for p in read.prints})
    return Facts(
        Machine(source="tensor-prints", gpus=()),
        SourceInfo("tensor-prints", name, description=f"{len(read.prints)} tensors printed on {', '.join(devices)}"),
        tensor_prints=read,
        used=frozenset(lines),
        what="tensors printed by PyTorch",
    )


READER = Reader(
    "tensor-prints", 89, "tensors PyTorch printed after a copy between GPUs (`tensor([...], device='cuda:1')`)", sniff,
    load,
)  # fmt: skip
