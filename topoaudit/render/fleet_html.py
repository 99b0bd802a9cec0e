"""The fleet as one self-contained HTML page: verdict, the node table worst first, per-group pictures,
outliers, fleet findings, racks and the drain list. Jinja2 with autoescape; no script, no remote load."""

from __future__ import annotations

import functools

import jinja2
from markupsafe import Markup

from topoaudit.model.fleet import FleetReport
from topoaudit.render import RenderOptions
from topoaudit.render.common import xml_text
from topoaudit.render.fleet_svg import group_picture
from topoaudit.render.fleet_text import counts, drain_note
from topoaudit.render.html import CSP


def _scrub(value: object) -> object:
    return value if isinstance(value, Markup) or not isinstance(value, str) else xml_text(value)


@functools.cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("topoaudit.render", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        finalize=_scrub,
    )
    return env.get_template("fleet.html.j2")


def render(report: FleetReport, options: RenderOptions) -> str:
    pictures = [(g, Markup(group_picture(report, g))) for g in report.groups]  # ElementTree escapes the SVG
    return _template().render(
        r=report,
        counts=counts(report),
        drain_note=drain_note(report),
        pictures=pictures,
        others=[f for f in report.findings if f.code != "fleet-figure-outlier"],
        csp=Markup(CSP),
    )
