"""Text every format shares: the summary sentence, CPU lists, bandwidth figures, XML-safe text."""

from __future__ import annotations

import re

from topoaudit.model.machine import PathLevel
from topoaudit.model.network import nodes_heading
from topoaudit.model.report import Report
from topoaudit.model.topology import format_gpus
from topoaudit.model.values import Unsupported

# characters XML 1.0 cannot carry (or should not): a hostile string must still give a well-formed file
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def xml_text(text: object) -> str:
    """``text`` with every character XML cannot carry replaced by U+FFFD (escaping is the caller's)."""
    return _XML_BAD.sub("\ufffd", str(text))


def summary(report: Report) -> str:
    """One sentence a support engineer can act on."""
    n = len(report.machine.gpus)
    model = report.gpu_model if isinstance(report.gpu_model, str) else "GPU"
    multi = [d for d in report.domains if d.size >= 2]
    parts = []
    if n == 0:
        parts.append(f"no GPUs in this report ({no_gpus_why(report)})")
    elif n == 1:
        parts.append(f"1× {model} in the input")
    elif n >= 2 and all(d.build == "unknown" for d in report.domains):
        parts.append(
            f"{nodes_heading(report.bench, n, model)}: the source describes no links between GPUs (topology unknown)"
        )
    elif not multi:
        parts.append(f"{n}× {model}: no NVLink between any GPUs")
    elif len(multi) == 1 and multi[0].size == n:
        d = multi[0]
        kind = {"nvswitch": "one NVSwitch domain", "mesh": "one fully linked NVLink mesh"}.get(
            d.build, "one NVLink domain (not every pair directly linked)"
        )
        parts.append(
            f"{n}× {model} in {kind} (NV{d.min_links}" + (f"-NV{d.max_links})" if d.max_links != d.min_links else ")")
        )
    else:
        whole = report.bottlenecks[0] if report.bottlenecks else None
        joined = f", joined over {whole.level.label}" if whole and whole.level != PathLevel.NVLINK else ""
        noun = "NVLink domain" if len(multi) == 1 else "NVLink domains"
        outside = n - sum(d.size for d in multi)
        left_out = f" ({outside} GPU{'s' if outside > 1 else ''} without NVLink)" if outside else ""
        parts.append(
            f"{n}× {model} in {len(multi)} {noun} " + " ".join(format_gpus(d.gpus) for d in multi) + left_out + joined
        )
    requested = [p for p in report.placements if isinstance(report.options.tp, int) and p.tp == report.options.tp]
    for p in requested:
        parts.append(f"TP={p.tp} {'fits on NVLink' if p.fits else 'cannot stay on NVLink'}")
    fails = [f for f in report.findings if f.severity.value == "fail"]
    warns = [f for f in report.findings if f.severity.value == "warn"]
    parts.append(f"verdict {report.gate.verdict.upper()} ({len(fails)} fail, {len(warns)} warn)")
    prefix = "DEMO (bundled example, not this machine): " if report.source.demo else ""
    return prefix + "; ".join(parts) + "."


def no_gpus_why(report: Report) -> str:
    """Why a report names no GPU: a bench measured on CPUs, else an input that names none (an error line)."""
    bench = report.bench
    if not isinstance(bench, Unsupported) and bench.source == "topoaudit" and bench.backend == "gloo":
        return "a CPU-only run"
    return "the input names none"


def cpu_list(cpus: object) -> str:
    """Compact CPU list (0-51,104-155), or the reason it is absent."""
    if not isinstance(cpus, tuple):
        return str(cpus)
    if not cpus:
        return "-"
    runs, start, prev = [], cpus[0], cpus[0]
    for c in cpus[1:]:
        if c != prev + 1:
            runs.append(f"{start}-{prev}" if prev != start else str(start))
            start = c
        prev = c
    runs.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(runs)


def gbps(value: float) -> str:
    """A bandwidth as people read it: 367 for NVLink, 24.8 for PCIe, 0.522 for a CPU loopback test."""
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"
