"""`python -m topoaudit.catalog`: list the GPU models the catalog knows, with the figures each is judged by."""

from __future__ import annotations

import sys

from topoaudit.catalog import catalog_markdown


def main() -> int:
    """Print the catalog table (the same table docs/catalog.md holds); exit 0."""
    print("\n".join(line for line in catalog_markdown().splitlines() if not line.startswith("<!--")).strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
