"""Many node reports, one verdict: hardware groups, robust outliers, duplicates, NVL racks, a drain list.

Each node is judged on its own by the application layer; this package only reduces each judged report
to a small :class:`~topoaudit.fleet.summary.NodeSummary` (so memory grows with the summary, not with the
reports) and compares the summaries: :func:`topoaudit.fleet.assemble.assemble` builds the
:class:`~topoaudit.model.fleet.FleetReport`.
"""
