"""Absent values that carry their reason.

A probe or parser that could not learn a fact records *why* instead of writing ``0``, ``None`` or
``"N/A"``. Two kinds exist because they mean different things to a support engineer:

* :class:`Unsupported` -- the question does not apply or the source cannot answer it (a PCIe card has
  no NVLink state, ``topo -m`` text carries no GPU serials, an old driver lacks fabric info). Not a fault.
* :class:`Failed` -- the question applies but asking failed (NVML ``GPU_IS_LOST``, a timeout, a garbled
  cell). Possibly a fault; it makes the audit incomplete.

Both encode to JSON as ``{"status": "unsupported"|"failed", "source": ..., "reason": ...}`` so a numeric
field never holds a string.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar, Union

T = TypeVar("T")


@dataclass(frozen=True)
class Unsupported:
    """The source cannot answer this question; not a fault."""

    source: str
    reason: str

    status = "unsupported"

    def __str__(self) -> str:
        """Print the absence with its reason, as reports show it."""
        return f"unsupported ({self.reason})"


@dataclass(frozen=True)
class Failed:
    """Asking failed; the audit is incomplete where a rule needs this value."""

    source: str
    reason: str

    status = "failed"

    def __str__(self) -> str:
        """Print the failure with its reason, as reports show it."""
        return f"failed: {self.reason}"


NOT_SET = Unsupported(source="policy", reason="not set")
"""A policy expectation the policy does not state."""
NO_POLICY = Unsupported(source="policy", reason="no policy given")
"""The policy outcome of a report judged without a policy."""

Absent = Union[Unsupported, Failed]
Probed = Union[T, Unsupported, Failed]


def is_absent(value: object) -> bool:
    """Tell whether ``value`` is an :class:`Unsupported` or :class:`Failed` marker rather than a reading."""
    return isinstance(value, (Unsupported, Failed))


def absent_to_dict(value: Absent) -> dict[str, str]:
    """JSON form of an absent value."""
    return {"status": value.status, "source": value.source, "reason": value.reason}


def absent_from_dict(data: Any) -> Absent | None:
    """Inverse of :func:`absent_to_dict`; ``None`` when ``data`` is not an absent value."""
    if isinstance(data, dict) and data.get("status") in ("unsupported", "failed") and "reason" in data:
        cls = Unsupported if data["status"] == "unsupported" else Failed
        return cls(source=str(data.get("source", "")), reason=str(data["reason"]))
    return None


def show(value: object, unit: str = "") -> str:
    """Human text for a probed value: the value, or the reason it is absent."""
    if isinstance(value, (Unsupported, Failed)):
        return str(value)
    if isinstance(value, (tuple, list, frozenset, set)):
        return ",".join(str(v) for v in value)
    return f"{value}{unit}"
