"""Output formats: each is a module with ``render(report, options) -> str`` and one line here.

The commands' ``--format`` choices, the docs' list of formats and the example reports are made from these
tables. This module imports nothing, so ``--help`` stays cheap; the renderers load only when one is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    """One output format: its name on the command line, the module that renders it, what it is for."""

    name: str
    module: str
    describes: str
    plan: bool = False  # `topoaudit plan` offers it too (a report with a deploy plan and no machine)


REPORT_FORMATS: tuple[Format, ...] = (
    Format("console", "topoaudit.render.console", "the terminal view, coloured on a terminal", plan=True),
    Format("json", "topoaudit.render.json", "the canonical report, which every other format renders from", plan=True),
    Format("markdown", "topoaudit.render.markdown", "tables for a ticket or a pull request", plan=True),
    Format("html", "topoaudit.render.html", "one self-contained page with the topology drawn"),
    Format("junit", "topoaudit.render.junit", "one test case per finding code, for CI"),
    Format("prometheus", "topoaudit.render.prometheus", "metrics for node_exporter's textfile collector"),
    Format("k8s-labels", "topoaudit.render.k8s_labels", "the kubectl commands that label the node"),
    Format("remedy", "topoaudit.render.remedy", "the host remedies as a shell script to review"),
)
"""What every command that judges one machine (and ``report``) can write."""

FLEET_FORMATS: tuple[Format, ...] = (
    Format("console", "topoaudit.render.fleet_console", "one greppable line per node, then groups and outliers"),
    Format("json", "topoaudit.render.fleet_json", "the canonical fleet report"),
    Format("markdown", "topoaudit.render.fleet_markdown", "the same sections as tables"),
    Format("html", "topoaudit.render.fleet_html", "one self-contained page, the worst nodes first"),
    Format("junit", "topoaudit.render.fleet_junit", "one test case per node, for CI"),
)
"""What ``topoaudit fleet`` can write."""


def choices(formats: tuple[Format, ...], *, plan: bool = False) -> tuple[str, ...]:
    """The ``--format`` choices of a command, in the order ``--help`` lists them."""
    return tuple(sorted(f.name for f in formats if f.plan or not plan))
