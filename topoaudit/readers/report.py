"""A saved topoaudit report (``report.json``, or the ``--out`` bundle holding one): judged again as it was read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    head = text.lstrip()[:4096]
    return head.startswith("{") and '"schema_version"' in head and '"gate"' in text


def load(text: str, name: str) -> Facts:
    """The report's machine, its sweep, NCCL's view, its captures and the facts it keeps among its extras, judged
    again by this version (with the request it was saved with: ``app.common.saved_request``)."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.report import SourceInfo, report_from_json
    from topoaudit.rules.base import facts_in_extras

    report = report_from_json(text, name)
    return Facts(
        report.machine,
        SourceInfo(
            "report",
            name,
            report.source.demo,
            f"re-judged from a saved report ({report.source.kind})",
            report.source.parts,  # the pasted parts its facts' line numbers refer to
        ),
        report.input_issues,
        dict(report.extras),
        bench=report.bench,  # a saved sweep is judged again with the rest of the report
        nccl=report.nccl,  # and so are NCCL's view and the captures: judged again, never dropped
        captures=report.captures,
        saved=report,
        what="a topoaudit report",
        **facts_in_extras(report.extras),
    )


READER = Reader("report", 20, "a topoaudit report", sniff, load)
