"""What a pasted Python session printed of peer-to-peer between GPUs: tensors after a copy (``tensor([0., 0.],
device='cuda:1')``), whether the copies arrived with the values they left with, and peer-access queries
(``torch.cuda.can_device_access_peer(0, 1)`` answering ``False``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    from topoaudit.parse.python_session import looks_like_python_session

    return looks_like_python_session(text)


def load(text: str, name: str) -> Facts:
    """The prints, the copies among them and the queries; no machine: a print names a device, not the box's links."""
    from topoaudit.errors import InputError
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.python_session import read_python_session

    read = read_python_session(text)
    if read is None or not (read.copies or read.peer_queries):
        raise InputError(f"{name}: a Python session without a copy between devices or a peer-access query")
    lines = (
        {n for p in read.prints for n in range(p.line, p.last + 1)}
        | {n for c in read.copies for n in (c.shown_on, c.source.line)}
        | {n for q in read.peer_queries for n in (q.asked_on, q.line)}
    )
    shown = [f"{len(read.prints)} tensors printed"] if read.prints else []
    shown += [f"{len(read.peer_queries)} peer-access queries"] if read.peer_queries else []
    return Facts(
        Machine(source="python-session", gpus=()),
        SourceInfo("python-session", name, description=" and ".join(shown)),
        python_session=read,
        used=frozenset(lines),
        what="a Python session",
    )


READER = Reader(
    "python-session", 89,
    "a Python session's tensors printed after a copy between GPUs (`tensor([...], device='cuda:1')`) or its "
    "peer-access queries (`torch.cuda.can_device_access_peer(0, 1)`)",
    sniff, load,
)  # fmt: skip
