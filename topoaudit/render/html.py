"""One self-contained HTML page for a ticket: inline CSS and SVG, no script, no network fetch.

Order: the verdict and the sentence a support engineer acts on, the machine identity, the topology
picture, the findings with evidence and remedy, domains, bottleneck and placements, the coloured link
matrix, the bench plots and pairwise heatmap (when the report has a bench), the deploy plan, and what
could not be learned. The page comes from a Jinja2 template with autoescape on, so every string from the
report is escaped by construction; the pictures are built with ElementTree. A Content Security Policy
forbids scripts and remote loads as a second wall.
"""

from __future__ import annotations

import functools

import jinja2
from markupsafe import Markup

from topoaudit.model.report import Report
from topoaudit.render import RenderOptions
from topoaudit.render.bench_rows import plot_title
from topoaudit.render.cells import TONES
from topoaudit.render.common import xml_text
from topoaudit.render.rows import view
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
    )
