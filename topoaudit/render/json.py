"""The canonical JSON report (see README "JSON report")."""

from __future__ import annotations

import json

from topoaudit.model.report import Report, report_to_dict
from topoaudit.render import RenderOptions


def render(report: Report, options: RenderOptions) -> str:
    return json.dumps(report_to_dict(report), indent=2, ensure_ascii=False) + "\n"
