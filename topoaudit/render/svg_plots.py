"""Bench pictures as inline SVG: bus bandwidth against message size per group (with the expected band)
and the pairwise bandwidth heatmap. Hand-drawn axes (log2 sizes, linear GB/s); no plotting library."""

from __future__ import annotations

import math

from topoaudit.model.bench import BenchGroup, BenchResult
from topoaudit.render.common import gbps
from topoaudit.render.svg_topology import SANS, esc

SERIES = ("#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#ad1457", "#4e342e")


def warn_fraction() -> float:
    """Share of the expected busbw below which the bench judge warns (the lower edge of the band)."""
    try:
        from topoaudit.bench.expect import const

        return float(const("warn_below_ratio"))
    except Exception:  # the bench package absent or changed: a plain 80 % band
        return 0.8


def human_size(n: float) -> str:
    for unit, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n >= scale:
            v = n / scale
            return f"{v:g}{unit}" if v == int(v) else f"{v:.1f}{unit}"
    return f"{int(n)}B"


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if m * exp >= v:
            return float(m * exp)
    return float(10 * exp)


def busbw_plot(groups: tuple[BenchGroup, ...], title: str) -> str:
    """busbw (GB/s) vs message size for one or more groups, the expected band shaded per group."""
    w, h, left, right, top, bottom = 550, 290, 58, 132, 28, 42
    pw, ph = w - left - right, h - top - bottom
    rows = [(g, r) for g in groups for r in g.rows if r.size_bytes > 0]
    if not rows:
        return ""
    sizes = [r.size_bytes for _, r in rows]
    lo, hi = math.log2(min(sizes)), math.log2(max(sizes))
    if hi - lo < 1:
        lo, hi = lo - 1, hi + 1
    expected = [g.expected_busbw_gbps for g in groups if isinstance(g.expected_busbw_gbps, float)]
    ymax = _nice_max(max([r.busbw_gbps for _, r in rows] + [e * 1.05 for e in expected]))

    def x(size: float) -> float:
        return left + (math.log2(size) - lo) / (hi - lo) * pw

    def y(v: float) -> float:
        return top + ph - v / ymax * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" viewBox="0 0 {w} {h}" width="{w}" '
        f'height="{h}" font-family="{SANS}"><title>{esc(title)}</title>',
        f'<text x="{left}" y="16" font-size="13" font-weight="bold" fill="#212121">{esc(title)}</text>',
    ]
    frac = warn_fraction()
    for k, g in enumerate(groups):
        if isinstance(g.expected_busbw_gbps, float):
            color = SERIES[k % len(SERIES)]
            e = g.expected_busbw_gbps
            tip = esc(f"{g.name}: expected {e:g} GB/s ({g.expected_basis})")
            out.append(
                f'<rect class="band" x="{left}" y="{y(e):.1f}" width="{pw}" height="{y(e * frac) - y(e):.1f}" '
                f'fill="{color}" fill-opacity="0.10"><title>{tip}'
                "</title></rect>"
            )
            out.append(
                f'<line x1="{left}" y1="{y(e):.1f}" x2="{left + pw}" y2="{y(e):.1f}" stroke="{color}" '
                f'stroke-dasharray="5 4" stroke-width="1.2"/>'
            )
    for t in range(6):  # y grid
        v = ymax * t / 5
        out.append(
            f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + pw}" y2="{y(v):.1f}" stroke="#e0e0e0" stroke-width="1"/>'
            f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="10.5" fill="#546e7a">{v:g}</text>'
        )
    step = max(1, math.ceil((hi - lo) / 10))
    for p in range(math.ceil(lo), math.floor(hi) + 1, step):  # x ticks at powers of two
        out.append(
            f'<line x1="{x(2**p):.1f}" y1="{top + ph}" x2="{x(2**p):.1f}" y2="{top + ph + 4}" stroke="#546e7a"/>'
            f'<text x="{x(2**p):.1f}" y="{top + ph + 16}" text-anchor="middle" font-size="10.5" '
            f'fill="#546e7a">{human_size(2**p)}</text>'
        )
    out.append(
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#90a4ae"/>'
        f'<text x="{left + pw / 2:.1f}" y="{h - 6}" text-anchor="middle" font-size="11" fill="#37474f">'
        "message size (bytes per rank)</text>"
        f'<text x="14" y="{top + ph / 2:.1f}" text-anchor="middle" font-size="11" fill="#37474f" '
        f'transform="rotate(-90 14 {top + ph / 2:.1f})">bus bandwidth (GB/s)</text>'
    )
    for k, g in enumerate(groups):
        color = SERIES[k % len(SERIES)]
        pts = [(x(r.size_bytes), y(r.busbw_gbps)) for r in g.rows if r.size_bytes > 0]
        if pts:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
            out.extend(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.4" fill="{color}"/>' for px, py in pts)
        ly = top + 12 + 16 * k
        out.append(
            f'<line x1="{left + pw + 12}" y1="{ly - 4}" x2="{left + pw + 28}" y2="{ly - 4}" stroke="{color}" '
            f'stroke-width="2.5"/><text x="{left + pw + 32}" y="{ly}" font-size="11" fill="#212121">'
            f"{esc(g.name[:18])}</text>"
        )
    if expected:
        ly = top + 12 + 16 * len(groups) + 6
        out.append(
            f'<rect x="{left + pw + 12}" y="{ly - 9}" width="16" height="10" fill="#546e7a" fill-opacity="0.2"/>'
            f'<text x="{left + pw + 32}" y="{ly}" font-size="11" fill="#212121">expected band</text>'
            f'<text x="{left + pw + 32}" y="{ly + 14}" font-size="10" fill="#546e7a">({frac:.0%}-100%)</text>'
        )
    out.append("</svg>")
    return "".join(out)


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
    value = {(p.a, p.b): p.busbw_gbps for p in bench.pairs} | {(p.b, p.a): p.busbw_gbps for p in bench.pairs}
    best = max(value.values()) or 1.0
    cell = 46 if len(ranks) <= 16 else 26
    left, top = 52, 40
    w, h = left + cell * len(ranks) + 10, top + cell * len(ranks) + 10
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="heatmap" role="img" viewBox="0 0 {w} {h}" width="{w}" '
        f'height="{h}" font-family="{SANS}"><title>Pairwise bus bandwidth (GB/s)</title>',
        '<text x="0" y="14" font-size="13" font-weight="bold" fill="#212121">Pairwise bus bandwidth (GB/s)</text>',
    ]
    for k, r in enumerate(ranks):
        out.append(
            f'<text x="{left + cell * k + cell / 2:.1f}" y="{top - 6}" text-anchor="middle" font-size="10.5" '
            f'fill="#37474f">{r}</text><text x="{left - 6}" y="{top + cell * k + cell / 2 + 4:.1f}" '
            f'text-anchor="end" font-size="10.5" fill="#37474f">{r}</text>'
        )
    for i, a in enumerate(ranks):
        for j, b in enumerate(ranks):
            x, y = left + cell * j, top + cell * i
            v = value.get((a, b))
            if a == b or v is None:
                out.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="#eceff1" stroke="#fff"/>')
                continue
            out.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{_heat_color(v / best)}" stroke="#fff">'
                f"<title>{esc(f'rank {a} - rank {b}: {gbps(v)} GB/s')}</title></rect>"
            )
            if cell >= 40:
                out.append(
                    f'<text x="{x + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" text-anchor="middle" font-size="10.5" '
                    f'fill="#212121">{gbps(v)}</text>'
                )
    out.append("</svg>")
    return "".join(out)


def bench_of(report: object) -> BenchResult | None:
    """The report's bench result, wherever this version keeps it (``report.bench`` or ``extras["bench"]``)."""
    bench = getattr(report, "bench", None)
    if isinstance(bench, BenchResult):
        return bench
    extras = getattr(report, "extras", None)
    raw = extras.get("bench") if isinstance(extras, dict) else None
    if isinstance(raw, BenchResult):
        return raw
    if isinstance(raw, dict):
        from topoaudit.model.codec import DecodeError, decode

        try:
            decoded: BenchResult = decode(BenchResult, raw)
        except DecodeError:
            return None
        return decoded
    return None
