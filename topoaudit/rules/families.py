"""The modules that declare rules and finding codes, in the order their findings are shown.

Each family names what the input must hold for any of its rules to have something to judge: a module whose
facts are absent is not even imported (a pasted matrix never loads NCCL's log model), so each of its rules
names those facts among its own needs. A new rule module is one line here; a new rule in a module, none.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass

from topoaudit.rules.needs import BENCH, CAPTURES, FLEET, NCCL_INSPECTOR, NCCL_LOG, NCCL_RAS, PLAN, Need


@dataclass(frozen=True)
class Family:
    """A module that declares rules, and what the input must hold for any of them to run."""

    module: str
    needs: tuple[Need, ...] = ()


FAMILIES: tuple[Family, ...] = (
    Family("topoaudit.rules.topology_rules"),
    Family("topoaudit.rules.probe_rules"),
    Family("topoaudit.judge.expectations"),
    Family("topoaudit.bench.judge", (BENCH,)),
    Family("topoaudit.fleet.node_pairs", (BENCH,)),
    Family("topoaudit.rules.nccl_rules", (NCCL_LOG,)),
    Family("topoaudit.rules.capture_rules", (CAPTURES,)),
    Family("topoaudit.rules.inspector_rules", (NCCL_INSPECTOR,)),
    Family("topoaudit.rules.ras_rules", (NCCL_RAS,)),
    Family("topoaudit.rules.input_rules"),
    Family("topoaudit.judge.plan_fit", (PLAN,)),
    Family("topoaudit.fleet.assemble", (FLEET,)),
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
