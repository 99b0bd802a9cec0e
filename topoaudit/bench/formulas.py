"""nccl-tests' bandwidth formulas, size lists and the summaries a reader gates on. Pure; no torch.

* ``algbw = S / t`` with S the bytes of one rank's buffer and GB = 10^9 bytes (nccl-tests
  ``baseBw = bytes / 1.0E9 / sec``).
* all-reduce ``busbw = algbw * 2(n-1)/n`` (``doc/PERFORMANCE.md``: comparable to the unidirectional peak of
  the bottleneck link); all-gather / reduce-scatter ``(n-1)/n``; broadcast / reduce ``1``.
* The large-message plateau is reported apart from the small-message latency; the nccl-tests footer's
  "Avg bus bandwidth" is a mean over every size and is never used as a gate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

GB = 1e9

BUSBW_FACTORS = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}

LATENCY_MAX_BYTES = 64 * 1024
"""Sizes up to this count toward the small-message latency (p50/p99); time there is ~constant."""

PLATEAU_MIN_BYTES = 1 << 20
"""Sizes from here count toward the plateau (best busbw over the largest quarter of sizes >= 1 MiB)."""


def busbw_factor(n: int, collective: str = "all_reduce") -> float:
    """nccl-tests' bus-bandwidth factor for ``n`` ranks; 1.0 for one rank (nothing crosses a link)."""
    if n <= 1:
        return 1.0 if collective != "all_reduce" else 0.0
    return BUSBW_FACTORS[collective](n)


def algbw_gbps(size_bytes: int, time_us: float) -> float:
    """Bytes of one rank's buffer over the time of one call, in GB/s (10^9)."""
    if time_us <= 0:
        return 0.0
    return size_bytes / GB / (time_us * 1e-6)


def busbw_gbps(size_bytes: int, time_us: float, n: int, collective: str = "all_reduce") -> float:
    return algbw_gbps(size_bytes, time_us) * busbw_factor(n, collective)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (as nccl-tests ``-I``): with few samples p99 equals the maximum."""
    if not values:
        raise ValueError("no samples")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)
_MULT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str | int) -> int:
    """``"16M"`` / ``"16MiB"`` / ``"4G"`` / ``"8"`` -> bytes. Suffixes are binary, as nccl-tests' ``-b/-e``."""
    if isinstance(text, int):
        return text
    m = _SIZE_RE.match(text)
    if not m:
        raise ValueError(f"not a size: {text!r} (use bytes or a K/M/G suffix, e.g. 16M)")
    value = float(m.group(1)) * _MULT[m.group(2).lower()]
    if value != int(value) or value < 1:
        raise ValueError(f"not a whole number of bytes: {text!r}")
    return int(value)


def format_size(size_bytes: int) -> str:
    """Short binary form: 8 B, 64 KiB, 16 MiB, 4 GiB."""
    for unit, mult in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size_bytes >= mult and size_bytes % mult == 0:
            return f"{size_bytes // mult} {unit}"
    return f"{size_bytes} B"


def size_sweep(min_bytes: int, max_bytes: int, factor: int = 2, elem_bytes: int = 4) -> tuple[int, ...]:
    """``min, min*f, ...`` up to ``max`` (inclusive), each rounded down to whole elements (>= 1 element)."""
    if min_bytes > max_bytes:
        raise ValueError(f"--min-bytes {min_bytes} is above --max-bytes {max_bytes}")
    sizes: list[int] = []
    size = max(min_bytes, elem_bytes)
    while size <= max_bytes:
        rounded = max(elem_bytes, size - size % elem_bytes)
        if not sizes or rounded != sizes[-1]:
            sizes.append(rounded)
        size *= factor
    return tuple(sizes)


def calls_per_trial(est_call_s: float, n: int, *, target_s: float, max_calls: int = 20) -> int:
    """Calls queued per timed trial: enough to fill ``target_s``, few for huge messages, and never so many
    that an in-place sum of values ~n could overflow float32 (n^k < 1e30)."""
    overflow_cap = max(1, int(30 / math.log10(n))) if n > 1 else max_calls
    wanted = int(target_s / est_call_s) if est_call_s > 0 else max_calls
    return max(1, min(max_calls, overflow_cap, wanted))


def trials_for(est_call_s: float, *, target_s: float, min_trials: int = 3, max_trials: int = 10) -> int:
    """Timed trials per size: many for cheap sizes (for p99), few for expensive ones."""
    if est_call_s <= 0:
        return max_trials
    return max(min_trials, min(max_trials, int(target_s / est_call_s)))


def plateau(rows: Sequence[tuple[int, float]]) -> tuple[int, float] | None:
    """(size, busbw) of the large-message plateau: the best busbw among the largest quarter (at least two,
    at most four) of the sizes >= 1 MiB; ``None`` when no size reached 1 MiB (only latency was measured)."""
    large = sorted((r for r in rows if r[0] >= PLATEAU_MIN_BYTES), key=lambda r: r[0])
    if not large:
        return None
    take = min(len(large), max(2, min(4, len(large) // 4)))
    best = max(large[-take:], key=lambda r: r[1])
    return best


def peak(rows: Sequence[tuple[int, float]]) -> tuple[int, float] | None:
    """(size, busbw) of the highest busbw at any size."""
    return max(rows, key=lambda r: r[1]) if rows else None
