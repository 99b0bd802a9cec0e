"""Formats: each is a module and one line in topoaudit.formats; every renderer is offered, every offer renders."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from report_samples import example_report

import topoaudit.render as render_package
from topoaudit.formats import FLEET_FORMATS, REPORT_FORMATS
from topoaudit.render import RenderOptions, render


@pytest.mark.parametrize("fmt", [f.name for f in REPORT_FORMATS])
def test_every_report_format_renders_a_report(fmt: str) -> None:
    text = render(example_report("h200-nvl-split"), fmt, RenderOptions(width=100))
    assert isinstance(text, str) and text.strip()


def test_every_renderer_module_is_a_registered_format_and_every_format_a_module() -> None:
    """A renderer nobody can ask for, or a format whose module is missing, is a mistake in topoaudit.formats."""
    registered = {f.module for f in (*REPORT_FORMATS, *FLEET_FORMATS)}
    renderers = set()
    for info in pkgutil.iter_modules(render_package.__path__):
        module = importlib.import_module(f"topoaudit.render.{info.name}")
        if callable(getattr(module, "render", None)) and info.name not in ("fleet_formats",):
            renderers.add(module.__name__)
    assert renderers == registered
    assert len({f.name for f in REPORT_FORMATS}) == len(REPORT_FORMATS)
    assert all(f.describes for f in (*REPORT_FORMATS, *FLEET_FORMATS))
