"""The "Command line" section of docs/commands.md stays true to the command line."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from topoaudit.cli import COMMANDS

Run = Callable[..., tuple[int, str, str]]  # the `run` fixture of tests/cli/conftest.py

README = Path(__file__).parents[2] / "docs" / "commands.md"  # the command line's reference page


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    return text.split("## Command line\n", 1)[1].split("\n## ", 1)[0]


def test_every_command_is_in_the_readme_and_every_readme_command_exists() -> None:
    listed = set(re.findall(r"^topoaudit ([\w-]+)", _section(), re.M))
    assert listed == set(COMMANDS)


def test_readme_says_what_report_exits_with(run: Run) -> None:
    assert "`report` exits with the gate code recorded in the report" in " ".join(_section().split())


def test_help_lists_the_commands_the_readme_names(run: Run) -> None:
    code, out, _ = run("--help")
    assert code == 0
    for name in COMMANDS:
        assert re.search(rf"^\s+{name}\s", out, re.M), name
