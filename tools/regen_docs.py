"""Regenerate the tables of ``docs/`` that come from topoaudit's own registries.

    python tools/regen_docs.py            # rewrite the generated parts of docs/*.md
    python tools/regen_docs.py --check    # exit 1 and name the stale files

Each generated part sits between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->`` in its file; the
prose around it is written by hand. The parts: the inputs ``analyze`` reads (the readers), the finding codes
and what each documents (the rule registry), the output formats, the commands and the exit codes; and the whole
tables of the GPU catalog (docs/catalog.md) and the signature catalog (docs/signatures.md), each between its own
markers. A test fails when a committed file differs from what this produces.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _markdown(text: str) -> str:
    """A docstring's reStructuredText as Markdown: ``code`` and roles (:func:`x`, :class:`~a.B`) as `code`."""
    text = re.sub(r":[a-z]+:`~?(?:[\w.]+\.)?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


def _cell(text: str) -> str:
    return _markdown(" ".join(str(text).split())).replace("|", "\\|")


def _first_line(doc: str | None) -> str:
    return " ".join((doc or "").strip().split("\n\n")[0].split())


def inputs_table() -> str:
    """Every reader: the source kind a report names, what it reads, and what may be pasted beside it."""
    from topoaudit.readers import readers

    rows = ["| source kind | input | read beside it in one paste |", "|---|---|---|"]
    for r in sorted(readers(), key=lambda r: -r.priority):
        module = importlib.import_module(r.load.__module__)
        beside = ", ".join(f"`{b}`" for b in r.beside) or "-"
        rows.append(f"| `{r.name}` | {_cell(_first_line(module.__doc__))} | {beside} |")
    return "\n".join(rows)


def codes_table() -> str:
    """Every finding code in registry order: default severity, title, what it is judged from, its commands."""
    from topoaudit.rules.codes import CODES
    from topoaudit.rules.registry import rules

    rows = ["| code | default severity | meaning | judged from |", "|---|---|---|---|"]
    for code in CODES.values():
        rows.append(
            f"| `{code.code}` | {code.severity.value} | {_cell(code.title)} | {_judged_from(code.code, rules())} |"
        )
    return "\n".join(rows)


def _judged_from(code: str, registered: tuple) -> str:  # type: ignore[type-arg]
    from topoaudit.rules.codes import CODES

    needs = [set(CODES[code].needs + r.needs) for r in registered if code in r.codes] or [set(CODES[code].needs)]
    least = [group for group in needs if not any(other < group for other in needs)]  # a superset adds nothing
    said = [" and ".join(sorted(n.name for n in group)) or "any input" for group in least]
    return _cell("; or ".join(dict.fromkeys(said)))


def codes_sections() -> str:
    """Each code's documentation, grouped by the module that declares it: the docstring of its rule."""
    from topoaudit.rules.codes import CODES
    from topoaudit.rules.families import FAMILIES
    from topoaudit.rules.registry import rules

    out: list[str] = []
    for family in FAMILIES:
        codes = [c for c in CODES.values() if c.declared_in == family.module]
        if not codes:
            continue
        out += [f"### {family.title}", "", f"Declared in `{family.module.replace('.', '/')}.py`.", ""]
        for code in codes:
            out += [f"#### `{code.code}` ({code.severity.value})", "", f"**{code.title}.**", ""]
            docs = [code.doc] + [
                _doc(r.function) for r in rules() if code.code in r.codes and _doc(r.function) != code.doc
            ]
            for doc in dict.fromkeys(d for d in docs if d):
                out += [_markdown(doc), ""]
            out += [f"Remedy: {_markdown(code.remedy)}", ""]
            out += [f"Judged from: {_judged_from(code.code, rules())}.", ""]
            if code.remedy_actions:
                out += [
                    f"Commands it may carry (`--format remedy`): {', '.join(f'`{a}`' for a in code.remedy_actions)}.",
                    "",
                ]
    return "\n".join(out).rstrip()


def _doc(function: Callable[..., object]) -> str:
    import inspect

    return inspect.cleandoc(function.__doc__ or "")


def formats_table(which: str) -> str:
    """The formats of reports (every command that judges one machine, `plan` the marked ones) or of fleets."""
    from topoaudit import formats

    if which == "fleet":
        rows = ["| `--format` | what it writes |", "|---|---|"]
        return "\n".join(rows + [f"| `{f.name}` | {_cell(f.describes)} |" for f in formats.FLEET_FORMATS])
    rows = ["| `--format` | what it writes | `plan` |", "|---|---|---|"]
    rows += [f"| `{f.name}` | {_cell(f.describes)} | {'yes' if f.plan else ''} |" for f in formats.REPORT_FORMATS]
    return "\n".join(rows)


def commands_table() -> str:
    """Every command and the first sentence of its help."""
    from topoaudit.cli import COMMANDS, cli

    rows = ["| command | what it does |", "|---|---|"]
    for name in sorted(COMMANDS):
        command = cli.get_command(None, name)  # type: ignore[arg-type]
        assert command is not None
        rows.append(f"| `topoaudit {name}` | {_cell(command.get_short_help_str(limit=300))} |")
    return "\n".join(rows)


def exit_codes_table() -> str:
    from topoaudit.exitcodes import EXIT_CODE_MEANINGS

    rows = ["| code | meaning |", "|---|---|"]
    rows += [f"| {int(code)} | {meaning} |" for code, meaning in EXIT_CODE_MEANINGS.items()]
    return "\n".join(rows)


def machines_table() -> str:
    """The catalog's machines: card, GPUs, NVLink domain, NICs, and where each figure comes from."""
    from topoaudit.catalog.machines import all_machines

    rows = [
        "| `--gpu` | card | GPUs | NVLink domain | NICs per machine | oracle's reference node | sources |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in all_machines():
        memory = f", {m.memory_gb:g} GB" if m.memory_gb else ""
        layer = f" {m.link_layer}" if m.link_layer else ""
        sources = "; ".join(f"{field}: {m.source_of(field)}" for field, _ in m.cites)
        rows.append(
            f"| `{m.name}` | `{m.gpu}`{memory} | {m.gpus} | {m.domain_gpus} | {m.nics}x {m.nic_gbits:g}G{layer} "
            f"{_cell(m.nic_name)} | {'yes' if m.reference else ''} | {_cell(sources)} |"
        )
    return "\n".join(rows)


def latency_table() -> str:
    """NCCL's latency constants the planner times a small all-reduce with, and their releases."""
    from topoaudit.model import nccl_latency as lat

    rows = ["| constant | ring | tree | source |", "|---|---|---|---|"]
    source = "src/graph/tuning.cc@v2.18.1-1 to @v2.30.7-1"
    rows.append(f"| base (LL) | {lat.BASE_LL_US['ring']:g} us | {lat.BASE_LL_US['tree']:g} us | baseLat, {source} |")
    for hw, name in (("NVLINK", "per NVLink step"), ("PCI", "per PCIe step"), ("NET", "per network step")):
        hop = lat.HOP_LL_US[hw]
        rows.append(f"| {name} (LL) | {hop['ring']:g} us | {hop['tree']:g} us | hwLat, {source} |")
    rows.append(
        f"| network overhead per intra-node step of a ring across nodes | {lat.NET_OVERHEAD_LL_US:g} us | - | "
        "getNetOverhead, src/graph/tuning.cc@v2.30.7-1 (2.0 on AMD CPUs) |"
    )
    rows.append(f"| one GPU per node | tree's network figure | - | {_cell(lat.ONE_GPU_PER_NODE)} |")
    return "\n".join(rows)


PARTS: dict[str, tuple[str, Callable[[], str]]] = {
    "inputs": ("inputs.md", inputs_table),
    "finding-codes": ("findings.md", codes_table),
    "finding-docs": ("findings.md", codes_sections),
    "report-formats": ("formats.md", lambda: formats_table("report")),
    "fleet-formats": ("formats.md", lambda: formats_table("fleet")),
    "commands": ("commands.md", commands_table),
    "exit-codes": ("commands.md", exit_codes_table),
    "machines": ("planner.md", machines_table),
    "nccl-latency": ("planner.md", latency_table),
}
"""Generated part -> (file under docs/, what writes it)."""


def _whole_tables() -> dict[str, Callable[[str], str]]:
    from topoaudit import catalog
    from topoaudit.parse import signatures

    return {"catalog.md": catalog.render_doc, "signatures.md": signatures.render_doc}


def section(text: str, name: str) -> str:
    """The generated part ``name`` of a file's text (what tests read)."""
    start, end = f"<!-- generated: {name} -->\n", f"\n<!-- end: {name} -->"
    return text.split(start, 1)[1].split(end, 1)[0]


def regenerated(docs: Path = DOCS) -> dict[Path, str]:
    """Each docs file with a generated part, as it should read."""
    out: dict[Path, str] = {}
    for name, (file, make) in PARTS.items():
        path = docs / file
        text = out.get(path) or path.read_text(encoding="utf-8")
        start, end = f"<!-- generated: {name} -->\n", f"<!-- end: {name} -->"
        pattern = re.compile(rf"({re.escape(start)})(?:.*?\n)?({re.escape(end)})", re.S)
        if not pattern.search(text):
            raise SystemExit(f"{path}: no generated part {name!r} ({start.strip()} ... {end})")
        table = make()
        out[path] = pattern.sub(lambda m, table=table: m.group(1) + table + "\n" + m.group(2), text)
    for file, render in _whole_tables().items():
        path = docs / file
        out[path] = render(out.get(path) or path.read_text(encoding="utf-8"))
    return out


def stale(docs: Path = DOCS) -> list[str]:
    """The docs files whose generated parts differ from what the registries say now."""
    return [str(p.relative_to(ROOT)) for p, text in regenerated(docs).items() if p.read_text(encoding="utf-8") != text]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a generated part is stale")
    args = parser.parse_args()
    if args.check:
        problems = stale()
        for path in problems:
            print(f"{path}: stale; run `python tools/regen_docs.py`", file=sys.stderr)
        return 1 if problems else 0
    written = regenerated()
    for path, text in written.items():
        path.write_text(text, encoding="utf-8")
    print(f"wrote the generated parts of {len(written)} files under {DOCS}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
