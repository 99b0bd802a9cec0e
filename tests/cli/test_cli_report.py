"""`analyze --out/--redact` and `topoaudit report`: a saved report re-rendered anywhere, no GPU, no torch."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import report_samples as rs

from topoaudit.outputs.bundle import verify_bundle
from topoaudit.render import render

TOPO = Path(__file__).parents[1] / "fixtures" / "topo"

Run = Callable[..., tuple[int, str, str]]  # the `run` fixture of tests/cli/conftest.py


def test_analyze_out_writes_a_verified_bundle(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "ticket"
    code, stdout, err = run("analyze", "--example", "h200-nvl-split", "--tp", "8", "--out", str(out))
    assert code == 1  # the gate is unchanged by --out
    assert "bundle written to" in err and "NVLink domains" in stdout
    assert verify_bundle(out) == []
    example = Path(__file__).parents[2] / "topoaudit" / "examples" / "h200-nvl-split.txt"
    assert (out / "evidence" / "example-h200-nvl-split.txt").read_text() == example.read_text()
    data = json.loads((out / "report.json").read_text())
    assert data["gate"]["exit_code"] == 1


def test_analyze_file_and_stdin_keep_their_input_as_evidence(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    capture = next(TOPO.glob("*.txt"))
    run("analyze", str(capture), "--out", str(tmp_path / "a"), "--format", "json")
    assert (tmp_path / "a" / "evidence" / capture.name).read_bytes() == capture.read_bytes()
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO(capture.read_text()))
    run("analyze", "-", "--out", str(tmp_path / "b"), "--format", "json")
    assert (tmp_path / "b" / "evidence" / "stdin.txt").read_text() == capture.read_text()


@pytest.mark.parametrize("fmt", ["html", "markdown", "console", "json", "junit"])
def test_report_re_renders_a_saved_report(run: Run, tmp_path: Path, fmt: str) -> None:
    saved = tmp_path / "report.json"
    report = rs.identity_report()
    saved.write_text(render(report, "json"))
    target = tmp_path / f"out.{fmt}"
    code, _, err = run("report", str(saved), "--format", fmt, "-o", str(target))
    assert code == report.gate.exit_code == 1  # the saved audit failed: re-rendering it fails a CI step too
    assert "FAIL (exit 1); report written to" in err
    assert target.read_text() == render(report, fmt)


def test_report_of_a_passing_audit_exits_0(run: Run, tmp_path: Path) -> None:
    saved = tmp_path / "report.json"
    run("analyze", "--example", "hgx-h100", "--format", "json", "-o", str(saved))
    code, out, _ = run("report", str(saved), "--no-color")
    assert code == 0 and "PASS" in out


def test_report_redact_and_bundle(run: Run, tmp_path: Path) -> None:
    saved = tmp_path / "report.json"
    saved.write_text(render(rs.identity_report(), "json"))
    code, out, _ = run("report", str(saved), "--format", "json", "--redact", "--out", str(tmp_path / "pub"))
    assert code == 1 == json.loads(out)["gate"]["exit_code"]
    assert rs.HOSTNAME not in out and json.loads(out)["host"]["hostname"] == "host-1"
    for p in (tmp_path / "pub").rglob("*"):
        if p.is_file():
            assert rs.HOSTNAME.encode() not in p.read_bytes() and rs.SERIALS[0].encode() not in p.read_bytes()


def test_report_refuses_what_is_not_a_report(run: Run, tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    code, _, err = run("report", str(bad))
    assert code == 4 and "not JSON" in err
    bad.write_text('{"hello": 1}')
    code, _, err = run("report", str(bad))
    assert code == 4 and "not a topoaudit report" in err
    code, _, err = run("report", str(tmp_path / "missing.json"))
    assert code == 4 and "no such file" in err


def test_report_imports_neither_torch_nor_pynvml(tmp_path: Path) -> None:
    saved = tmp_path / "report.json"
    saved.write_text(render(rs.identity_report(), "json"))
    probe = (
        "import sys\n"
        "from topoaudit.cli import main\n"
        "try:\n"
        f"    main(['report', {str(saved)!r}, '--format', 'html', '-o', {str(tmp_path / 'r.html')!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('torch', 'pynvml') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "r.html").stat().st_size > 1000
