"""``--format remedy``: the report's host remedies as one shell script for a person to review, never run by topoaudit.

Each finding whose cause lies on the host carries its remedy as commands for this box
(``Finding.remedy_commands``); they are printed in the order of the findings (worst first), each after comments
saying what it changes and how to undo it. A finding without a command gets its prose remedy as a comment. The
script starts with ``set -euo pipefail`` and a header naming the host and the report's time, and saying that
nothing was applied. The commands are data in the report, so ``topoaudit report report.json --format remedy``
prints the same script on any machine.

A saved report may come from anywhere. Its commands are never copied: each is written again from its template and
typed values (:func:`topoaudit.rules.remedies.rebuild`), and one whose template is unknown or whose values are not
of their type is named in a comment, never printed as a line the shell would run. Report text reaches the script
only inside comments, with every control, format and line-separator character removed.
"""

from __future__ import annotations

import textwrap

from topoaudit.model.finding import Finding, RemedyCommand
from topoaudit.model.report import Report
from topoaudit.render import RenderOptions
from topoaudit.rules.remedies import InvalidRemedy, plain_text, rebuild


def _clean(text: object) -> str:
    """Report text as it may appear in a comment: no character that could end the comment line survives."""
    return plain_text(text, 2000)


def _comment(text: object) -> str:
    return "# " + _clean(text)


def _wrapped(label: str, text: str, width: int = 100) -> list[str]:
    """A comment of several lines, the continuation indented under the text after ``label``."""
    first = f"# {label} " if label else "# "
    rest = "#" + " " * (len(first) - 1)
    return textwrap.wrap(_clean(text), width, initial_indent=first, subsequent_indent=rest) or [first.rstrip()]


def _host(report: Report) -> str:
    name = report.machine.host.hostname
    if isinstance(name, str):
        return f"host {name}"
    return f"an unnamed host ({getattr(name, 'reason', name)})"


def _header(report: Report, with_commands: int) -> list[str]:
    lines = [
        "#!/usr/bin/env bash",
        _comment(f"topoaudit remedy script for {_host(report)}"),
        _comment(
            f"from the report of {report.generated_at} (topoaudit {report.tool_version}, verdict {report.verdict})"
        ),
        "#",
        "# NOTHING HERE HAS BEEN APPLIED: topoaudit only printed these lines. Review every one before you run any:",
        "# each command says what it changes and how to undo it. Most need root (sudo bash remedy.sh).",
    ]
    if not with_commands:
        lines.append("# No finding of this report has a remedy topoaudit can write as a command for this box.")
    return [*lines, "", "set -euo pipefail", ""]


def _command_lines(saved: RemedyCommand, done: set[str]) -> list[str]:
    try:
        cmd = rebuild(saved)
    except InvalidRemedy as exc:
        return [_comment(f"left out, not a command topoaudit writes: {exc}")]
    if cmd.command in done:
        return [_comment(f"already above: {cmd.command}")]
    done.add(cmd.command)
    lines = _wrapped("changes:", cmd.changes)
    lines.append(_comment(f"undo:    {cmd.undo}") if cmd.undo else "# undo:    nothing to undo")
    return [*lines, cmd.command]


def runnable_commands(finding: Finding) -> list[RemedyCommand]:
    """The finding's commands as the script prints them to run: rebuilt from their templates, the invalid left out."""
    rebuilt = []
    for saved in finding.remedy_commands:
        try:
            rebuilt.append(rebuild(saved))
        except InvalidRemedy:
            continue
    return rebuilt


def _finding_lines(f: Finding, done: set[str]) -> list[str]:
    lines = [_comment(f"--- {f.code} ({f.severity.value})")]
    lines += _wrapped("", f.message)
    if not f.remedy_commands:
        return [*lines, *_wrapped("remedy (no command for it):", f.remedy or "none given"), ""]
    if f.remedy:
        lines += _wrapped("remedy:", f.remedy)
    for cmd in f.remedy_commands:
        lines += _command_lines(cmd, done)
    return [*lines, ""]


def render(report: Report, options: RenderOptions | None = None) -> str:
    """The reviewed shell script: header, ``set -euo pipefail``, then each finding's commands or prose remedy."""
    del options  # a script has no layout options
    findings = sorted(report.findings, key=lambda f: (not f.remedy_commands, -f.severity.rank))
    done: set[str] = set()
    body: list[str] = []
    for f in findings:
        body += _finding_lines(f, done)
    if not findings:
        body.append("# The audit found nothing to repair.")
    runnable = sum(len(runnable_commands(f)) for f in findings)
    return "\n".join([*_header(report, runnable), *body]).rstrip("\n") + "\n"
