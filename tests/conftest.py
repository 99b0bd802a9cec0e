"""Shared test setup: helper modules importable by name, the in-process command line (the ``run`` fixture),
and CI guards against a run that is green by accident.

In CI (``CI`` set to anything but empty/0/false) a test that needs the browser, torch or network namespaces
and skips is a failure: a CI machine is built to run them, so a skip there means CI tested less than it says.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Generator
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))

import raised_codes
from cli_runner import Run, run_cli  # importable once tests/ is on the path

# Property tests: random and remembered locally (they keep finding new cases), fixed in CI so that a run
# there neither fails nor passes by chance; each case they found is kept as a plain regression test.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI", "").lower() not in ("", "0", "false"):
    settings.load_profile("ci")

# what a CI machine must provide; a skip whose reason names one of these is a failure there
_REQUIRED_IN_CI = re.compile(r"\b(torch|chromium|browser|namespaces?|netns)\b", re.IGNORECASE)


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    """``run("analyze", "--example", "hgx-h100")`` -> (exit code, stdout, stderr), in process."""

    def invoke(*args: str) -> tuple[int, str, str]:
        return run_cli(capsys, *args)

    return invoke


def in_ci() -> bool:
    """True where the environment says this is a CI run (GitHub Actions, GitLab and most others set CI=true)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _skip_reason(report: pytest.CollectReport | pytest.TestReport) -> str:
    longrepr = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr or "")
    return reason.removeprefix("Skipped: ")


def _fail_in_ci(report: pytest.CollectReport | pytest.TestReport, reason: str) -> None:
    report.outcome = "failed"
    report.longrepr = f"CI is set, so this must run here, but it was skipped: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if not (in_ci() and report.skipped) or hasattr(report, "wasxfail") or item.get_closest_marker("gpu"):
        return
    reason = _skip_reason(report)
    if item.get_closest_marker("netns") or _REQUIRED_IN_CI.search(reason):
        _fail_in_ci(report, reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, None, None]:
    outcome = yield
    report: pytest.CollectReport = outcome.get_result()  # type: ignore[attr-defined]
    if in_ci() and report.skipped:  # a whole module skipped, e.g. pytest.importorskip("torch")
        reason = _skip_reason(report)
        if _REQUIRED_IN_CI.search(reason):
            _fail_in_ci(report, reason)


def pytest_sessionstart(session: pytest.Session) -> None:
    raised_codes.start()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A whole-suite run fails when a declared finding code was never raised by any test."""
    if exitstatus != 0 or not raised_codes.whole_suite(session):
        return
    missing = raised_codes.never_raised()
    if missing:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"declared finding codes no test raised: {', '.join(missing)}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
