"""What a pasted Python session shows of peer-to-peer: tensors printed, the copies among them, peer-access answers.

Read by :mod:`topoaudit.parse.python_session`. Threads about broken peer-to-peer show it this way: a tensor printed
on one GPU, the same tensor after ``.to('cuda:1')`` printed with zeros or garbage, and the copy through the host
(``.cpu().to(...)``) printed intact; or ``torch.cuda.can_device_access_peer(0, 1)`` answering ``False``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class TensorPrint:
    """One tensor as printed (``tensor([1., 2.], device='cuda:0')``) or written as a literal in the session."""

    line: int  # 1-based line of the paste where it starts
    last: int  # ... and where it ends
    device: str  # "cuda:0", "cpu"
    shape: tuple[int, ...]  # () for a scalar
    values: tuple[str, ...]  # the elements as printed ("1.", "1.4013e-45", "nan"), in order
    text: str  # its first line, trimmed

    def same_values(self, other: TensorPrint) -> bool:
        """Whether both hold the same elements (printed precision; NaN equals NaN)."""
        if self.shape != other.shape:
            return False
        return all(_same(a, b) for a, b in zip(self.values, other.values, strict=True))


def _same(a: str, b: str) -> bool:
    x, y = _number(a), _number(b)
    if x is None or y is None:
        return a == b
    return (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-3, abs_tol=1e-6)


def _number(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


@dataclass(frozen=True)
class TensorCopy:
    """A print that is a copy of an earlier one, and what showed it."""

    source: TensorPrint
    copy: TensorPrint
    through_host: bool  # copied by way of host memory (``.cpu().to(...)``), not GPU to GPU
    shown_by: str  # "line 9: `t.to(cuda0)`", or the later print where the source's values arrive on the copy's GPU
    shown_on: int  # the line of that statement or print

    @property
    def intact(self) -> bool:
        """The copy holds the source's values."""
        return self.copy.same_values(self.source)

    @property
    def between_gpus(self) -> bool:
        """A copy from one GPU to another, not through the host."""
        return (
            not self.through_host
            and self.source.device.startswith("cuda")
            and self.copy.device.startswith("cuda")
            and self.source.device != self.copy.device
        )


@dataclass(frozen=True)
class PeerQuery:
    """A peer-access query and the answer the session printed (``can_device_access_peer(0, 1)`` -> ``False``)."""

    asked_on: int  # the line of the call
    line: int  # the line of the answer
    gpu: int  # the device asking
    peer: int  # the device whose memory it would access
    answer: str  # as printed: "True", "False", "1", "0"
    asked: str  # the call, as written ("torch.cuda.can_device_access_peer(0, 1)")

    @property
    def can_access(self) -> bool:
        """CUDA answered that the device can access its peer's memory."""
        return self.answer in ("True", "1")


@dataclass(frozen=True)
class PythonSession:
    """The tensors a pasted session printed, the copies among them, and its peer-access queries."""

    prints: tuple[TensorPrint, ...]
    copies: tuple[TensorCopy, ...]
    peer_queries: tuple[PeerQuery, ...] = ()

    @property
    def gpu_copies(self) -> tuple[TensorCopy, ...]:
        """The copies from one GPU to another."""
        return tuple(c for c in self.copies if c.between_gpus)
