"""The bench's size lists, trial counts and percentiles. Pure; no torch.

The bandwidth arithmetic (algbw, busbw, plateau, peak) lives in :mod:`topoaudit.model.busbw` and sizes are
read and written by :mod:`topoaudit.units`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

LATENCY_MAX_BYTES = 64 * 1024
"""Sizes up to this count toward the small-message latency (p50/p99); time there is ~constant."""


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
