"""Which finding codes the test run saw raised: a full run fails when a declared code never was.

Every finding is made through the registry's entry for its code (``info``, looked up by ``rules.base.finding`` and
the bench's own helper): that lookup is wrapped at the start of the session to note each code, and so is the
fleet's assembly. At the end of a run over the whole suite, a code that is declared and that no test made
topoaudit raise is named, and the run fails (a declaration nothing exercises is a contract nothing checks).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

RAISED: set[str] = set()


def _recording(info: Callable[[str], Any]) -> Callable[[str], Any]:
    @functools.wraps(info)
    def recorded(code: str) -> Any:
        RAISED.add(code)
        return info(code)

    return recorded


def _recording_fleet(assemble: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(assemble)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        report = assemble(*args, **kwargs)
        RAISED.update(f.code for f in report.findings)
        return report

    return recorded


def start() -> None:
    """Wrap the lookups that make findings and the fleet's assembly (before any test module is imported)."""
    import topoaudit.bench.judge as bench
    import topoaudit.fleet.assemble as fleet
    import topoaudit.rules.base as base

    for module in (base, bench):
        module.info = _recording(module.info)  # type: ignore[attr-defined]
    fleet.assemble = _recording_fleet(fleet.assemble)  # type: ignore[assignment]


def whole_suite(session: pytest.Session) -> bool:
    """Whether this run is topoaudit's whole suite, unfiltered and green: only then can 'never raised' be told."""
    config = session.config
    args = [a for a in config.args if a]
    default = [str(config.rootpath / "tests"), "tests", str(config.rootpath)]
    return (
        session.testsfailed == 0
        and not config.getoption("keyword")
        and not config.getoption("markexpr")
        and all(a.rstrip("/") in default for a in args)
        and any(item.nodeid.startswith("tests/rules/test_registry.py") for item in session.items)
    )


def never_raised() -> list[str]:
    """Declared codes no test made a rule raise, in registry order."""
    from topoaudit.rules.codes import CODES

    return [code for code in CODES if code not in RAISED]
