"""The deploy planner: from a model's size to the number of cards, and whether that tensor-parallel group
fits the NVLink domain a node (or the audited box) really has. Pure arithmetic, no I/O.

CONTRACT (used by cli_plan.py, the pipeline and the renderers):

* ``make_plan(PlanRequest, GpuSpec, MachineDomains | None) -> Plan`` -- the whole computation; raises
  :class:`~topoaudit.errors.ConfigError` for impossible inputs (never returns a half plan).
* ``parse_params("744B") -> 744.0`` -- billions of parameters from ``744B``/``1.6T``/``70b``/``350M``.
* ``find_precision(name)`` / ``PRECISIONS`` -- the bytes-per-parameter table, each factor with its basis.
* ``Plan.checked`` is the target the gate judges (the machine when given, else the standard node);
  ``Plan.fits_one_domain`` false means the finding ``tp-group-crosses-domain`` (exit 1).
* ``Plan.steps`` is the arithmetic as sentences, in order, for every renderer to show.
"""

from topoaudit.plan.model import (
    Alternative,
    DomainFit,
    KvShape,
    MachineDomains,
    Plan,
    PlanRequest,
)
from topoaudit.plan.precision import PRECISIONS, Precision, find_precision, kv_bytes_per_element
from topoaudit.plan.sizing import (
    DEFAULT_KV_HEADROOM,
    DEFAULT_RESERVE_GB,
    make_plan,
    parse_params,
    standard_domains,
    tp_for,
)

__all__ = [
    "DEFAULT_KV_HEADROOM",
    "DEFAULT_RESERVE_GB",
    "PRECISIONS",
    "Alternative",
    "DomainFit",
    "KvShape",
    "MachineDomains",
    "Plan",
    "PlanRequest",
    "Precision",
    "find_precision",
    "kv_bytes_per_element",
    "make_plan",
    "parse_params",
    "standard_domains",
    "tp_for",
]
