"""Renderers: one module per format, one signature: ``render(report, options) -> str``.

The formats are listed in :mod:`topoaudit.formats` (a format is its module and one line there); modules load
lazily so ``--format json`` never imports rich.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from topoaudit.formats import REPORT_FORMATS

if TYPE_CHECKING:
    from topoaudit.model.report import Report


@dataclass(frozen=True)
class RenderOptions:
    """How a human format is laid out; the report itself decides what is said."""

    color: bool = False  # ANSI colours (console only; the CLI turns it on for a TTY)
    width: int = 120  # console width in columns (the CLI passes the terminal's, or COLUMNS)
    verbose: bool = False  # include every link and absent fact, not only a summary
    picture: str = ""  # Markdown: file name of the topology SVG next to it (set by the bundle writer)


FORMATS: dict[str, str] = {f.name: f.module for f in REPORT_FORMATS}
"""Format name -> module with a ``render(report, options) -> str`` function."""


def renderer(fmt: str) -> Callable[[Report, RenderOptions], str]:
    """The render function of a format (KeyError for an unknown one)."""
    module = importlib.import_module(FORMATS[fmt])
    fn: Callable[[Report, RenderOptions], str] = module.render
    return fn


def render(report: Report, fmt: str, options: RenderOptions | None = None) -> str:
    return renderer(fmt)(report, options or RenderOptions())
