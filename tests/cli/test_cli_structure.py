"""The command line stays a thin edge: commands never import each other, and no layer below imports click."""

from __future__ import annotations

import ast
from pathlib import Path

from topoaudit.cli import COMMANDS

PACKAGE = Path(__file__).parents[2] / "topoaudit"
COMMAND_MODULES = {module for module, _ in COMMANDS.values()}


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_no_command_module_imports_another() -> None:
    for module in sorted(COMMAND_MODULES):
        path = PACKAGE.parent / (module.replace(".", "/") + ".py")
        others = (imports_of(path) & COMMAND_MODULES) - {module}
        assert others == set(), f"{module} imports {others}"


def test_the_application_layer_knows_no_click_or_terminal() -> None:
    imported = imports_of(PACKAGE / "app.py")
    assert not {m for m in imported if m.split(".")[0] in ("click", "rich") or m.startswith("topoaudit.cli")}


def test_every_command_module_is_registered() -> None:
    shared = ("__init__", "options")
    on_disk = {f"topoaudit.cli.{p.stem}" for p in (PACKAGE / "cli").glob("*.py") if p.stem not in shared}
    assert on_disk == COMMAND_MODULES
