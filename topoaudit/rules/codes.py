"""Finding codes: each declared once, beside the rule that raises it, and collected here.

A rule declares its codes in its ``@rule(Code(...))`` decorator (:mod:`topoaudit.rules.registry`); a data file
(a catalog of signatures) declares its entries' codes through the same :func:`declare_code`. Everything that
lists codes reads them from here: the docs' finding table (docs/findings.md), JUnit's test cases, the policy's known
codes, the remedy script's allowed commands.

Codes are a stable contract (tests and CI pipelines match on them); never rename one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from topoaudit.model.finding import Severity

if TYPE_CHECKING:
    from topoaudit.rules.needs import Need

KEBAB = re.compile(r"[a-z0-9]+(-[a-z0-9]+)+")


@dataclass(frozen=True, init=False)
class Code:
    """One finding code: its default severity, a title, the remedy shown with it, and its documentation.

    ``remedy_actions`` names the command templates (:data:`topoaudit.rules.remedies.TEMPLATES`) a finding of
    this code may carry: ``--format remedy`` prints no other command for it, whatever a saved report says.
    ``needs`` are the facts a finding of this code is judged from beyond what its rule needs (a rule that reads
    nvbandwidth judges one code from its copies alone), or, for a code no rule of a node's audit raises (the
    fleet's), all of them. ``doc`` is the user documentation (the docstring of the rule that raises it),
    ``declared_in`` its module.
    """

    code: str
    severity: Severity  # the default; rules may lower or raise it with a stated reason
    title: str
    remedy: str
    remedy_actions: tuple[str, ...]
    needs: tuple[Need, ...]
    doc: str
    declared_in: str

    def __init__(
        self,
        code: str,
        severity: Severity | str,
        *,
        title: str,
        remedy: str,
        remedy_actions: tuple[str, ...] = (),
        needs: tuple[Need, ...] = (),
        doc: str = "",
        declared_in: str = "",
    ) -> None:
        """Declare a code; ``severity`` may be given as its word ("warn")."""
        for name, value in (
            ("code", code),
            ("severity", Severity(severity)),
            ("title", title),
            ("remedy", remedy),
            ("remedy_actions", tuple(remedy_actions)),
            ("needs", tuple(needs)),
            ("doc", doc),
            ("declared_in", declared_in),
        ):
            object.__setattr__(self, name, value)


_DECLARED: dict[str, Code] = {}


def declare_code(code: Code) -> Code:
    """Add ``code`` to the registry; the one door for rule decorators and data files alike.

    A code is declared once: declaring it again with the same content (a module imported twice) is a no-op,
    with other content it is a ValueError (two places would disagree about one contract).
    """
    if not KEBAB.fullmatch(code.code):
        raise ValueError(f"finding code {code.code!r} is not kebab-case")
    if not code.title or not code.remedy:
        raise ValueError(f"finding code {code.code!r} needs a title and a remedy")
    known = _DECLARED.get(code.code)
    if known is not None and known != code:
        raise ValueError(f"finding code {code.code!r} is declared twice ({known.declared_in}, {code.declared_in})")
    _DECLARED.setdefault(code.code, code)
    return _DECLARED[code.code]


def info(code: str) -> Code:
    """Registry entry of a code; KeyError for a code nobody declared (a bug, caught by tests)."""
    if code not in _DECLARED:
        _load_all()
    return _DECLARED[code]


def _load_all() -> None:
    from topoaudit.rules.families import load_all

    load_all()


def _in_order() -> list[str]:
    """Every declared code: by the order of the families that declare them, then in declaration order."""
    from topoaudit.rules.families import FAMILIES

    rank = {f.module: i for i, f in enumerate(FAMILIES)}
    return sorted(_DECLARED, key=lambda code: rank.get(_DECLARED[code].declared_in, len(rank)))


class _AllCodes(Mapping[str, Code]):
    """Every declared code in registry order, the modules that declare them loaded on first use."""

    def __getitem__(self, code: str) -> Code:
        return info(code)

    def __iter__(self) -> Iterator[str]:
        _load_all()
        return iter(_in_order())

    def __len__(self) -> int:
        _load_all()
        return len(_DECLARED)

    def __contains__(self, code: object) -> bool:
        if code not in _DECLARED:
            _load_all()
        return code in _DECLARED


CODES: Mapping[str, Code] = _AllCodes()
"""Code -> its declaration, for everything that lists codes (docs, JUnit, policies)."""
