"""Robust outliers: median and MAD (median absolute deviation) of one figure across a hardware group.

The spread is 1.4826 x MAD (the standard deviation for normal data) but never under a fraction of the
median (for counts, a quarter of one instead), so a figure every peer reports identically (18 NVLinks, 400 Gb/s)
still names the one node off it, while measured figures within a few percent of each other name nobody.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import replace

from topoaudit.model.fleet import FigureStats, FleetOptions, Outlier

MAD_TO_SIGMA = 1.4826
COUNT_UNITS = frozenset({"links"})
"""Figures that are counts: a difference of one is real, however large the median."""


def outliers_of(
    figure: str,
    unit: str,
    group: str,
    hosts: Sequence[str],
    values: Sequence[float],
    options: FleetOptions,
) -> tuple[FigureStats, list[Outlier]]:
    """The figure's spread and the values far from its median by the rule of ``options``.

    No outliers below the minimum group size, nor when every value is 0.
    """
    median = statistics.median(values)
    mad = statistics.median(abs(v - median) for v in values)
    floor = options.outlier_floor_links if unit in COUNT_UNITS else options.outlier_floor_ratio * abs(median)
    spread = max(MAD_TO_SIGMA * mad, floor)
    limit = options.outlier_mad_threshold * spread
    if unit not in COUNT_UNITS and median:
        # The MAD of a group split in two (half the nodes 5% above the other half) is wide enough to hide a node
        # 15-20% slow; a drop that large is named whatever the spread.
        limit = min(limit, options.outlier_cap_ratio * abs(median))
    found: list[Outlier] = []
    stats = FigureStats(figure, unit, len(values), median, mad, min(values), max(values), median - limit,
                        median + limit, 0)  # fmt: skip
    if len(values) < options.outlier_min_nodes or spread == 0:
        return stats, found
    for host, value in zip(hosts, values, strict=True):
        if abs(value - median) > limit:
            found.append(
                Outlier(
                    host=host,
                    group=group,
                    figure=figure,
                    unit=unit,
                    value=value,
                    median=median,
                    mad=mad,
                    ratio=value / median if median else float("inf"),
                    direction="low" if value < median else "high",
                    peers=len(values),
                )
            )
    return replace(stats, outliers=len(found)), found
