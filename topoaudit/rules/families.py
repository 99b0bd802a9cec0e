"""The modules that declare rules and finding codes, in the order their findings are shown.

Each family names what the input must hold for any of its rules to have something to judge: a module whose
facts are absent is not even imported (a pasted matrix never loads NCCL's log model), so each of its rules
names those facts among its own needs. A new rule module is one line here; a new rule in a module, none.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass

from topoaudit.rules.needs import (
    BENCH,
    CAPTURES,
    FLEET,
    HEALTH_LINES,
    NCCL_GRAPH_PRINT,
    NCCL_INSPECTOR,
    NCCL_LOG,
    NCCL_RAS,
    PLAN,
    PYTHON_SESSION,
    SETPCI_ACS,
    SIGNATURES,
    SMI_QUERY,
    Need,
)


@dataclass(frozen=True)
class Family:
    """A module that declares rules, what its findings are about, and what the input must hold for any to run."""

    module: str
    title: str  # what its findings are about, as the docs group them
    needs: tuple[Need, ...] = ()


FAMILIES: tuple[Family, ...] = (
    Family("topoaudit.rules.topology_rules", "The NVLink and PCIe topology"),
    Family("topoaudit.rules.probe_rules", "What only a live probe sees: links, fabric, PCIe path, RDMA, host"),
    Family("topoaudit.judge.expectations", "What the box was expected to be"),
    Family("topoaudit.bench.judge", "The all-reduce bench", (BENCH,)),
    Family("topoaudit.rules.run_rules", "A pasted nccl-tests run: failures, hangs, data check, latency", (BENCH,)),
    Family("topoaudit.fleet.node_pairs", "A node-pair sweep across nodes", (BENCH,)),
    Family("topoaudit.rules.nccl_rules", "NCCL's own view: an NCCL_DEBUG=INFO log", (NCCL_LOG,)),
    Family("topoaudit.rules.capture_rules", "NCCL's topology dump and measured matrices", (CAPTURES,)),
    Family("topoaudit.rules.inspector_rules", "NCCL Inspector", (NCCL_INSPECTOR,)),
    Family("topoaudit.rules.ras_rules", "NCCL RAS", (NCCL_RAS,)),
    Family("topoaudit.rules.smi_query_rules", "A pasted `nvidia-smi -q`: the NVLink fabric", (SMI_QUERY,)),
    Family("topoaudit.rules.health_rules", "Health checkers and the kernel log: NHC, DCGM, Xid", (HEALTH_LINES,)),
    Family("topoaudit.rules.graph_print_rules", "NCCL's topology print (GRAPH)", (NCCL_GRAPH_PRINT,)),
    Family("topoaudit.rules.setpci_rules", "A pasted `setpci` read of bridges' ACS control", (SETPCI_ACS,)),
    Family(
        "topoaudit.rules.session_rules",
        "A Python session: tensors after a copy, peer-access queries",
        (PYTHON_SESSION,),
    ),
    Family("topoaudit.rules.signature_rules", "Known messages on any pasted line", (SIGNATURES,)),
    Family("topoaudit.rules.input_rules", "The input itself"),
    Family("topoaudit.judge.plan_fit", "The deploy plan", (PLAN,)),
    Family("topoaudit.fleet.assemble", "The fleet: many node reports compared", (FLEET,)),
)
"""Every module that declares findings, in the order its findings are shown (worst first, then this order)."""


_LOADED: set[str] = set()


def load(families: Iterable[Family]) -> None:
    """Import the modules of ``families`` (their rules and codes register themselves)."""
    for family in families:
        if family.module not in _LOADED:
            importlib.import_module(family.module)
            _LOADED.add(family.module)


def load_all() -> None:
    """Import every module that declares rules or codes: for what lists them all (docs, JUnit, policies)."""
    load(FAMILIES)
