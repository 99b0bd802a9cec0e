"""One self-contained HTML page for a ticket: inline CSS and SVG, no script, no network fetch.

Order: the verdict and the sentence a support engineer acts on, the machine identity, the topology
picture, the findings with evidence and remedy, domains and placements, the coloured link matrix, the
bench plots and pairwise heatmap (when the report has a bench), the deploy plan, and what could not be
learned. Every string from the machine passes through :func:`e` (``html.escape``); a Content Security
Policy forbids scripts and remote loads, so even a missed escape could not fetch or run anything.
"""

from __future__ import annotations

import json
from typing import Any

from topoaudit.model.bench import BenchGroup, BenchResult
from topoaudit.model.machine import Gpu, PathLevel, level_from_code
from topoaudit.model.report import Report
from topoaudit.model.topology import format_gpus
from topoaudit.model.values import Failed, Unsupported, is_absent, show
from topoaudit.plan.model import DomainFit, Plan
from topoaudit.render import RenderOptions
from topoaudit.render.common import absent_facts, cpu_list, gbps, matrix, policy_lines, summary
from topoaudit.render.svg_plots import bench_of, busbw_plot, human_size, pair_heatmap
from topoaudit.render.svg_topology import esc, topology_svg

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'"

LEVEL_CLASS = {
    PathLevel.SELF: "lv-self",
    PathLevel.NVLINK: "lv-nv",
    PathLevel.PIX: "lv-pix",
    PathLevel.PXB: "lv-pix",
    PathLevel.PHB: "lv-phb",
    PathLevel.NODE: "lv-phb",
    PathLevel.SYS: "lv-sys",
    PathLevel.UNKNOWN: "lv-unk",
}

CSS = """
:root{--fail:#c62828;--warn:#ef6c00;--info:#1565c0;--pass:#2e7d32;--muted:#607d8b;--line:#cfd8dc}
*{box-sizing:border-box}
body{font:15px/1.45 "DejaVu Sans",Helvetica,Arial,sans-serif;color:#212121;margin:0;background:#f5f7f8}
main{max-width:1180px;margin:0 auto;padding:20px 24px 40px;background:#fff}
h1{font-size:22px;margin:0 0 6px}
h2{font-size:18px;margin:28px 0 10px;border-bottom:2px solid #eceff1;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
.verdict{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;font-weight:bold;letter-spacing:.5px}
.v-pass{background:var(--pass)}.v-warn{background:var(--warn)}.v-fail{background:var(--fail)}
.summary{font-size:17px;font-weight:bold;margin:10px 0 4px}
.gate,.muted{color:var(--muted)}.small{font-size:13px}
.banner{border-left:5px solid #8e24aa;background:#f3e5f5;padding:8px 12px;margin:10px 0}
.banner.redacted{border-color:#455a64;background:#eceff1}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13.5px}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eceff1}
table.kv th{width:170px}
.absent{color:var(--muted);font-style:italic}
.failed{color:var(--fail);font-style:italic}
.figure{overflow-x:auto;border:1px solid #eceff1;padding:10px;margin:8px 0}
.figure svg{max-width:100%;height:auto}
.finding{border:1px solid var(--line);border-left:6px solid var(--info);padding:8px 12px;margin:8px 0;
 break-inside:avoid}
.finding.fail{border-left-color:var(--fail)}.finding.warn{border-left-color:var(--warn)}
.sev{font-weight:bold;text-transform:uppercase;margin-right:6px}
.sev.fail{color:var(--fail)}.sev.warn{color:var(--warn)}.sev.info{color:var(--info)}
code{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px;background:#f5f5f5;padding:0 3px}
pre{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px;background:#f8f9fa;
 border:1px solid #eceff1;padding:6px 8px;white-space:pre-wrap;word-break:break-word;margin:4px 0}
table.matrix td,table.matrix th{text-align:center;padding:3px 5px;font-family:"DejaVu Sans Mono",monospace;
 font-size:12px;min-width:42px}
.lv-self{background:#fafafa;color:#9e9e9e}.lv-nv{background:#c8e6c9}.lv-pix{background:#bbdefb}
.lv-phb{background:#ffe0b2}.lv-sys{background:#ffcdd2}.lv-unk{background:#e1bee7}
.legend span{display:inline-block;padding:1px 8px;margin:2px 4px 2px 0;border:1px solid var(--line);font-size:12.5px}
.plots{display:flex;flex-wrap:wrap;gap:12px}
footer{margin-top:30px;color:var(--muted);font-size:12.5px}
@media print{
 body{background:#fff;font-size:11pt}main{max-width:none;padding:0}
 h2{break-after:avoid}.figure{overflow:visible;border:none;break-inside:avoid}
 table,.plots svg{break-inside:avoid}
 .lv-nv,.lv-pix,.lv-phb,.lv-sys,.lv-unk,.verdict,th{-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
"""


def e(value: object) -> str:
    """Escape anything for HTML text or a quoted attribute (control characters become U+FFFD)."""
    return esc(value)


def val(value: object, unit: str = "") -> str:
    """A probed value as HTML: the value, or its absence (with the reason) in muted italics."""
    if isinstance(value, Failed):
        return f'<span class="failed" title="{e(value.source)}">failed: {e(value.reason)}</span>'
    if isinstance(value, Unsupported):
        return f'<span class="absent" title="{e(value.source)}">{e(value.reason)}</span>'
    return e(show(value, unit))


def _table(header: list[str], rows: list[list[str]], cls: str = "") -> str:
    """A table whose cells are already HTML (callers escape)."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    c = f' class="{cls}"' if cls else ""
    return f"<table{c}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _kv(rows: list[tuple[str, str]]) -> str:
    return (
        '<table class="kv"><tbody>'
        + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
        + ("</tbody></table>")
    )


def render(report: Report, options: RenderOptions) -> str:
    verdict = report.gate.verdict
    title = f"topoaudit {verdict.upper()}: " + (
        report.machine.host.hostname if isinstance(report.machine.host.hostname, str) else report.source.name
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{e(title)}</title><style>{CSS}</style></head><body><main>",
        _header(report),
        _identity(report),
        '<h2 id="topology">Topology</h2>',
        f'<div class="figure" id="topology-picture">{topology_svg(report)}</div>',
        _findings(report),
        _policy(report),
        _domains(report),
        _placements(report),
        _matrix(report),
        _nics(report),
    ]
    bench = bench_of(report)
    if bench is not None:
        parts.append(bench_section(bench))
    if isinstance(report.plan, Plan):
        parts.append(plan_section(report.plan))
    parts.append(_extras(report))
    parts.append(_not_learned(report))
    parts.append(
        f"<footer>Generated {e(report.generated_at)} by topoaudit {e(report.tool_version)} "
        f"(report schema {e(report.schema_version)}). The canonical data is report.json; "
        "re-render it with <code>topoaudit report report.json --format html</code>.</footer>"
    )
    parts.append("</main></body></html>")
    return "\n".join(p for p in parts if p) + "\n"


def _header(report: Report) -> str:
    verdict = report.gate.verdict
    out = [
        f'<h1>topoaudit report <span class="verdict v-{e(verdict)}">{e(verdict.upper())}</span></h1>',
        f'<p class="summary" id="summary">{e(summary(report))}</p>',
        f'<p class="gate">Exit {e(report.gate.exit_code)}: {e(report.gate.reason)}'
        + (" · the audit is incomplete (see the last section)" if report.gate.incomplete else "")
        + "</p>",
    ]
    if report.source.demo:
        out.append(
            '<p class="banner"><strong>Demo:</strong> a bundled example box, not the machine this ran on'
            + (f" ({e(report.source.description)})" if report.source.description else "")
            + ".</p>"
        )
    redaction = report.extras.get("redaction")
    if isinstance(redaction, dict):
        out.append(f'<p class="banner redacted"><strong>Redacted.</strong> {e(redaction.get("note", ""))}</p>')
    return "\n".join(out)


def _identity(report: Report) -> str:
    host = report.machine.host
    rows = [
        ("Host", val(host.hostname)),
        ("Product", val(host.product)),
        ("GPU model", val(report.gpu_model)),
        ("Catalog entry", val(report.catalog_entry)),
        ("Driver", val(host.driver_version)),
        ("CUDA driver", val(host.cuda_driver_version)),
        ("Kernel", val(host.kernel)),
        ("GPUs", f"{len(report.machine.gpus)} in the input" + (
            f" ({e(host.visible_gpu_count)} visible of {e(host.total_gpu_count)})"
            if isinstance(host.total_gpu_count, int) and isinstance(host.visible_gpu_count, int) else ""
        )),
        ("Source", f"{e(report.source.kind)}: <code>{e(report.source.name)}</code>"),
    ]  # fmt: skip
    out = ['<h2 id="machine">Machine</h2>', _kv(rows), _gpu_table(report.machine.gpus)]
    return "\n".join(out)


_GPU_COLUMNS: tuple[tuple[str, str], ...] = (
    ("name", "Name"),
    ("pci_bus_id", "Bus id"),
    ("serial", "Serial"),
    ("uuid", "UUID"),
    ("memory_total_bytes", "Memory"),
    ("numa_nodes", "NUMA"),
    ("cpu_affinity", "CPUs"),
)


def _gpu_table(gpus: tuple[Gpu, ...]) -> str:
    """One row per GPU; a column the source never has (every value absent for one reason) is left out."""
    shown = []
    for name, title in _GPU_COLUMNS:
        values = [getattr(g, name) for g in gpus]
        reasons = {v.reason for v in values if isinstance(v, Unsupported)}
        if all(isinstance(v, Unsupported) for v in values) and len(reasons) == 1:
            continue
        shown.append((name, title))
    has_pcie = any(isinstance(g.pcie.width_current, int) for g in gpus)
    lost = any(isinstance(g.status, Failed) for g in gpus)
    header = ["GPU", *(t for _, t in shown)] + (["PCIe"] if has_pcie else []) + (["Status"] if lost else [])
    rows = []
    for g in gpus:
        row = [f"<strong>{e(g.label)}</strong>"]
        for name, _ in shown:
            v = getattr(g, name)
            if name == "memory_total_bytes" and isinstance(v, int):
                row.append(f"{v / 2**30:.0f} GiB")
            elif name == "cpu_affinity" and isinstance(v, tuple):
                row.append(e(cpu_list(v)))
            else:
                row.append(val(v))
        if has_pcie:
            p = g.pcie
            row.append(f"Gen{val(p.gen_current)} x{val(p.width_current)} (max Gen{val(p.gen_max)} x{val(p.width_max)})")
        if lost:
            row.append(val(g.status))
        rows.append(row)
    return _table([e(h) for h in header], rows, "gpus")


def _policy(report: Report) -> str:
    """Which policy judged the report; ignored findings stay visible here with their reasons."""
    lines = policy_lines(report)
    if not lines:
        return ""
    return '<h2 id="policy">Policy</h2>' + _table(["", ""], [[e(label), e(text)] for label, text in lines])


def _findings(report: Report) -> str:
    out = ['<h2 id="findings">Findings</h2>']
    if not report.findings:
        out.append('<p class="muted">No findings: nothing in the topology needs attention.</p>')
    for f in report.findings:
        sev = f.severity.value
        block = [
            f'<div class="finding {e(sev)}" data-code="{e(f.code)}">',
            f'<div><span class="sev {e(sev)}">{e(sev)}</span><code>{e(f.code)}</code></div>',
            f"<p>{e(f.message)}</p>",
        ]
        if f.evidence:
            block.append(f"<div class='small'>Evidence</div><pre>{e(_evidence(f.evidence))}</pre>")
        if f.remedy:
            block.append(f"<p class='small'><strong>Remedy:</strong> {e(f.remedy)}</p>")
        block.append("</div>")
        out.append("".join(block))
    return "\n".join(out)


def _evidence(evidence: dict[str, Any]) -> str:
    lines = []
    for key in sorted(evidence):
        value = evidence[key]
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        lines.append(f"{key}: {text}")
    return "\n".join(lines)


def _domains(report: Report) -> str:
    hops = {b.gpus: b for b in report.bottlenecks}
    rows = []
    for d in report.domains:
        links = f"{d.min_links}" if d.min_links == d.max_links else f"{d.min_links}-{d.max_links}"
        b = hops.get(d.gpus)
        rows.append(
            [
                e(d.id),
                e(format_gpus(d.gpus)),
                e(d.build),
                "yes" if d.all_pairs else "no",
                e(links),
                e(b.describe) if b else ("-" if d.size < 2 else "NVLink"),
            ]
        )
    out = [
        '<h2 id="domains">NVLink domains</h2>',
        _table(["Domain", "GPUs", "Build", "All pairs linked", "NVLinks per pair", "Slowest ring hop"], rows),
    ]
    if report.bottlenecks and report.bottlenecks[0].slowest_hop is not None:
        whole = report.bottlenecks[0]
        hop = whole.slowest_hop
        assert hop is not None
        out.append(
            f"<p>A ring over all GPUs {e(format_gpus(whole.gpus))} is limited by <strong>{e(whole.describe)}</strong>"
            f" (GPU{e(hop.a)}–GPU{e(hop.b)}, <code>{e(hop.code)}</code>)"
            + ("" if whole.exact else ", a lower bound")
            + ".</p>"
        )
    return "\n".join(out)


def _placements(report: Report) -> str:
    out = ['<h2 id="placements">Tensor-parallel placements</h2>']
    if not report.placements:
        out.append('<p class="muted">No placements were computed.</p>')
    for p in report.placements:
        mark = "" if p.fits else ' <span class="sev fail">does not fit on NVLink</span>'
        groups = p.cuda_visible_devices
        shown = list(groups[:16])
        more = f"\n… {len(groups) - 16} more groups (report.json lists all)" if len(groups) > 16 else ""
        out.append(f"<h3>TP={e(p.tp)}{mark}</h3>")
        if shown:
            out.append(f"<pre>{e(chr(10).join(shown) + more)}</pre>")
        if p.alternatives:
            out.append("<ul>" + "".join(f"<li>{e(a)}</li>" for a in p.alternatives) + "</ul>")
    return "\n".join(out)


def _matrix(report: Report) -> str:
    header, rows = matrix(report)
    body = []
    for row in rows:
        cells = [f"<th>{e(row[0])}</th>"]
        for code in row[1:]:
            level, _ = level_from_code(code)
            cls = LEVEL_CLASS[level]
            cells.append(f'<td class="{cls}" title="{e(level.label)}">{e(code)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    legend = "".join(
        f'<span class="{LEVEL_CLASS[lv]}">{e(lv.label)}</span>'
        for lv in (PathLevel.NVLINK, PathLevel.PIX, PathLevel.PHB, PathLevel.SYS, PathLevel.UNKNOWN)
    )
    return (
        '<h2 id="matrix">Link matrix</h2><div class="figure"><table class="matrix"><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(body)
        + f'</tbody></table></div><p class="legend">{legend}</p>'
    )


def _nics(report: Report) -> str:
    """NIC table with the columns this source has (topo -m gives names only; a probe adds the rest)."""
    nics = report.machine.nics
    if not nics:
        return ""
    fields = [("device", "Device", ""), ("netdev", "Netdev", ""), ("pci_bus_id", "Bus id", ""),
              ("link_rate_gbps", "Rate", " Gb/s"), ("numa_node", "NUMA", "")]  # fmt: skip
    shown = [f for f in fields if not all(isinstance(getattr(n, f[0]), Unsupported) for n in nics)]
    rows = [[e(n.label), *(val(getattr(n, name), unit) for name, _, unit in shown)] for n in nics]
    return '<h2 id="nics">NICs</h2>' + _table(["NIC", *(title for _, title, _ in shown)], rows)


def bench_section(bench: BenchResult) -> str:
    """Bench plots (busbw vs size per group, expected band), the group table and the pairwise heatmap."""
    out = [
        '<h2 id="bench">Measured all-reduce</h2>',
        f"<p>{e(bench.collective)} over {e(bench.backend)}, {e(bench.world_size)} ranks on "
        f"{e(', '.join(bench.hosts) or 'this host')}; source {e(bench.source)}; status <strong>{e(bench.status)}"
        "</strong>.</p>",
    ]
    rows = []
    for g in bench.groups:
        rows.append(
            [
                e(g.name),
                e(",".join(map(str, g.ranks))),
                val(g.plateau_busbw_gbps, " GB/s"),
                val(g.expected_busbw_gbps, " GB/s"),
                e(f"{g.ratio:.0%}") if isinstance(g.ratio, float) else val(g.ratio),
                val(g.latency_p50_us, " µs"),
                e(g.error) if g.error else "",
            ]
        )
    out.append(_table(["Group", "Ranks", "Plateau busbw", "Expected", "Ratio", "Small-msg p50", "Error"], rows))
    plotted = [g for g in bench.groups if g.rows]
    plots = [busbw_plot((g,), _plot_title(g)) for g in plotted]
    if plots:
        out.append('<div class="plots">' + "".join(p for p in plots if p) + "</div>")
    heat = pair_heatmap(bench)
    if heat:
        out.append(f'<h3>Pairwise bandwidth</h3><div class="figure">{heat}</div>')
    if isinstance(bench.measured_islands, tuple):
        islands = " ".join("{" + ",".join(map(str, i)) + "}" for i in bench.measured_islands)
        out.append(f"<p>Ranks that talk fast together (measured): {e(islands)}</p>")
    if bench.errors:
        out.append(
            "<ul>" + "".join(f"<li>rank {e(x.rank)} {e(x.kind)}: {e(x.message)}</li>" for x in bench.errors) + "</ul>"
        )
    if bench.notes:
        out.append("<ul class='small'>" + "".join(f"<li>{e(n)}</li>" for n in bench.notes) + "</ul>")
    return "\n".join(out)


def _plot_title(g: BenchGroup) -> str:
    size = f" at {human_size(g.plateau_size_bytes)}" if isinstance(g.plateau_size_bytes, int) else ""
    plateau = f": plateau {gbps(g.plateau_busbw_gbps)} GB/s{size}" if isinstance(g.plateau_busbw_gbps, float) else ""
    return f"{g.name} ({len(g.ranks)} ranks){plateau}"


def plan_section(plan: Plan) -> str:
    rows = [
        ("Verdict", f"<strong>{e(plan.verdict)}</strong>"),
        ("Model", e(plan.model_text)),
        ("Footprint", e(f"{plan.footprint_gb:,.1f} GB (weights {plan.weights_gb:,.1f} + KV {plan.kv_cache_gb:,.1f}"
                         f" + margin {plan.safety_margin_gb:,.1f})")),
        ("Card", e(f"{plan.gpu_name}: {plan.usable_per_card_gb:,.1f} GB usable of {plan.card_memory_gb:,.0f} GB")),
        ("Cards", e(f"{plan.cards} (TP{plan.tp_size}" + (f" x PP{plan.pp_size}" if plan.pp_size > 1 else "") + ")")),
    ]  # fmt: skip
    for fit in (plan.standard_node, plan.machine):
        if isinstance(fit, DomainFit):
            rows.append((e(fit.kind), e(fit.verdict)))
    out = ['<h2 id="plan">Deploy plan</h2>', _kv(rows), "<h3>Arithmetic</h3>"]
    out.append("<ol>" + "".join(f"<li>{e(s)}</li>" for s in plan.steps) + "</ol>")
    if plan.alternatives:
        out.append("<h3>Alternatives</h3>")
        out.append(_table(["Option", "Cost"], [[e(a.summary), e(a.cost)] for a in plan.alternatives]))
    return "\n".join(out)


def _extras(report: Report) -> str:
    """Sections other stages added (imports, policy...) that have no dedicated view: shown as data."""
    shown = {k: v for k, v in report.extras.items() if k not in ("redaction", "bench")}
    if not shown:
        return ""
    out = ['<h2 id="extras">Other sections</h2>']
    for key in sorted(shown):
        text = json.dumps(shown[key], indent=2, ensure_ascii=False, sort_keys=True, default=str)
        out.append(f"<h3>{e(key)}</h3><pre>{e(text)}</pre>")
    return "\n".join(out)


def _not_learned(report: Report) -> str:
    items = []
    for issue in report.input_issues:
        items.append(f"<li>input line {e(issue.line)} ({e(issue.action)}): {e(issue.message)}</li>")
    for s in report.skipped:
        items.append(f"<li>rule <code>{e(s.rule)}</code> skipped: {e(s.reason)}</li>")
    facts = list(absent_facts(report))
    for where, name, value in facts:
        cls = "failed" if isinstance(value, Failed) else "absent"
        items.append(f'<li>{e(where)} <code>{e(name)}</code>: <span class="{cls}">{e(value)}</span></li>')
    host = report.machine.host
    for name in ("hostname", "product", "driver_version", "kernel"):
        value = getattr(host, name)
        if is_absent(value):
            items.append(f'<li>host <code>{e(name)}</code>: <span class="absent">{e(value)}</span></li>')
    if not items:
        return ""
    return '<h2 id="not-learned">What could not be probed</h2><ul class="small">' + "".join(items) + "</ul>"
