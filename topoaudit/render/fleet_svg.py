"""One picture per hardware group: each figure's spread across the group, relative to its median.

A row per figure (those with outliers first, at most ``MAX_ROWS``): the band where values pass the
median/MAD rule (green), the range the group's nodes span (grey bar), the median (tick at 1.0x) and each
outlier as a red dot named by its host. The axis is value / median, so GB/s, links and Gb/s share it.
"""

from __future__ import annotations

from topoaudit.model.fleet import FleetReport, HardwareGroup, Outlier
from topoaudit.render.svg_topology import sub, svg_root, to_text

MAX_ROWS = 12
LO, HI = 0.0, 1.5  # the ratio axis


def group_picture(report: FleetReport, group: HardwareGroup) -> str:
    """The group's figures around their medians; "" when there is nothing to compare (no figures, or one
    node, whose median is its own value). The page's heading names the group: the picture only titles
    itself for a screen reader."""
    rows = list(group.figures[:MAX_ROWS])
    if not rows or len(group.hosts) < 2:
        return ""
    by_figure: dict[str, list[Outlier]] = {}
    for o in report.outliers:
        if o.group == group.label:
            by_figure.setdefault(o.figure, []).append(o)
    w, left, right, top, row_h = 760, 210, 150, 14, 26
    h = top + row_h * len(rows) + 34
    pw = w - left - right
    title = f"{len(group.hosts)} nodes: {group.label}"  # len(group.hosts) >= 2

    def x(ratio: float) -> float:
        return left + (min(max(ratio, LO), HI) - LO) / (HI - LO) * pw

    root = svg_root(w, h, "plot fleet-group", title)
    axis_y = top + row_h * len(rows) + 6
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5):
        sub(root, "line", x1=x(tick), y1=top - 4, x2=x(tick), y2=axis_y, stroke="#eceff1", stroke_width=1)
        sub(root, "text", f"{tick:g}x", x=x(tick), y=axis_y + 14, text_anchor="middle", font_size=10, fill="#546e7a")
    sub(root, "text", "value / group median", x=left + pw / 2, y=axis_y + 27, text_anchor="middle", font_size=10.5,
        fill="#37474f")  # fmt: skip
    for k, stats in enumerate(rows):
        y = top + k * row_h + row_h / 2
        median = stats.median or 1.0
        sub(root, "text", stats.figure, x=left - 8, y=y + 4, text_anchor="end", font_size=10.5, fill="#263238")
        band_lo, band_hi = x(stats.low_limit / median), x(stats.high_limit / median)
        sub(root, "rect", x=band_lo, y=y - 8, width=max(band_hi - band_lo, 1), height=16, fill="#e8f5e9")
        span_lo, span_hi = x(stats.low / median), x(stats.high / median)
        sub(root, "rect", x=span_lo, y=y - 3, width=max(span_hi - span_lo, 2), height=6, fill="#90a4ae")
        sub(root, "line", x1=x(1.0), y1=y - 9, x2=x(1.0), y2=y + 9, stroke="#1565c0", stroke_width=2)
        found = by_figure.get(stats.figure, [])
        for o in found[:3]:
            sub(root, "circle", cx=x(o.ratio), cy=y, r=4.5, fill="#c62828")
        if found:
            named = ", ".join(f"{o.host} {o.ratio:.2f}x" for o in found[:2]) + (
                f" +{len(found) - 2}" if len(found) > 2 else ""
            )
            sub(root, "text", named, x=left + pw + 8, y=y + 4, font_size=10, fill="#c62828")
        else:
            sub(root, "text", f"median {stats.median:g} {stats.unit}", x=left + pw + 8, y=y + 4, font_size=10,
                fill="#546e7a")  # fmt: skip
    return to_text(root)
