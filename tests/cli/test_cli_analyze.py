"""The CLI as a user drives it: bundled examples, the gate's exit codes, clear errors on bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

Run = Callable[..., tuple[int, str, str]]  # the `run` fixture of tests/cli/conftest.py


EXAMPLES = Path(__file__).parents[2] / "topoaudit" / "examples"


def test_example_list(run: Run) -> None:
    code, out, _ = run("analyze", "--example", "list")
    assert code == 0
    for name in ("hgx-h100", "h200-nvl-split", "h100-nvl-pairs", "dgx1-cube-mesh", "pcie-only"):
        assert name in out


@pytest.mark.parametrize(
    ("example", "args", "exit_code", "domains"),
    [
        ("hgx-h100", (), 0, [[0, 1, 2, 3, 4, 5, 6, 7]]),
        ("hgx-h100", ("--tp", "8", "--expect-domain", "8"), 0, [[0, 1, 2, 3, 4, 5, 6, 7]]),
        ("h200-nvl-split", (), 0, [[0, 1, 2, 3], [4, 5, 6, 7]]),
        ("h200-nvl-split", ("--tp", "8"), 1, [[0, 1, 2, 3], [4, 5, 6, 7]]),
        ("h200-nvl-split", ("--expect-domain", "8"), 1, [[0, 1, 2, 3], [4, 5, 6, 7]]),
        ("h200-nvl-split", ("--tp", "4"), 0, [[0, 1, 2, 3], [4, 5, 6, 7]]),
        ("h100-nvl-pairs", ("--tp", "4"), 1, [[0, 1], [2, 3], [4, 5], [6, 7]]),
        ("dgx1-cube-mesh", ("--tp", "8"), 0, [[0, 1, 2, 3, 4, 5, 6, 7]]),
        ("pcie-only", ("--tp", "2"), 0, [[0], [1], [2], [3], [4], [5], [6], [7]]),
    ],
)
def test_examples_gate(run: Run, example: str, args: tuple[str, ...], exit_code: int, domains: list[list[int]]) -> None:
    code, out, err = run("analyze", "--example", example, "--format", "json", *args)
    report = json.loads(out)
    assert code == exit_code == report["gate"]["exit_code"]
    assert [d["gpus"] for d in report["domains"]] == domains
    assert report["source"]["demo"] is True
    assert "topoaudit:" in err  # the one-line verdict goes to stderr for machine formats


def test_split_example_console_says_what_to_do(run: Run) -> None:
    code, out, _ = run("analyze", "--example", "h200-nvl-split", "--tp", "8", "--no-color")
    assert code == 1
    assert "DEMO" in out and "tp-group-crosses-domain" in out
    assert "CUDA_VISIBLE_DEVICES=0,1,2,3" in out and "PP=2" in out


def test_markdown_and_file_output(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "r.md"
    code, out, err = run("analyze", "--example", "dgx1-cube-mesh", "--format", "markdown", "-o", str(target))
    text = target.read_text()
    assert code == 0 and out == "" and str(target) in err
    assert "nvlink-partial-mesh" in text and "| GPU0 |" in text


def test_saved_report_is_rejudged_with_new_options(run: Run, tmp_path: Path) -> None:
    saved = tmp_path / "report.json"
    run("analyze", "--example", "h200-nvl-split", "--format", "json", "-o", str(saved))
    code, out, _ = run("analyze", str(saved), "--tp", "8", "--format", "json")
    report = json.loads(out)
    assert code == 1 and report["source"]["kind"] == "report" and report["source"]["demo"] is True
    assert report["gpu_model"] == "NVIDIA H200 NVL"


def test_stdin(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from topoaudit.examples import examples

    text = (EXAMPLES / examples()["pcie-only"].file).read_text()
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    code, out, _ = run("analyze", "-", "--format", "json")
    assert code == 0 and len(json.loads(out)["gpus"]) == 8


@pytest.mark.parametrize(
    ("args", "exit_code", "message"),
    [
        (("analyze",), 2, "give either PATH or --example"),
        (("analyze", "--tp", "zero", "--example", "hgx-h100"), 2, "zero"),
        (("analyze", "--bogus"), 2, "--bogus"),
        (("analyze", "--example", "nope"), 2, "unknown example 'nope'"),
        (("analyze", "/nonexistent/topo.txt"), 4, "no such file"),
    ],
)
def test_bad_usage_and_input_are_clear(run: Run, args: tuple[str, ...], exit_code: int, message: str) -> None:
    code, _, err = run(*args)
    assert code == exit_code
    assert message in err and "Traceback" not in err


def test_garbage_file_exits_4(run: Run, tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\nthis is not a topology\n")
    code, _, err = run("analyze", str(junk))
    assert code == 4 and "not a format topoaudit reads" in err
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\x00\x01\x02GPU0")
    assert run("analyze", str(binary))[0] == 4


def test_version_and_help(run: Run) -> None:
    code, out, _ = run("--version")
    assert code == 0 and "topoaudit" in out
    code, out, _ = run("--help")
    assert code == 0 and "analyze" in out and "Exit codes" in out


def test_damaged_paste_recovered_or_refused(run: Run, tmp_path: Path) -> None:
    from topoaudit.examples import examples

    text = (EXAMPLES / examples()["dgx1-cube-mesh"].file).read_text()
    lines = text.splitlines()
    row = lines[1].split()  # GPU0's row: drop its GPU3 cell; the mirror (GPU3's GPU0 cell) restores it
    one_missing = tmp_path / "one.txt"
    one_missing.write_text("\n".join([lines[0], "  ".join(row[:4] + row[5:]), *lines[2:]]))
    code, out, _ = run("analyze", str(one_missing), "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["input_issues"][0]["line"] == 2
    assert any(lk["a"] == "GPU0" and lk["b"] == "GPU3" and lk["code"] == "NV2" for lk in report["links"])
    assert run("analyze", str(one_missing), "--strict")[0] == 3
    # the same cell gone from both rows: nothing tells what it was, so the tool refuses to guess
    row3 = lines[4].split()
    both = tmp_path / "both.txt"
    both.write_text(
        "\n".join(
            [lines[0], "  ".join(row[:4] + row[5:]), lines[2], lines[3], "  ".join(row3[:1] + row3[2:]), *lines[5:]]
        )
    )
    code, _, err = run("analyze", str(both))
    assert code == 4 and "line" in err and "Traceback" not in err


@pytest.mark.parametrize("fmt", ["console", "markdown", "html"])
def test_policy_and_its_ignored_findings_are_visible_in_every_human_format(run: Run, fmt: str) -> None:
    code, out, _ = run(
        "analyze", "--example", "h100-nvl-pairs", "--policy", "builtin:bridged-workstation",
        "--format", fmt, "--no-color",
    )  # fmt: skip
    assert code == 0
    assert "bridged-workstation" in out and "ignored" in out
    assert "nic-not-local" in out and "workstations have no GPUDirect RDMA NICs" in out


def test_bench_without_torch_says_how_to_install_it() -> None:
    import subprocess
    import sys

    code = "import sys; sys.modules['torch'] = None; from topoaudit.cli import main; main(['bench'])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 4
    assert "needs PyTorch" in done.stderr and "[bench]'" in done.stderr and "Traceback" not in done.stderr
