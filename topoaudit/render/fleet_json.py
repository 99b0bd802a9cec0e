"""The fleet report as JSON: the canonical fleet artefact (``"kind": "topoaudit-fleet"``)."""

from __future__ import annotations

from topoaudit.model.fleet import FleetReport, fleet_to_json
from topoaudit.render import RenderOptions


def render(report: FleetReport, options: RenderOptions) -> str:
    return fleet_to_json(report)
