"""Count the house: modules, import edges, cycles and floors of the topoaudit package.

    python benchmarks/import_graph.py [PACKAGE_DIR]     # default: the topoaudit/ beside this script

Every ``import`` of a topoaudit module counts, also those inside functions (a lazy import is still a
dependency). A cycle is a strongly connected group of two or more modules; floors are the longest chain of
imports once each cycle is folded into one node (how many storeys a reader climbs from the bottom).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import networkx as nx


def module_names(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under the package."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(package: Path) -> nx.DiGraph:
    """Modules of the package as nodes; an edge a -> b when a imports b."""
    known = module_names(package)
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name if is_package else name.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                targets = [f"{base}.{alias.name}" for alias in node.names] or [base]
            for target in targets:
                resolved = _resolve(target, known)
                if resolved and resolved != name:
                    graph.add_edge(name, resolved)
    return graph


def figures(graph: nx.DiGraph) -> dict[str, int]:
    """Modules, edges, cycles (strongly connected groups of 2+) and floors (longest chain after folding)."""
    cycles = [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    folded = nx.condensation(graph)
    return {
        "modules": graph.number_of_nodes(),
        "import_edges": graph.number_of_edges(),
        "cycles": len(cycles),
        "modules_in_cycles": sum(len(c) for c in cycles),
        "floors": nx.dag_longest_path_length(folded) + 1,
    }


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    package = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / "topoaudit"
    if not package.is_dir():
        print(f"import_graph.py: {package} is not a package folder", file=sys.stderr)
        return 2
    graph = import_graph(package)
    for key, value in figures(graph).items():
        print(f"{key:18} {value}")
    for cycle in (c for c in nx.strongly_connected_components(graph) if len(c) > 1):
        print("cycle:", " <-> ".join(sorted(cycle)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
