"""The command line run in process, as a user drives it: exit code, standard output, standard error.

One implementation for every test that runs ``topoaudit`` in process (the ``run`` fixture of
``tests/conftest.py`` wraps it); a test that needs a fresh interpreter runs ``python -m topoaudit`` instead.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

Run = Callable[..., tuple[int, str, str]]


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``run_cli(capsys, "analyze", "--example", "hgx-h100")`` -> (exit code, stdout, stderr)."""
    from topoaudit.cli import main

    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err
