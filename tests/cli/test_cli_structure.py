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
    use_cases = sorted((PACKAGE / "app").glob("*.py"))
    assert len(use_cases) > 1
    for path in use_cases:
        imported = imports_of(path)
        assert not {m for m in imported if m.split(".")[0] in ("click", "rich") or m.startswith("topoaudit.cli")}, path


def test_each_command_imports_only_its_own_use_case() -> None:
    """A command loads the shared pieces and its own use case, never another command's (their request classes
    and helpers cost every start)."""
    own = {
        "topoaudit.cli.analyze": {"analyze"},
        "topoaudit.cli.audit": {"audit", "bench"},  # audit --bench runs a sweep
        "topoaudit.cli.bench": {"bench"},
        "topoaudit.cli.examples": set(),
        "topoaudit.cli.fleet": {"fleet"},
        "topoaudit.cli.healthcheck": {"healthcheck", "audit"},  # the probe's options
        "topoaudit.cli.nccl_topo": {"nccl_topo", "audit"},  # the probe's options
        "topoaudit.cli.plan": {"plan"},
        "topoaudit.cli.report": {"report"},
    }
    assert set(own) == COMMAND_MODULES
    for module, allowed in own.items():
        path = PACKAGE.parent / (module.replace(".", "/") + ".py")
        used = {m.split(".")[2] for m in imports_of(path) if m.startswith("topoaudit.app.")}
        assert used - {"common"} == allowed, f"{module} uses {used}"


def test_every_command_module_is_registered() -> None:
    shared = ("__init__", "options")
    on_disk = {f"topoaudit.cli.{p.stem}" for p in (PACKAGE / "cli").glob("*.py") if p.stem not in shared}
    assert on_disk == COMMAND_MODULES
