"""The use cases the commands call, one module each: ``analyze``, ``audit`` (and ``probe``), ``bench``, ``plan``,
``report``, ``fleet`` and ``healthcheck``, over :mod:`topoaudit.app.common`.

Each takes a typed, frozen request built once by the command line and returns a judged
:class:`~topoaudit.model.report.Report` (or the text to show). Nothing here knows about click or a terminal;
a command imports only its own use case, and heavy modules (the pipeline, networkx, the planner, torch) load
inside the function that needs them, so a command pays only for what it runs.
"""
