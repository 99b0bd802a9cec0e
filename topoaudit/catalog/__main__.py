"""`python -m topoaudit.catalog [DOC]`: regenerate the catalog table in docs/catalog.md (or DOC)."""

from __future__ import annotations

import sys
from pathlib import Path

from topoaudit.catalog import render_doc


def main(argv: list[str]) -> int:
    """Rewrite the generated table of the catalog document; exit 0."""
    path = Path(argv[0]) if argv else Path(__file__).resolve().parents[2] / "docs" / "catalog.md"
    text = path.read_text(encoding="utf-8")
    new = render_doc(text)
    if new != text:
        path.write_text(new, encoding="utf-8")
        print(f"updated {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
