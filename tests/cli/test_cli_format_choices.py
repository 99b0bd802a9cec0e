"""The ``--format`` choices are spelled in the CLI (so --help imports no renderer); they must name exactly the
renderers that exist, or a format is offered that fails, or a renderer is built that no one can ask for."""

from __future__ import annotations

from topoaudit.cli.fleet import FLEET_FORMATS
from topoaudit.cli.options import REPORT_FORMATS
from topoaudit.render import FORMATS
from topoaudit.render.fleet_formats import FLEET_FORMATS as FLEET_RENDERERS


def test_report_commands_offer_every_report_renderer_and_no_other() -> None:
    assert sorted(REPORT_FORMATS) == sorted(FORMATS)


def test_fleet_offers_every_fleet_renderer_and_no_other() -> None:
    assert sorted(FLEET_FORMATS) == sorted(FLEET_RENDERERS)
