"""Errors that help: empty input, a terminal on standard input, and reports that cannot be written."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest

Run = Callable[..., tuple[int, str, str]]  # the `run` fixture of tests/cli/conftest.py


class Terminal(io.StringIO):
    """Standard input left attached to the user's terminal."""

    def isatty(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> str:
        raise AssertionError("read a terminal: the command would wait for input the user does not know to type")


@pytest.mark.parametrize("content", ["", "\n  \n"])
@pytest.mark.parametrize("command", [("analyze",), ("plan", "--weights-gb", "100", "--from")])
def test_an_empty_file_says_it_is_empty(run: Run, tmp_path: Path, content: str, command: tuple[str, ...]) -> None:
    empty = tmp_path / "topo.txt"
    empty.write_text(content)
    code, _, err = run(*command, str(empty))
    assert code == 4
    assert f"{empty}: the file is empty" in err and "not a format" not in err


@pytest.mark.parametrize(
    ("command", "pipe"),
    [(("analyze", "-"), "nvidia-smi topo -m | topoaudit analyze -"), (("report", "-"), "topoaudit report -")],
)
def test_empty_stdin_says_it_is_empty(
    run: Run, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...], pipe: str
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, _, err = run(*command)
    assert code == 4
    assert "standard input is empty" in err and pipe in err


@pytest.mark.parametrize(
    ("command", "pipe"),
    [
        (("analyze", "-"), "nvidia-smi topo -m | topoaudit analyze -"),
        (("plan", "--weights-gb", "100", "--from", "-"), "nvidia-smi topo -m | topoaudit analyze -"),
        (("report", "-"), "--format json | topoaudit report -"),
    ],
)
def test_stdin_on_a_terminal_is_refused_with_what_to_pipe(
    run: Run, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...], pipe: str
) -> None:
    monkeypatch.setattr("sys.stdin", Terminal())
    code, _, err = run(*command)
    assert code == 2
    assert "standard input, which is a terminal here" in err and pipe in err


def test_output_into_a_missing_directory_exits_4_naming_it(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "no-such-dir" / "report.json"
    code, out, err = run("analyze", "--example", "hgx-h100", "--format", "json", "-o", str(target))
    assert code == 4 and out == ""
    assert str(tmp_path / "no-such-dir") in err and "Traceback" not in err
    assert len(err.strip().splitlines()) <= 2  # one sentence (and at most a hint)
    assert not target.parent.exists()  # never created behind the user's back


def test_output_under_a_file_or_onto_a_directory_exits_4(run: Run, tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me\n")
    code, _, err = run("analyze", "--example", "hgx-h100", "-o", str(a_file / "report.md"))
    assert code == 4 and "notes.txt" in err and "Traceback" not in err
    assert a_file.read_text() == "keep me\n"
    code, _, err = run("plan", "--params", "70B", "--precision", "bf16", "--gpu", "H100", "-o", str(tmp_path))
    assert code == 4 and "directory" in err and "Traceback" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_output_into_a_read_only_directory_exits_4(run: Run, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _, err = run("analyze", "--example", "hgx-h100", "-o", str(locked / "r.txt"))
    finally:
        locked.chmod(0o700)
    assert code == 4 and "permission denied" in err


def test_probe_snapshot_into_a_missing_directory_exits_4(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from topoaudit.app import audit as app

    def fake_probe(request: app.ProbeRequest) -> app.ProbeResult:
        return app.ProbeResult('{"kind": "snapshot"}\n', "probed 0 GPU(s) in 0.01 s")

    monkeypatch.setattr(app, "probe", fake_probe)
    code, _, err = run("probe", "-o", str(tmp_path / "missing" / "snapshot.json"))
    assert code == 4 and "missing" in err and "Traceback" not in err


def test_an_error_sentence_never_carries_a_paths_escape_sequences_to_the_terminal(run: Run, tmp_path: Path) -> None:
    """A file name (or a quoted line) with terminal escape sequences in it is named with them replaced."""
    hostile = tmp_path / "topo\x1b[2J\x1b]0;owned\x07.txt"
    code, out, err = run("analyze", str(hostile))
    assert code == 4 and out == ""
    assert "\x1b" not in err and "\x07" not in err
    assert "topo\ufffd[2J\ufffd]0;owned\ufffd.txt: no such file" in err


def test_report_reads_a_link_that_loops_as_one_sentence(run: Run, tmp_path: Path) -> None:
    os.symlink("loop.json", tmp_path / "loop.json")
    code, _, err = run("report", str(tmp_path / "loop.json"))
    assert code == 4 and "a symbolic link that loops back on itself" in err and "Traceback" not in err
