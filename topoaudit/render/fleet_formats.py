"""Fleet renderers: one module per format, one signature: ``render(report, options) -> str``."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from topoaudit.model.fleet import FleetReport
from topoaudit.render import RenderOptions

FLEET_FORMATS: dict[str, str] = {
    "console": "topoaudit.render.fleet_console",
    "json": "topoaudit.render.fleet_json",
    "markdown": "topoaudit.render.fleet_markdown",
    "html": "topoaudit.render.fleet_html",
    "junit": "topoaudit.render.fleet_junit",
}


def render_fleet(report: FleetReport, fmt: str, options: RenderOptions | None = None) -> str:
    module = importlib.import_module(FLEET_FORMATS[fmt])
    fn: Callable[[FleetReport, RenderOptions], str] = module.render
    return fn(report, options or RenderOptions())
