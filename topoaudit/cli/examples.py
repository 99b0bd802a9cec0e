"""`topoaudit examples`: the bundled example boxes (the same list as `analyze --example list`)."""

from __future__ import annotations

import click

from topoaudit.cli.options import print_examples


@click.command()
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="List format."
)
def examples(fmt: str) -> None:
    """List the bundled example boxes: captured machines to try every command on without a GPU.

    \b
    Examples:
      topoaudit examples
      topoaudit analyze --example h200-nvl-split --tp 8
      topoaudit plan --params 1.6T --precision int4 --example h200-nvl-split
    """
    print_examples(fmt)
