"""Parse ``nvidia-smi topo -m`` text, as pasted into tickets, into a :class:`Machine`.

CONTRACT (used by the rest of topoaudit; keep it):

* ``parse_topo_matrix(text) -> TopoParse`` -- ``machine.source == "topo-matrix"``; one :class:`Gpu` per
  GPU row (``index``, ``cpu_affinity``, ``numa_nodes``, ``gpu_numa_id`` where present, else
  ``Unsupported("nvidia-smi topo -m", "<why>")``), one :class:`Nic` per NIC column (``label`` as the column
  names it, ``device`` from the NIC Legend), one :class:`Link` per unordered device pair (GPU-GPU, GPU-NIC,
  NIC-NIC) with ``a``/``b`` the labels ordered GPUs first then NICs by column order, ``code`` the verbatim
  cell (``NV18``, ``SOC``, ``PIX``, unknown vendor codes kept), ``level``/``nvlinks`` from
  :func:`level_from_code`.
* Every recovered or ignored oddity is a :class:`ParseIssue` naming its 1-based input line.
* Input whose GPU matrix is ambiguous or absent raises :class:`TopoParseError` (exit 4) with the issues.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoaudit.errors import InputError
from topoaudit.model.machine import Machine


@dataclass(frozen=True)
class ParseIssue:
    """Something in the input that was recovered, ignored, or made the input unusable."""

    line: int  # 1-based line in the input; 0 when not tied to one line
    action: str  # "recovered" | "ignored" | "ambiguous"
    message: str


@dataclass(frozen=True)
class TopoParse:
    machine: Machine
    issues: tuple[ParseIssue, ...] = ()


class TopoParseError(InputError):
    """The GPU matrix cannot be read without guessing."""

    def __init__(self, message: str, issues: tuple[ParseIssue, ...] = ()) -> None:
        super().__init__(message)
        self.issues = issues


def looks_like_topo_matrix(text: str) -> bool:
    """Cheap sniff: a header naming GPU0 and at least one row starting with GPU0."""
    raise NotImplementedError


def parse_topo_matrix(text: str) -> TopoParse:
    """Parse ``nvidia-smi topo -m`` output; see the module docstring for the contract."""
    raise NotImplementedError
