"""Fleet renderers: one module per format (listed in :mod:`topoaudit.formats`), one signature:
``render(report, options) -> str``."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from topoaudit.formats import FLEET_FORMATS as _FORMATS
from topoaudit.model.fleet import FleetReport
from topoaudit.render import RenderOptions

FLEET_FORMATS: dict[str, str] = {f.name: f.module for f in _FORMATS}
"""Format name -> module with a ``render(report, options) -> str`` function."""


def render_fleet(report: FleetReport, fmt: str, options: RenderOptions | None = None) -> str:
    module = importlib.import_module(FLEET_FORMATS[fmt])
    fn: Callable[[FleetReport, RenderOptions], str] = module.render
    return fn(report, options or RenderOptions())
