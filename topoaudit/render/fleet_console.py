"""The fleet on a terminal: verdict, one greppable line per host, groups, outliers, racks, the drain list.

Prose is wrapped at the terminal's width between words (continuations indented), so no word is broken.
Two kinds of line are never wrapped, so that grep and a shell read them whole: the ``host | STATUS: codes``
line (a note on a saved verdict follows on its own indented lines) and each drain command.
"""

from __future__ import annotations

import textwrap

from topoaudit.model.fleet import FleetReport
from topoaudit.render import RenderOptions
from topoaudit.render.cells import printable
from topoaudit.render.fleet_text import (
    IN_NODE_TITLE,
    counts,
    drain_note,
    drain_title,
    fleet_findings,
    headline,
    host_line,
    in_node_line,
    outlier_line,
    plural,
)

MIN_WIDTH = 40
_COLOURS = {"PASS": "32", "WARN": "33", "FAIL": "31", "ERROR": "31", "MISSING": "31"}


def render(report: FleetReport, options: RenderOptions) -> str:
    width = max(options.width, MIN_WIDTH)
    # host names, messages and scontrol output come from the nodes: no terminal escapes reach the screen
    out: list[str] = []

    def add(text: str, indent: str = "", more: str = "    ") -> None:
        out.extend(_wrap(printable(text), width, indent, indent + more))

    add(headline(report))
    add(counts(report))
    out.append("")
    for node in report.nodes:
        line = printable(host_line(node))
        head, sep, note = line.partition(" -- ")
        out.append(head)
        if sep:
            out.extend(_wrap(note, width, "    ", "    "))
    out.append("")
    add("Hardware groups (GPU model and count, NVLink domains, NICs, driver):")
    for g in report.groups:
        add(f"{plural(len(g.hosts), 'node'):>9}  {g.label}", "  ", " " * 11)
    out.append("")
    add(f"Outliers ({report.options.outlier_rule}):")
    for o in report.outliers:
        add(outlier_line(o), "  ")
    if not report.outliers:
        out.append("  none")
    others = fleet_findings(report)
    if others:
        out += ["", "Fleet findings:"]
        for f in others:
            add(f"[{f.severity.value}] {f.code}: {f.message}", "  ")
    if report.racks:
        out += ["", "NVL racks (trays keyed by cluster UUID and clique id):"]
        for rack in report.racks:
            odd = f"; trays that differ: {', '.join(rack.odd_trays)}" if rack.odd_trays else ""
            add(
                f"{rack.cluster_uuid} clique {rack.clique_id}: {rack.gpus}/{rack.expected_gpus} GPUs in "
                f"{plural(len(rack.trays), 'tray')}{odd}",
                "  ",
            )
    if report.in_node_fabrics:
        out += ["", f"{IN_NODE_TITLE}:"]
        for scope in report.in_node_fabrics:
            add(in_node_line(scope), "  ")
    out.append("")
    add(f"{drain_title(report)}, {drain_note(report)}")
    if report.applied:
        for r in report.applied:
            add(f"{r.host}: exit {r.exit_code}: {r.output}", "  ")
    else:
        out.extend(f"  {printable(d.command)}" for d in report.drain)
        if not report.drain:
            out.append("  none")
    text = "\n".join(out) + "\n"
    return _colour(text) if options.color else text


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    return textwrap.wrap(
        text, width, initial_indent=first, subsequent_indent=rest, break_long_words=False, break_on_hyphens=False
    ) or [first.rstrip()]


def _colour(text: str) -> str:
    """The verdict words of the headline and the host lines in colour (ANSI SGR)."""
    lines = text.split("\n")
    for k, line in enumerate(lines):
        for word, code in _COLOURS.items():
            for marker in (f"| {word}", f"fleet: {word} "):
                if marker in line and (k == 0 or marker.startswith("|")):
                    start = line.index(marker) + len(marker) - len(word) - (1 if marker.endswith(" ") else 0)
                    end = start + len(word)
                    lines[k] = f"{line[:start]}\x1b[1;{code}m{word}\x1b[0m{line[end:]}"
                    break
            else:
                continue
            break
    return "\n".join(lines)
