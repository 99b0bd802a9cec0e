"""The fleet as one self-contained HTML page: verdict, the node table worst first, per-group pictures,
outliers, fleet findings, racks and the drain list. Jinja2 with autoescape; no script, no remote load."""

from __future__ import annotations

from markupsafe import Markup

from topoaudit.model.fleet import FleetReport
from topoaudit.render import RenderOptions
from topoaudit.render.fleet_svg import group_picture
from topoaudit.render.fleet_text import (
    IN_NODE_TITLE,
    counts,
    drain_note,
    drain_title,
    fleet_findings,
    in_node_line,
    plural,
)
from topoaudit.render.html import CSP, environment


def render(report: FleetReport, options: RenderOptions) -> str:
    pictures = [(g, Markup(group_picture(report, g))) for g in report.groups]  # ElementTree escapes the SVG
    page = environment().get_template("fleet.html.j2")
    return page.render(
        r=report,
        counts=counts(report),
        drain_note=drain_note(report),
        pictures=pictures,
        others=fleet_findings(report),
        drain_title=drain_title(report),
        in_node_title=IN_NODE_TITLE,
        in_node_line=in_node_line,
        plural=plural,
        csp=Markup(CSP),
    )
