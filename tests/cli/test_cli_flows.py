"""The new user's path through the command line: the demo, the split box, and a saved report passed on."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

Run = Callable[..., tuple[int, str, str]]  # the `run` fixture of tests/cli/conftest.py


def test_audit_demo_passes_and_says_it_is_a_demo(run: Run) -> None:
    code, out, _ = run("audit", "--demo", "--no-color")
    assert code == 0
    assert "DEMO" in out and "PASS" in out and "hgx-h100" in out
    code, out, _ = run("audit", "--demo", "--format", "json")
    report = json.loads(out)
    assert code == 0 == report["gate"]["exit_code"] and report["source"]["demo"] is True


def test_audit_demo_refuses_to_bench_a_box_it_does_not_run_on(run: Run) -> None:
    code, _, err = run("audit", "--demo", "--bench")
    assert code == 2 and "--demo" in err and "Traceback" not in err


def test_split_box_at_tp8_fails_and_says_what_to_do(run: Run) -> None:
    code, out, _ = run("analyze", "--example", "h200-nvl-split", "--tp", "8", "--no-color")
    assert code == 1
    assert "DEMO" in out and "FAIL" in out and "tp-group-crosses-domain" in out
    assert "CUDA_VISIBLE_DEVICES=0,1,2,3" in out


def test_a_saved_split_report_travels_through_report_and_plan(run: Run, tmp_path: Path) -> None:
    saved = tmp_path / "report.json"
    code, _, _ = run("analyze", "--example", "h200-nvl-split", "--tp", "8", "--format", "json", "-o", str(saved))
    assert code == 1
    code, out, _ = run("report", str(saved), "--format", "markdown")
    assert code == 1 and "tp-group-crosses-domain" in out  # re-rendering keeps the verdict and its exit code
    plan_json = tmp_path / "plan.json"
    code, _, err = run("plan", "--params", "1.6T", "--precision", "int4", "--from", str(saved),
                       "--format", "json", "-o", str(plan_json))  # fmt: skip
    assert code == 1 and str(plan_json) in err
    plan = json.loads(plan_json.read_text())
    assert plan["plan"]["machine"]["domain_sizes"] == [4, 4] and plan["gate"]["exit_code"] == 1
    code, out, _ = run("report", str(plan_json), "--format", "markdown")
    assert code == 1 and "## Deploy plan" in out and "crosses-domain" in out


def test_plan_json_without_a_machine_is_a_report_too(run: Run, tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    code, _, _ = run("plan", "--params", "744B", "--precision", "int4", "--gpu", "H200", "--format", "json",
                     "-o", str(saved))  # fmt: skip
    data = json.loads(saved.read_text())
    assert code == 0 == data["gate"]["exit_code"]
    assert "kind" not in data and data["schema_version"] >= 1
    assert data["plan"]["cards"] == 4 and data["source"]["kind"] == "plan"
    for fmt in ("console", "html", "junit"):
        code, out, _ = run("report", str(saved), "--format", fmt, "--no-color")
        assert code == 0 and out


def test_one_pass_verdict_with_a_plan_section(run: Run) -> None:
    code, out, _ = run("analyze", "--example", "h200-nvl-split", "--format", "json",
                       "--plan-params", "1.6T", "--plan-precision", "int4")  # fmt: skip
    data = json.loads(out)
    assert code == 1 == data["gate"]["exit_code"]
    assert [f["code"] for f in data["findings"]].count("tp-group-crosses-domain") == 1


@pytest.mark.parametrize("columns", [80, 100])
def test_console_follows_columns(run: Run, monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    for args in (("analyze", "--example", "h200-nvl-split", "--tp", "8"),
                 ("plan", "--params", "1.6T", "--precision", "int4", "--example", "h200-nvl-split")):  # fmt: skip
        _, out, _ = run(*args, "--no-color")
        assert max(len(line) for line in out.splitlines()) <= columns


def test_the_plans_card_names_the_model_a_pasted_matrix_lacks(run: Run, tmp_path: Path) -> None:
    paste = tmp_path / "topo.txt"  # topo -m text: no GPU model in it
    paste.write_text((Path(__file__).parents[2] / "topoaudit" / "examples" / "h200-nvl-split.txt").read_text())
    code, out, _ = run("analyze", str(paste), "--format", "json",
                       "--plan-params", "744B", "--plan-precision", "int4", "--plan-gpu", "H200 NVL")  # fmt: skip
    data = json.loads(out)
    assert data["gpu_model"] == "NVIDIA H200 NVL" and data["catalog_entry"] == "H200-NVL"
    assert "model-unknown" not in [f["code"] for f in data["findings"]]
    assert data["plan"]["gpu_key"] == "H200-NVL" and code == 0
    code, out, _ = run("analyze", str(paste), "--format", "json", "--gpu-model", "NVIDIA H200 NVL",
                       "--plan-params", "744B", "--plan-precision", "int4")  # fmt: skip
    assert json.loads(out)["plan"]["gpu_key"] == "H200-NVL"  # and --gpu-model names the plan's card


def test_a_box_that_names_its_model_keeps_it_when_the_plan_asks_about_another_card(run: Run) -> None:
    code, out, _ = run("analyze", "--example", "h200-nvl-split", "--format", "json",
                       "--plan-params", "744B", "--plan-precision", "int4", "--plan-gpu", "B200")  # fmt: skip
    data = json.loads(out)
    assert code == data["gate"]["exit_code"]
    assert data["gpu_model"] == "NVIDIA H200 NVL" and data["plan"]["gpu_key"] == "B200"
