"""nccl-tests' bandwidth arithmetic and the summaries a reader gates on.

Pure; shared by the bench and the nccl-tests reader.

* ``algbw = S / t`` with S the bytes of one rank's buffer and GB = 10^9 bytes (nccl-tests
  ``baseBw = bytes / 1.0E9 / sec``).
* all-reduce ``busbw = algbw * 2(n-1)/n`` (``doc/PERFORMANCE.md``: comparable to the unidirectional peak of
  the bottleneck link); all-gather / reduce-scatter ``(n-1)/n``; broadcast / reduce ``1``.
* The large-message plateau is reported apart from the small-message latency; the nccl-tests footer's
  "Avg bus bandwidth" is a mean over every size and is never used as a gate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

GB = 1e9

ALGORITHMS = ("ring", "tree", "nvls", "nvls_tree", "collnet")
"""NCCL's all-reduce algorithms as the oracle names them (NCCL_ALGO accepts Ring, Tree, NVLS, NVLSTree,
CollNetDirect, CollNetChain; PAT is all-gather/reduce-scatter only)."""

NCCL_ALGO_VALUES = {"ring": "Ring", "tree": "Tree", "nvls": "NVLS", "nvls_tree": "NVLSTree", "collnet": "CollNetDirect"}
"""The ``NCCL_ALGO`` value that forces each algorithm (NCCL user guide, Environment Variables, NCCL_ALGO)."""


def normalize_algorithm(text: str) -> str:
    """Read an ``NCCL_ALGO`` value or a TUNING name as one of :data:`ALGORITHMS` (``NVLSTree`` -> ``nvls_tree``).

    "" for a value that names none, or several (``"Ring,Tree"`` and ``"^NVLS"`` leave NCCL the choice).
    """
    value = text.strip().lower().replace("_", "").replace("-", "")
    if "," in value or not value:
        return ""
    if value.startswith("^"):  # NCCL_ALGO=^NVLS excludes: NCCL still chooses among the rest
        return ""
    if value.startswith("collnet"):
        return "collnet"
    return {"ring": "ring", "tree": "tree", "nvls": "nvls", "nvlstree": "nvls_tree"}.get(value, "")


BUSBW_FACTORS: dict[str, Callable[[int], float]] = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}

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
    """Bus bandwidth: the algorithm bandwidth times the collective's factor for ``n`` ranks."""
    return algbw_gbps(size_bytes, time_us) * busbw_factor(n, collective)


def plateau(rows: Sequence[tuple[int, float]]) -> tuple[int, float] | None:
    """Return (size, busbw) of the large-message plateau, the figure a bandwidth gate compares.

    The plateau is the best busbw among the largest quarter (at least two, at most four) of the sizes >= 1 MiB;
    ``None`` when no size reached 1 MiB (only latency was measured).
    """
    large = sorted((r for r in rows if r[0] >= PLATEAU_MIN_BYTES), key=lambda r: r[0])
    if not large:
        return None
    take = min(len(large), max(2, min(4, len(large) // 4)))
    return max(large[-take:], key=lambda r: r[1])


def peak(rows: Sequence[tuple[int, float]]) -> tuple[int, float] | None:
    """(size, busbw) of the highest busbw at any size."""
    return max(rows, key=lambda r: r[1]) if rows else None
