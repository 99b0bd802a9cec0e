"""`topoaudit plan` and `analyze --plan-*` as a user drives them: figures, exit codes, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli as run

from topoaudit.exitcodes import ExitCode
from topoaudit.model.plan import DeployPlan
from topoaudit.model.report import report_from_dict
from topoaudit.rules.codes import CODES


def plan_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, "plan", "--format", "json", *args)
    return code, json.loads(out)


def test_744b_int4_on_h200_four_cards_one_node(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = plan_json(capsys, "--params", "744B", "--precision", "int4", "--gpu", "H200")
    plan = doc["plan"]
    assert code == 0 == doc["gate"]["exit_code"]
    assert round(plan["weights_gb"]) == 409 and round(plan["footprint_gb"]) == 512
    assert plan["cards"] == 4 and plan["tp_size"] == 4
    assert plan["standard_node"]["fits_one_domain"] is True
    assert plan["machine"] == {"status": "unsupported", "source": "plan", "reason": "no audited machine given"}
    assert doc["findings"] == []


def test_1600b_int4_on_h200_eight_cards_at_the_edge(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = plan_json(
        capsys, "--params", "1600B", "--active", "49B", "--precision", "int4", "--gpu", "H200", "--kv-headroom", "0.25"
    )
    assert code == 0
    assert doc["plan"]["footprint_gb"] == 1100 and doc["plan"]["cards"] == 8
    assert doc["plan"]["verdict"] == "at-edge-of-domain"
    assert doc["plan"]["active_params_b"] == 49


def test_753b_nvfp4_on_gb300_more_than_one_card(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = plan_json(capsys, "--params", "753B", "--precision", "nvfp4", "--gpu", "GB300")
    assert code == 0  # an NVL72 domain holds the group
    assert doc["plan"]["cards_for_weights"] == 2  # the weights alone exceed one 252 GB card
    code, doc = plan_json(capsys, "--weights-gb", "464", "--gpu", "GB300", "--kv-headroom", "0.05")
    assert doc["plan"]["cards"] == 2


def test_split_example_four_cards_fit_a_domain(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = plan_json(capsys, "--params", "744B", "--precision", "int4", "--example", "h200-nvl-split")
    assert code == 0
    assert doc["source"]["demo"] is True
    assert doc["plan"]["gpu_key"] == "H200-NVL"  # without --gpu the card is the box's
    assert doc["plan"]["machine"]["fits_one_domain"] is True
    assert doc["plan"]["machine"]["placement"] == [0, 1, 2, 3]


def test_split_example_eight_cards_cross_domains_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = plan_json(capsys, "--params", "1600B", "--precision", "int4", "--example", "h200-nvl-split")
    assert code == ExitCode.FINDINGS == doc["gate"]["exit_code"]
    assert doc["plan"]["machine"]["fits_one_domain"] is False
    assert doc["plan"]["machine"]["domain_sizes"] == [4, 4]
    assert [f["code"] for f in doc["findings"] if f["severity"] == "fail"] == ["tp-group-crosses-domain"]
    kinds = [a["kind"] for a in doc["plan"]["alternatives"]]
    # what the box can do first (TP4 x PP2 on its two domains, then TP8 across them), then cards to rent
    assert kinds[:2] == ["tp-in-domain-pp-across", "cross-node-tp"]
    assert set(kinds[2:]) == {"cards-that-fit-one-domain"}
    assert "uses 2 of the 2 domains" in doc["plan"]["alternatives"][0]["summary"]
    [crossing] = [f for f in doc["findings"] if f["code"] == "tp-group-crosses-domain"]
    assert "memory binds: the footprint needs 8 cards" in crossing["message"]
    assert "First alternative: TP4 inside each NVLink domain x PP2" in crossing["message"]
    assert crossing["evidence"]["binding_limit"] == "memory"
    assert "smaller TP with more replicas" not in crossing["remedy"]


def test_split_example_console_shows_the_arithmetic(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "plan", "--params", "1600B", "--precision", "int4", "--example", "h200-nvl-split")
    assert code == 1
    assert "DEMO" in out
    assert "1,100 GB" in out and "ceil(" in out
    assert "tp-group-crosses-domain" in out
    assert "TP4 inside each NVLink domain x PP2" in out


def test_markdown_format(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "plan", "--params", "744B", "--precision", "int4", "--gpu", "H200", "--format", "markdown"
    )
    assert code == 0
    assert out.startswith("# topoaudit plan")
    assert "## Deploy plan" in out and "### Arithmetic" in out and "409.2 GB" in out


def test_plan_from_a_saved_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, saved, _ = run(capsys, "analyze", "--example", "h200-nvl-split", "--format", "json")
    path = tmp_path / "report.json"
    path.write_text(saved, encoding="utf-8")
    code, doc = plan_json(capsys, "--weights-gb", "464", "--from", str(path))
    # 464 x 1.25 = 580 GB on 139 GB H200 NVL cards -> 5 -> TP8: more than a 4-GPU domain
    assert code == 1
    assert doc["plan"]["tp_size"] == 8 and doc["plan"]["gpu_key"] == "H200-NVL"


def test_analyze_with_plan_options_puts_a_plan_section_in_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "analyze",
        "--example",
        "h200-nvl-split",
        "--format",
        "json",
        "--plan-params",
        "1.6T",
        "--plan-precision",
        "int4",
    )
    data = json.loads(out)
    assert code == 1 == data["gate"]["exit_code"]
    assert "tp-group-crosses-domain" in data["gate"]["reason"]
    assert data["plan"]["verdict"] == "crosses-domain"
    report = report_from_dict(data)  # the plan section survives the round trip
    assert isinstance(report.plan, DeployPlan) and report.plan.tp_size == 8


def test_analyze_without_plan_options_says_not_requested(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "analyze", "--example", "hgx-h100", "--format", "json")
    assert code == 0
    assert json.loads(out)["plan"] == {"status": "unsupported", "source": "options", "reason": "not requested"}


def test_analyze_plan_fits_and_markdown_shows_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "analyze",
        "--example",
        "h200-nvl-split",
        "--format",
        "markdown",
        "--plan-params",
        "744B",
        "--plan-precision",
        "int4",
    )
    assert code == 0
    assert "## Deploy plan" in out and "use GPUs 0,1,2,3" in out


def test_analyze_console_shows_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "analyze", "--example", "hgx-h100", "--no-color", "--plan-params", "70b", "--plan-precision", "bf16"
    )
    assert code == 0
    assert "Deploy plan" in out and "How it was computed" in out


def test_the_finding_code_is_registered() -> None:
    assert CODES["tp-group-crosses-domain"].severity.value == "fail"


# --- bad input: a sentence and exit 2 (a bad option value) or 4 (unusable input), never a traceback ---


@pytest.mark.parametrize(
    ("args", "exit_code", "says"),
    [
        (("--params", "banana", "--precision", "int4", "--gpu", "H200"), 2, "cannot read 'banana'"),
        (("--params", "744", "--precision", "int4", "--gpu", "H200"), 2, "no unit"),
        (("--params", "744B", "--precision", "int4", "--gpu", "H200", "--kv-headroom", "-0.1"), 2, "-0.1"),
        (("--params", "744B", "--precision", "int99", "--gpu", "H200"), 2, "unknown precision"),
        (("--params", "744B", "--precision", "int4", "--gpu", "TPU9"), 2, "not in the catalog"),
        (("--params", "744B", "--gpu", "H200"), 2, "needs --precision"),
        (("--precision", "int4", "--gpu", "H200"), 2, "needs the model size"),
        (("--weights-gb", "-3", "--gpu", "H200"), 2, "-3"),
        (("--params", "744B", "--precision", "int4"), 2, "needs a GPU model"),
        (("--params", "744B", "--precision", "int4", "--from", "/nonexistent/x.txt"), 4, "no such file"),
        (("--params", "744B", "--precision", "int4", "--example", "nope"), 2, "unknown example"),
        (("--params", "744B", "--precision", "int4", "--gpu", "H200", "--context", "8192"), 2, "missing"),
        (("--params", "744B", "--precision", "int4", "--gpu", "H200", "--reserve-gb", "500"), 2, "leaves nothing"),
        (("--params", "1B", "--active", "2B", "--precision", "int4", "--gpu", "H200"), 2, "exceed the total"),
    ],
)
def test_bad_input_is_a_sentence_not_a_traceback(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], exit_code: int, says: str
) -> None:
    code, out, err = run(capsys, "plan", *args)
    assert code == exit_code
    assert says in err
    assert "Traceback" not in err + out


def test_kv_shape_options(capsys: pytest.CaptureFixture[str]) -> None:
    _code, doc = plan_json(
        capsys,
        *("--params", "70B", "--precision", "bf16", "--gpu", "H100"),
        *("--context", "131072", "--layers", "80", "--kv-heads", "8", "--head-dim", "128"),
        *("--batch", "4", "--kv-precision", "fp8"),
    )
    assert doc["plan"]["kv_method"] == "computed"
    assert doc["plan"]["kv_cache_gb"] == pytest.approx(85.9, abs=0.1)
    assert doc["plan"]["kv_shape"]["kv_precision"] == "fp8"


def test_plan_never_imports_torch_or_pynvml() -> None:
    code = (
        "import sys; from topoaudit.cli import main\n"
        "try:\n    main(['plan', '--params', '744B', '--precision', 'int4', '--gpu', 'H200', '--format', 'json'])\n"
        "except SystemExit:\n    pass\n"
        "print('LOADED', 'torch' in sys.modules, 'pynvml' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "LOADED False False" in out


def test_from_a_topo_paste_without_model_needs_gpu(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from importlib import resources

    text = resources.files("topoaudit.examples").joinpath("h200-nvl-split.txt").read_text(encoding="utf-8")
    path = tmp_path / "topo.txt"
    path.write_text(text, encoding="utf-8")
    code, _out, err = run(capsys, "plan", "--params", "744B", "--precision", "int4", "--from", str(path))
    assert code == ExitCode.UNUSABLE  # `topo -m` does not name the GPU model: the box cannot be sized
    assert "pass --gpu" in err and "Traceback" not in err
    code, doc = plan_json(capsys, "--params", "1.6T", "--precision", "int4", "--gpu", "H200 NVL", "--from", str(path))
    assert code == 1 and doc["plan"]["machine"]["domain_sizes"] == [4, 4]
