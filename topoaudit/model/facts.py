"""What an input held: the machine and every other kind of fact, each one field.

A reader (:mod:`topoaudit.readers`) returns the Facts of the part of a paste it read; the loader merges the parts
of a mixed paste (a ``topo -m`` beside an NCCL log) into one Facts; the pipeline judges it. A new kind of fact is
one field here and the reader that fills it: the judge's context carries every field (it extends this class).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from topoaudit.model.machine import Machine
from topoaudit.model.report import (
    BENCH_NOT_RUN,
    CAPTURES_NOT_GIVEN,
    INSPECTOR_NOT_GIVEN,
    NCCL_LOG_NOT_GIVEN,
    RAS_NOT_GIVEN,
    InputIssue,
    SourceInfo,
)
from topoaudit.model.values import Unsupported

if TYPE_CHECKING:  # the models of the facts only some inputs hold; a pasted matrix loads none of them
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.health import HealthEvent
    from topoaudit.model.nccl import NcclView
    from topoaudit.model.nccl_graph import NcclGraphPrint
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.model.paste import Hit
    from topoaudit.model.python_session import PythonSession
    from topoaudit.model.report import Report
    from topoaudit.model.setpci import SetpciAcs
    from topoaudit.model.smi_query import SmiQuery

SIGNATURES_NOT_SCANNED = Unsupported("signatures", "no pasted text was looked through for known messages")
SMI_QUERY_NOT_GIVEN = Unsupported("nvidia-smi -q", "no nvidia-smi -q output in the input")
HEALTH_NOT_GIVEN = Unsupported("health lines", "no NHC, DCGM or kernel-log lines in the input")
GRAPH_PRINT_NOT_GIVEN = Unsupported("nccl-graph", "no NCCL topology print (NCCL_DEBUG_SUBSYS=GRAPH) in the input")
SETPCI_ACS_NOT_GIVEN = Unsupported("setpci", "no setpci read of bridges' ACS control in the input")
PYTHON_SESSION_NOT_GIVEN = Unsupported(
    "python session", "no tensors printed after a copy between GPUs, nor a peer-access query, in the input"
)
JUDGED_WITHOUT_GPUS = (
    "bench", "nccl", "signatures", "smi_query", "health", "graph_print", "setpci_acs", "python_session",
)  # fmt: skip
"""Facts judged on their own: an input holding one of them is judged even when it names no GPU (an NCCL WARN
line, a traceback, the Fabric block of ``nvidia-smi -q``, NHC lines, the tail of an nccl-tests run, tensors printed
after a copy between GPUs, a peer-access query answered)."""


PROSE_KINDS = ("bandwidth-note", "gpu-text", "program-output")
"""Paste parts recognised by their words or a program's layout alone (:mod:`topoaudit.parse.paste_parts`), not by
a capture's shape."""


@dataclass(frozen=True)
class Facts:
    """Everything one input (or one part of a paste) held; an absent kind of fact is an Unsupported saying why."""

    machine: Machine
    source: SourceInfo
    issues: tuple[InputIssue, ...] = ()  # what reading recovered or ignored, by line
    extras: dict[str, Any] = field(default_factory=dict)  # facts a source reports as they are (the probe's summary)
    bench: BenchResult | Unsupported = BENCH_NOT_RUN  # an all-reduce sweep (a pasted nccl-tests run), not yet judged
    nccl: NcclView | Unsupported = NCCL_LOG_NOT_GIVEN  # NCCL's own view, from an NCCL_DEBUG=INFO log
    captures: Captures | Unsupported = CAPTURES_NOT_GIVEN  # NCCL's XML dumps, nvbandwidth and p2p matrices
    inspector: dict[str, Any] | Unsupported = INSPECTOR_NOT_GIVEN  # NCCL Inspector, summarized per communicator
    ras: dict[str, Any] | Unsupported = RAS_NOT_GIVEN  # an NCCL RAS dump, in the form the report keeps
    signatures: tuple[Hit, ...] | Unsupported = SIGNATURES_NOT_SCANNED  # known messages found on the paste's lines
    smi_query: SmiQuery | Unsupported = SMI_QUERY_NOT_GIVEN  # nvidia-smi -q: fabric state and health, ECC, PCIe
    health: tuple[HealthEvent, ...] | Unsupported = HEALTH_NOT_GIVEN  # NHC, DCGM and kernel (Xid) failure lines
    graph_print: NcclGraphPrint | Unsupported = GRAPH_PRINT_NOT_GIVEN  # NCCL's topology print (GRAPH subsystem)
    setpci_acs: SetpciAcs | Unsupported = SETPCI_ACS_NOT_GIVEN  # setpci reads of PCIe bridges' ACS control
    python_session: PythonSession | Unsupported = PYTHON_SESSION_NOT_GIVEN  # tensors, copies, peer-access queries
    saved: Report | None = None  # the input was a saved report: what it was asked and decided (the fleet keeps it)
    used: frozenset[int] | None = None  # the 1-based lines read; None: the whole text, nothing left beside it
    what: str = ""  # what the part is, in a few words ("`nvidia-smi topo -m`"), to name it beside another
    text: str = field(default="", repr=False, compare=False)  # the paste as read: a finding quotes the line it names

    def judgeable_without_gpus(self) -> bool:
        """Whether the input holds something to judge although it names no GPU.

        A fact judged on its own (:data:`JUDGED_WITHOUT_GPUS`: a known message, a fabric block, a health line...),
        or a recognised part of a paste no reader could read, which the report then names as not judged (prose about
        the interconnect, :data:`PROSE_KINDS`, only when nothing else in the paste was read: a topology file's
        comment that names NCCL does not make a file without GPUs judgeable).
        """
        if any(not isinstance(getattr(self, kind), Unsupported) and getattr(self, kind) != () for kind in
               JUDGED_WITHOUT_GPUS):  # fmt: skip
            return True
        parts = self.source.parts
        read = any(part.read_by for part in parts)  # beside a part that was read, words in prose are commentary
        ignored = ("other", *(PROSE_KINDS if read else ()))
        return any(not part.read_by and part.kind not in ignored for part in parts)
