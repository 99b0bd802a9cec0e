"""Options and exit codes that behave alike across commands: examples, --debug, bench's bundle options."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import report_samples as rs

from topoaudit.app import analyze as analyze_use_case
from topoaudit.app import audit as audit_use_case
from topoaudit.app import bench as bench_use_case
from topoaudit.app.common import Judged
from topoaudit.model.report import SourceInfo
from topoaudit.outputs.bundle import verify_bundle

Run = Callable[..., tuple[int, str, str]]  # the `run` fixture of tests/cli/conftest.py

EXAMPLE_NAMES = {"hgx-h100", "h200-nvl-split", "h100-nvl-pairs", "dgx1-cube-mesh", "pcie-only"}


@pytest.mark.parametrize("command", ["analyze", "plan"])
def test_unknown_example_is_a_usage_error_like_an_unknown_gpu(run: Run, command: str) -> None:
    size = ("--params", "744B", "--precision", "int4") if command == "plan" else ()
    code, _, err = run(command, *size, "--example", "nope")
    assert code == 2
    assert "unknown example 'nope'" in err and "h200-nvl-split" in err and "Traceback" not in err
    code, _, err = run("analyze", "--example", "hgx-h100", "--plan-params", "1T", "--plan-precision", "int4",
                       "--plan-gpu", "TPU9")  # fmt: skip
    assert code == 2 and "TPU9" in err


@pytest.mark.parametrize("command", [("analyze",), ("plan",), ("examples",)])
def test_example_list_on_every_command_that_takes_examples(run: Run, command: tuple[str, ...]) -> None:
    args = (*command, "--example", "list") if command != ("examples",) else command
    code, out, err = run(*args)
    assert code == 0 and err == ""
    assert {line.split()[0] for line in out.splitlines()} == EXAMPLE_NAMES


@pytest.mark.parametrize("command", [("analyze", "--example", "list"), ("plan", "--example", "list"), ("examples",)])
def test_example_list_as_json(run: Run, command: tuple[str, ...]) -> None:
    code, out, _ = run(*command, "--format", "json")
    rows = json.loads(out)
    assert code == 0
    assert {row["name"] for row in rows} == EXAMPLE_NAMES
    split = next(row for row in rows if row["name"] == "h200-nvl-split")
    assert split["gpu_model"] == "NVIDIA H200 NVL" and split["description"]
    assert split["provenance"].startswith("Constructed")  # a made-up box says so
    assert all(row["provenance"].startswith(("Real capture", "Constructed")) for row in rows)


def _broken(*_: object, **__: object) -> None:
    raise RuntimeError("boom")


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_before_or_after_the_command_shows_the_traceback(
    run: Run, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.setattr(analyze_use_case, "analyze_input", _broken)
    command = ("analyze", "--example", "hgx-h100")
    code, _, err = run("--debug", *command) if where == "before" else run(*command, "--debug")
    assert code == 5
    assert "Traceback" in err and "RuntimeError: boom" in err


def test_internal_error_without_debug_suggests_it(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analyze_use_case, "analyze_input", _broken)
    code, _, err = run("analyze", "--example", "hgx-h100")
    assert code == 5
    assert "internal error: RuntimeError: boom" in err and "--debug" in err and "Traceback" not in err


def test_debug_after_a_double_dash_is_an_argument_not_the_flag(run: Run) -> None:
    code, _, err = run("analyze", "--", "--debug")
    assert code == 4 and "--debug: no such file" in err  # a file named --debug, as `--` asks


def test_analyze_help_names_every_input_it_reads(run: Run) -> None:
    code, out, _ = run("analyze", "--help")
    assert code == 0
    for kind in ("nvidia-smi topo -m", "snapshot", "report.json", "nccl-tests", "- for standard input"):
        assert kind in " ".join(out.split()), kind


def _bench_report(request: bench_use_case.BenchRequest, progress: object = None) -> object:
    """What the bench use case returns after a sweep (the sweep itself is tested in tests/bench/)."""
    return Judged(
        rs.report_of(
            rs.split_machine(host=rs.identity_report().machine.host, with_ids=True),
            source=SourceInfo("bench", "live", description="all-reduce bench over 8 rank(s)"),
            bench=rs.bench_result(),
        )
    )


def test_bench_takes_out_and_redact_like_every_judging_command(
    run: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(bench_use_case, "bench", _bench_report)
    bundle = tmp_path / "bench-run"
    code, out, err = run("bench", "--format", "json", "--out", str(bundle), "--redact")
    assert code == json.loads(out)["gate"]["exit_code"]
    assert "bundle written to" in err and "[redacted]" in err
    assert verify_bundle(bundle) == []
    saved = (bundle / "report.json").read_text()
    assert json.loads(saved)["bench"]["groups"][0]["name"] == "all"
    assert rs.HOSTNAME not in saved and rs.HOSTNAME not in out


@pytest.mark.parametrize("command", ["bench", "audit"])
def test_a_sweep_that_cannot_run_is_refused_before_any_probe(
    run: Run, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    def no_probe(*_: object, **__: object) -> None:
        raise AssertionError("probed the machine for a sweep that was refused")

    monkeypatch.setattr(bench_use_case, "_probed_machine", no_probe)
    monkeypatch.setattr(audit_use_case, "_probe", no_probe)
    bench_flag = ("--bench",) if command == "audit" else ()
    code, _, err = run(command, *bench_flag, "--min-bytes", "1M", "--max-bytes", "1K")
    assert code == 2 and "--min-bytes 1 MiB is above --max-bytes 1 KiB" in err and "Traceback" not in err


def test_every_command_that_takes_out_takes_force(run: Run) -> None:
    from topoaudit.cli import COMMANDS

    with_out = []
    for command in sorted(COMMANDS):
        code, out, _ = run(command, "--help")
        assert code == 0
        if "--out DIRECTORY" in out:
            with_out.append(command)
            assert "--force" in out, command
    assert with_out == ["analyze", "audit", "bench", "report"]


def test_report_out_keeps_another_hosts_bundle_unless_forced(run: Run, tmp_path: Path) -> None:
    bundle = tmp_path / "ticket"
    sample = Path(__file__).parents[1] / "fixtures" / "fleet" / "report-a100-8gpu-nccltests.json"
    for host in ("gpu-a01", "gpu-b07"):
        saved = json.loads(sample.read_text())
        saved["host"]["hostname"] = host
        (tmp_path / f"{host}.json").write_text(json.dumps(saved))
    assert run("report", str(tmp_path / "gpu-a01.json"), "--format", "json", "--out", str(bundle))[0] == 0
    code, out, err = run("report", str(tmp_path / "gpu-b07.json"), "--format", "json", "--out", str(bundle))
    assert (code, out) == (4, "")
    assert "it holds the bundle of host 'gpu-a01', and this report is of host 'gpu-b07'; give --force" in err
    assert json.loads((bundle / "report.json").read_text())["host"]["hostname"] == "gpu-a01"
    code, out, err = run("report", str(tmp_path / "gpu-b07.json"), "--format", "json", "--out", str(bundle), "--force")
    assert code == 0, err
    assert json.loads((bundle / "report.json").read_text())["host"]["hostname"] == "gpu-b07"
