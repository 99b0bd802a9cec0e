"""One self-contained HTML page for a ticket: inline CSS and SVG, no script, no network fetch.

Order: the verdict and the sentence a support engineer acts on, the machine identity, the topology
picture, the findings with evidence and remedy, domains, bottleneck and placements, the coloured link
matrix, the bench plots and pairwise heatmap (when the report has a bench), the deploy plan, and what
could not be learned. The page comes from a Jinja2 template with autoescape on, so every string from the
report is escaped by construction; the pictures are built with ElementTree. A Content Security Policy
forbids scripts and remote loads as a second wall.

A page is for a person: a report listing more NICs, NVSwitches or input issues than any box has (a damaged
or hostile one: 120,000 NICs) shows the first :data:`MAX_LISTED` of each and says what it left out, so the
page still renders in a second; the JSON report keeps them all.
"""

from __future__ import annotations

import dataclasses
import functools

import jinja2
from markupsafe import Markup

from topoaudit.model.nccl_topo import Captures, NcclTopology
from topoaudit.model.report import Report
from topoaudit.render import RenderOptions
from topoaudit.render.bench_rows import plot_title
from topoaudit.render.cells import MAX_LISTED, TONES
from topoaudit.render.common import xml_text
from topoaudit.render.rows import left_out_sentence, view
from topoaudit.render.svg_plots import busbw_plot, pair_heatmap
from topoaudit.render.svg_topology import topology_svg

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'"


def _scrub(value: object) -> object:
    """Control characters from the machine become U+FFFD in text (our own markup passes untouched)."""
    return value if isinstance(value, Markup) or not isinstance(value, str) else xml_text(value)


@functools.cache
def environment() -> jinja2.Environment:
    """The one Jinja2 environment of the HTML pages: autoescape on, strict about missing names."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("topoaudit.render", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        finalize=_scrub,
    )


def _template() -> jinja2.Template:
    return environment().get_template("report.html.j2")


def render(report: Report, options: RenderOptions) -> str:
    report, cuts = shortened(report)
    v = view(report)
    host = report.machine.host.hostname
    title = f"topoaudit {v.verdict.upper()}: " + (host if isinstance(host, str) else report.source.name)
    plots: list[Markup] = []
    heatmap = Markup("")
    if v.bench is not None:
        # The SVG text comes from ElementTree, which escapes every text node and attribute it writes.
        plots = [Markup(p) for g in v.bench.result.groups if g.rows and (p := busbw_plot((g,), plot_title(g)))]
        heatmap = Markup(pair_heatmap(v.bench.result))
    return _template().render(
        v=v,
        title=title,
        csp=Markup(CSP),  # our own constant: kept literal for readers of the page source
        tones={name: css for name, (_, css) in TONES.items()},
        topology=Markup(topology_svg(report)) if v.links_known else "",
        plots=plots,
        heatmap=heatmap,
        left_out=left_out_sentence((*cuts, *v.left_out), "page"),
    )


def shortened(report: Report, most: int = MAX_LISTED) -> tuple[Report, tuple[str, ...]]:
    """The report with at most ``most`` NICs (and their links), NCCL NICs, NVSwitches and input issues, for the
    picture as for the tables, and what was left out. Findings and the gate are never shortened."""
    machine, cut = report.machine, []
    if len(machine.nics) > most:
        dropped = {nic.label for nic in machine.nics[most:]}
        links = tuple(lk for lk in machine.links if lk.a not in dropped and lk.b not in dropped)
        machine = dataclasses.replace(machine, nics=machine.nics[:most], links=links)
        cut.append(f"{len(dropped):,} of its {len(report.machine.nics):,} NICs and their links")
    if len(machine.nvswitches) > most:
        cut.append(f"{len(machine.nvswitches) - most:,} of its {len(machine.nvswitches):,} NVSwitches")
        machine = dataclasses.replace(machine, nvswitches=machine.nvswitches[:most])
    issues = report.input_issues
    if len(issues) > most:
        cut.append(f"{len(issues) - most:,} of its {len(issues):,} input issues")
        issues = issues[:most]
    captures = report.captures
    topo = captures.nccl_topology if isinstance(captures, Captures) else None
    if isinstance(captures, Captures) and isinstance(topo, NcclTopology) and len(topo.nets) > most:
        cut.append(f"{len(topo.nets) - most:,} of the {len(topo.nets):,} NICs in NCCL's topology")
        captures = dataclasses.replace(captures, nccl_topology=dataclasses.replace(topo, nets=topo.nets[:most]))
    if not cut:
        return report, ()
    return dataclasses.replace(report, machine=machine, input_issues=issues, captures=captures), tuple(cut)
