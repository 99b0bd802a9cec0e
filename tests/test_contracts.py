"""Contracts documented in one place each: the docs' tables against the exit-code enum and the code registry
(and generated from them, never stale), and the import layering that keeps non-measuring commands fast."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from report_samples import docs

from topoaudit.exitcodes import EXIT_CODE_MEANINGS, ExitCode
from topoaudit.rules.codes import CODES

DOCS = Path(__file__).parents[1] / "docs"
README = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")


def _section(marker: str) -> str:
    """A table of docs/ made from the registries (tools/regen_docs.py)."""
    file, _ = docs.PARTS[marker]
    return docs.section((DOCS / file).read_text(encoding="utf-8"), marker)


def test_the_docs_tables_are_what_the_registries_say() -> None:
    assert docs.stale() == [], "regenerate with `python tools/regen_docs.py`"


def test_the_readme_is_a_front_door_that_links_the_reference() -> None:
    assert len(README) <= 15_000
    for page in ("commands", "inputs", "findings", "formats", "json", "fleet", "slurm", "kubernetes", "prometheus",
                 "policy", "design"):  # fmt: skip
        assert f"(docs/{page}.md)" in README, page
        assert (DOCS / f"{page}.md").is_file(), page


def test_readme_exit_code_table_matches_the_enum() -> None:
    rows = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", _section("exit-codes"), re.M))
    assert {int(k) for k in rows} == {int(c) for c in ExitCode}
    for code, meaning in EXIT_CODE_MEANINGS.items():
        assert rows[str(int(code))] == meaning


def test_readme_lists_every_finding_code_with_its_default_severity() -> None:
    rows = dict(re.findall(r"^\| `([a-z0-9-]+)` \| (info|warn|fail) \|", _section("finding-codes"), re.M))
    assert rows == {code: entry.severity.value for code, entry in CODES.items()}


def test_codes_are_kebab_case_and_have_remedies() -> None:
    for code, entry in CODES.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", code)
        assert entry.title and entry.remedy


def test_analyze_and_help_import_neither_torch_nor_pynvml() -> None:
    probe = (
        "import sys\n"
        "from topoaudit.cli import cli\n"
        "from topoaudit.readers import load_example\n"
        "from topoaudit.pipeline import analyze\n"
        "from topoaudit.render import render\n"
        "l = load_example('hgx-h100')\n"
        "r = analyze(l.machine, source=l.source)\n"
        "render(r, 'console'); render(r, 'json'); render(r, 'markdown')\n"
        "cli.get_command(None, 'analyze')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'pynvml'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


def test_import_contracts_hold() -> None:
    """The layers, the forbidden imports and the no-cycles rule in .importlinter (also run as lint-imports)."""
    root = Path(__file__).parents[1]
    check = "from importlinter.cli import lint_imports; raise SystemExit(lint_imports('.importlinter', no_cache=True))"
    result = subprocess.run([sys.executable, "-c", check], cwd=root, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout
