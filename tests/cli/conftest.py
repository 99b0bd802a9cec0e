"""The command line as a user drives it, in process: exit code, standard output, standard error."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from topoaudit.cli import main

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    """``run("analyze", "--example", "hgx-h100")`` -> (exit code, stdout, stderr)."""

    def invoke(*args: str) -> tuple[int, str, str]:
        with pytest.raises(SystemExit) as exc:
            main(list(args))
        out, err = capsys.readouterr()
        return int(exc.value.code or 0), out, err

    return invoke
