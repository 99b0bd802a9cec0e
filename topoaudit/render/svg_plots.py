"""Bench pictures as inline SVG: bus bandwidth against message size per group (with the expected line)
and the pairwise bandwidth heatmap. Hand-drawn axes (log2 sizes, linear GB/s) built with ElementTree."""

from __future__ import annotations

import math

from topoaudit.model.bench import BenchGroup, BenchResult
from topoaudit.render.cells import format_size
from topoaudit.render.common import gbps
from topoaudit.render.svg_topology import sub, svg_root, to_text

SERIES = ("#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#ad1457", "#4e342e")
AXIS = "#546e7a"


def _nice_max(v: float) -> float:
    """The axis top above ``v``: 1, 2, 2.5 or 5 times a power of ten (``v`` itself near the float limit)."""
    if not math.isfinite(v) or v <= 0:
        return 1.0
    exp = 10.0 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        top = m * exp
        if top >= v:
            return top if math.isfinite(top) else v
    return v


def _plotted(value: float) -> bool:
    """A figure a plot can place: finite and not negative (a saved report may hold anything)."""
    return math.isfinite(value) and value >= 0


def busbw_plot(groups: tuple[BenchGroup, ...], title: str) -> str:
    """busbw (GB/s) vs message size for one or more groups, each group's expected busbw as a dashed line."""
    w, h, left, right, top, bottom = 550, 290, 58, 132, 28, 42
    pw, ph = w - left - right, h - top - bottom
    every = [r for g in groups for r in g.rows]
    rows = [(g, r) for g in groups for r in g.rows if r.size_bytes > 0 and _plotted(r.busbw_gbps)]
    left_out = len(every) - len(rows)
    if not rows:
        return ""
    sizes = [r.size_bytes for _, r in rows]
    lo, hi = math.log2(min(sizes)), math.log2(max(sizes))
    if hi - lo < 1:
        lo, hi = lo - 1, hi + 1
    expected = [e for g in groups if isinstance(e := g.expected_busbw_gbps, float) and _plotted(e)]
    ymax = _nice_max(max([r.busbw_gbps for _, r in rows] + [min(e * 1.05, e + 1e300) for e in expected]))

    def x(size: float) -> float:
        return left + (math.log2(size) - lo) / (hi - lo) * pw

    def y(v: float) -> float:
        return top + ph - v / ymax * ph

    root = svg_root(w, h, "plot", title)
    sub(root, "text", title, x=left, y=16, font_size=13, font_weight="bold", fill="#212121")
    if left_out:
        note = f"{left_out} row(s) not drawn: no size, or a bus bandwidth that is negative or not a number"
        sub(root, "text", note, class_="left-out", x=left, y=h - 22, font_size=10, fill="#c62828")
    for t in range(6):  # y grid
        v = ymax * t / 5
        sub(root, "line", x1=left, y1=y(v), x2=left + pw, y2=y(v), stroke="#e0e0e0", stroke_width=1)
        sub(root, "text", f"{v:g}", x=left - 6, y=y(v) + 4, text_anchor="end", font_size=10.5, fill=AXIS)
    step = max(1, math.ceil((hi - lo) / 10))
    for p in range(math.ceil(lo), math.floor(hi) + 1, step):  # x ticks at powers of two
        sub(root, "line", x1=x(2**p), y1=top + ph, x2=x(2**p), y2=top + ph + 4, stroke=AXIS)
        sub(root, "text", format_size(2**p), x=x(2**p), y=top + ph + 16, text_anchor="middle", font_size=10.5,
            fill=AXIS)  # fmt: skip
    sub(root, "rect", x=left, y=top, width=pw, height=ph, fill="none", stroke="#90a4ae")
    sub(root, "text", "message size (bytes per rank)", x=left + pw / 2, y=h - 6, text_anchor="middle", font_size=11,
        fill="#37474f")  # fmt: skip
    sub(root, "text", "bus bandwidth (GB/s)", x=14, y=top + ph / 2, text_anchor="middle", font_size=11,
        fill="#37474f", transform=f"rotate(-90 14 {top + ph / 2:.1f})")  # fmt: skip
    for k, g in enumerate(groups):
        color = SERIES[k % len(SERIES)]
        if isinstance(e := g.expected_busbw_gbps, float) and _plotted(e):
            line = sub(root, "line", class_="expected", x1=left, y1=y(e), x2=left + pw, y2=y(e), stroke=color,
                       stroke_dasharray="5 4", stroke_width=1.2)  # fmt: skip
            sub(line, "title", f"{g.name}: expected {e:g} GB/s ({g.expected_basis})")
        pts = [(x(r.size_bytes), y(r.busbw_gbps)) for r in g.rows if r.size_bytes > 0 and _plotted(r.busbw_gbps)]
        if pts:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
            sub(root, "polyline", points=path, fill="none", stroke=color, stroke_width=2)
            for px, py in pts:
                sub(root, "circle", cx=px, cy=py, r=2.4, fill=color)
        ly = top + 12 + 16 * k
        sub(root, "line", x1=left + pw + 12, y1=ly - 4, x2=left + pw + 28, y2=ly - 4, stroke=color, stroke_width=2.5)
        sub(root, "text", g.name[:18], x=left + pw + 32, y=ly, font_size=11, fill="#212121")
    if expected:
        ly = top + 12 + 16 * len(groups) + 6
        sub(root, "line", x1=left + pw + 12, y1=ly - 4, x2=left + pw + 28, y2=ly - 4, stroke=AXIS,
            stroke_dasharray="5 4", stroke_width=1.2)  # fmt: skip
        sub(root, "text", "expected", x=left + pw + 32, y=ly, font_size=11, fill="#212121")
    return to_text(root)


def _heat_color(frac: float) -> str:
    """Red (slow) -> yellow -> green (fast), for 0..1 of the fastest pair."""
    frac = min(max(frac, 0.0), 1.0)
    if frac < 0.5:
        r, g = 211, int(47 + (193 - 47) * frac * 2)
    else:
        r, g = int(211 - (211 - 56) * (frac - 0.5) * 2), int(193 - (193 - 142) * (frac - 0.5) * 2)
    return f"#{r:02x}{g:02x}3c"


def pair_heatmap(bench: BenchResult) -> str:
    """Pairwise busbw as a coloured matrix of ranks (cells: GB/s)."""
    if not bench.pairs:
        return ""
    ranks = sorted({p.a for p in bench.pairs} | {p.b for p in bench.pairs})
    shown = [p for p in bench.pairs if _plotted(p.busbw_gbps)]
    value = {(p.a, p.b): p.busbw_gbps for p in shown} | {(p.b, p.a): p.busbw_gbps for p in shown}
    best = max(value.values(), default=0.0) or 1.0
    cell = 46 if len(ranks) <= 16 else 26
    left, top = 52, 40
    grey = len(bench.pairs) - len(shown)
    w, h = left + cell * len(ranks) + 10, top + cell * len(ranks) + 10 + (18 if grey else 0)
    title = "Pairwise bus bandwidth (GB/s)"
    root = svg_root(max(w, 420) if grey else w, h, "heatmap", title)
    sub(root, "text", title, x=0, y=14, font_size=13, font_weight="bold", fill="#212121")
    if grey:
        note = f"{grey} pair(s) grey: a bus bandwidth that is negative or not a number"
        sub(root, "text", note, class_="left-out", x=0, y=h - 6, font_size=10, fill="#c62828")
    for k, r in enumerate(ranks):
        sub(root, "text", r, x=left + cell * k + cell / 2, y=top - 6, text_anchor="middle", font_size=10.5,
            fill="#37474f")  # fmt: skip
        sub(root, "text", r, x=left - 6, y=top + cell * k + cell / 2 + 4, text_anchor="end", font_size=10.5,
            fill="#37474f")  # fmt: skip
    for i, a in enumerate(ranks):
        for j, b in enumerate(ranks):
            x, y = left + cell * j, top + cell * i
            v = value.get((a, b))
            if a == b or v is None:
                sub(root, "rect", x=x, y=y, width=cell, height=cell, fill="#eceff1", stroke="#fff")
                continue
            rect = sub(root, "rect", x=x, y=y, width=cell, height=cell, fill=_heat_color(v / best), stroke="#fff")
            sub(rect, "title", f"rank {a} - rank {b}: {gbps(v)} GB/s")
            if cell >= 40:
                sub(root, "text", gbps(v), x=x + cell / 2, y=y + cell / 2 + 4, text_anchor="middle", font_size=10.5,
                    fill="#212121")  # fmt: skip
    return to_text(root)
