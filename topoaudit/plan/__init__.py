"""The deploy planner: from a model's size to the number of cards, and whether that tensor-parallel group
fits the NVLink domain a node (or the audited box) really has. Pure arithmetic, no I/O.

* ``sizing.plan_deployment(PlanRequest, GpuSpec, MachineDomains | None) -> DeployPlan`` -- the whole
  computation; raises :class:`~topoaudit.errors.ConfigError` for impossible inputs (never a half plan).
* ``sizing.parse_params("744B") -> 744.0`` -- billions of parameters from ``744B``/``1.6T``/``70b``/``350M``.
* ``precision.find_precision(name)`` / ``PRECISIONS`` -- bytes per parameter, each factor with its basis.
* ``target`` -- which card to size on and the audited machine's domains, as the planner needs them.

The request and result types live with the other data in :mod:`topoaudit.model.plan`.
"""
