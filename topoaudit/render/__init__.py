"""Renderers: one module per format, one signature: ``render(report, options) -> str``.

The CLI's ``--format`` choices come from ``FORMATS``; modules load lazily so ``--format json`` never
imports rich.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from topoaudit.model.report import Report


@dataclass(frozen=True)
class RenderOptions:
    """How a human format is laid out; the report itself decides what is said."""

    color: bool = False  # ANSI colours (console only; the CLI turns it on for a TTY)
    width: int = 120  # console width in columns (the CLI passes the terminal's, or COLUMNS)
    verbose: bool = False  # include every link and absent fact, not only a summary
    picture: str = ""  # Markdown: file name of the topology SVG next to it (set by the bundle writer)


FORMATS: dict[str, str] = {
    "console": "topoaudit.render.console",
    "json": "topoaudit.render.json",
    "markdown": "topoaudit.render.markdown",
    "html": "topoaudit.render.html",
    "junit": "topoaudit.render.junit",
    "prometheus": "topoaudit.render.prometheus",
    "k8s-labels": "topoaudit.render.k8s_labels",
    "remedy": "topoaudit.render.remedy",
}
"""Format name -> module with a ``render(report, options) -> str`` function."""


def renderer(fmt: str) -> Callable[[Report, RenderOptions], str]:
    """The render function of a format (KeyError for an unknown one)."""
    module = importlib.import_module(FORMATS[fmt])
    fn: Callable[[Report, RenderOptions], str] = module.render
    return fn


def render(report: Report, fmt: str, options: RenderOptions | None = None) -> str:
    return renderer(fmt)(report, options or RenderOptions())
