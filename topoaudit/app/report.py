"""``report``: read a saved report back, to re-render it in any format."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.app.common import STDIN_REPORT, bundle_report, read_input

if TYPE_CHECKING:
    from topoaudit.model.report import Report


def load_saved_report(path: str) -> Report:
    """A saved report.json (or ``-``, or a bundle directory holding one); InputError with a sentence when it is
    not one."""
    from topoaudit.model.report import report_from_json

    path = bundle_report(path)
    return report_from_json(read_input(path, STDIN_REPORT), path)
