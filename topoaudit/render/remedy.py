"""``--format remedy``: the report's host remedies as one shell script for a person to review, never run by topoaudit.

Each finding whose cause lies on the host carries its remedy as commands for this box
(``Finding.remedy_commands``); they are printed in the order of the findings (worst first), each after comments
saying what it changes and how to undo it. A finding without a command gets its prose remedy as a comment. The
script starts with ``set -euo pipefail`` and a header naming the host and the report's time, and saying that
nothing was applied. The commands are data in the report, so ``topoaudit report report.json --format remedy``
prints the same script on any machine.

A saved report may come from anywhere: a command that is not one of the shapes the rules write is printed as a
comment, never as a line the shell would run.
"""

from __future__ import annotations

import re
import textwrap

from topoaudit.model.finding import Finding, RemedyCommand
from topoaudit.model.report import Report
from topoaudit.render import RenderOptions

_BDF = r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]"
_NAME = r"[A-Z][A-Z0-9_]*"
_NCCL_CONF_SED = rf"sed -i\.topoaudit\.bak( -e '/\^\[\[:space:\]\]\*{_NAME}\[\[:space:\]\]\*=/d')+ /etc/nccl\.conf"
# Every command shape a rule writes (topoaudit/rules/probe_rules.py); the undo lines take the same shapes.
_SHAPES = tuple(
    re.compile(p)
    for p in (
        rf"setpci -s {_BDF} ECAP_ACS\+0x6\.w=[0-9a-f]{{4}}(  # or reboot)?",
        r"modprobe( -r)? nvidia_peermem",
        r"echo nvidia_peermem > /etc/modules-load\.d/nvidia-peermem\.conf",
        r"rm /etc/modules-load\.d/nvidia-peermem\.conf",
        r"systemctl (start|stop|enable|disable|restart) nvidia-fabricmanager",
        rf"unset {_NAME}",
        rf"export {_NAME}=('[^'\n]*'|[A-Za-z0-9_@%+=:,./-]+)",
        _NCCL_CONF_SED,
        r"mv /etc/nccl\.conf\.topoaudit\.bak /etc/nccl\.conf",
        rf"lspci -vv -s {_BDF} \| grep -E 'LnkCap:\|LnkSta:' \|\| true",
    )
)


def known_shape(command: str) -> bool:
    """Whether ``command`` is one of the commands the rules write (anything else is never printed to run)."""
    return any(p.fullmatch(command) for p in _SHAPES)


def _clean(text: str) -> str:
    """Control characters and line breaks of a hostile report become spaces: they cannot end a comment."""
    return re.sub(r"[\x00-\x1f\x7f]+", " ", text).strip()


def _comment(text: str) -> str:
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


def _command_lines(cmd: RemedyCommand, done: set[str]) -> list[str]:
    if not known_shape(cmd.command):
        return [_comment(f"left out (not a command topoaudit writes): {cmd.command}")]
    if cmd.command in done:
        return [_comment(f"already above: {cmd.command}")]
    done.add(cmd.command)
    lines = _wrapped("changes:", cmd.changes)
    if cmd.undo and known_shape(cmd.undo):
        lines.append(_comment(f"undo:    {cmd.undo}"))
    elif cmd.undo:
        lines.append(_comment("undo:    (not a command topoaudit writes; left out)"))
    else:
        lines.append("# undo:    nothing to undo")
    return [*lines, cmd.command]


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
    runnable = sum(1 for f in findings for c in f.remedy_commands if known_shape(c.command))
    return "\n".join([*_header(report, runnable), *body]).rstrip("\n") + "\n"
