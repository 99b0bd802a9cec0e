"""The one table of exit codes; the table of docs/commands.md is made from it (tools/regen_docs.py).

Severity ("did the audit find problems") and completeness ("could the audit run", "was anything judged") are
separate axes, so a CI pipeline can tell a bad box from a broken tool or an input that shows nothing to judge.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Process exit codes of every topoaudit command."""

    OK = 0  # audit completed; no finding at or above --fail-on
    FINDINGS = 1  # audit completed; at least one finding at or above --fail-on
    USAGE = 2  # usage error (bad option or argument; click's own code)
    INCOMPLETE = (
        3  # audit incomplete (rules skipped, probes failed, input recovered or cut) or not judged, and --strict
    )
    UNUSABLE = 4  # input or environment unusable: unreadable/ambiguous input, no driver, no GPU
    INTERNAL = 5  # internal error: a bug in topoaudit (traceback with --debug)
    INTERRUPTED = 130  # stopped by Ctrl-C or SIGTERM; what was measured is kept, the audit is incomplete


EXIT_CODE_MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "audit completed; no finding at or above `--fail-on` (default `fail`)",
    ExitCode.FINDINGS: "audit completed; at least one finding at or above `--fail-on`",
    ExitCode.USAGE: "usage error (unknown option, bad value)",
    ExitCode.INCOMPLETE: (
        "audit incomplete (a rule skipped, a probe failed, input recovered or cut short) or not judged (no rule had "
        "evidence to examine), and `--strict` given"
    ),
    ExitCode.UNUSABLE: "input or environment unusable (unreadable or ambiguous input, no driver, no GPU)",
    ExitCode.INTERNAL: "internal error in topoaudit (run with `--debug` for the traceback)",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C or SIGTERM); a bench keeps and reports what it measured",
}
