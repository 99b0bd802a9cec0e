"""A verdict says what it covered: an input whose rules examined nothing, and which shows nothing at warn or fail,
is "not judged" in every format, with the one capture that would let it judge; it exits 0, 3 under --strict.
A PASS is over evidence some rule examined, and says which.

The inputs are real pastes of the corpus's dev part (tests/fixtures/real).
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_runner import Run

from topoaudit.exitcodes import ExitCode

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REAL = Path(__file__).parents[1] / "fixtures" / "real"
TOPO_M = "paste `nvidia-smi topo -m` of the same box with it"


def dev_paste(paste_id: str) -> str:
    """The path of a dev-part paste (the held-back part is never read by a test)."""
    parts = {p["id"]: p["part"] for p in tomllib.loads((REAL / "corpus.toml").read_text())["paste"]}
    assert parts[paste_id] == "dev", f"{paste_id} is held back"
    return str(REAL / "pastes" / f"{paste_id}.txt")


RINGS_ONLY = "nccl-1706-4gpu-stuck-channel-setup"  # ring and tree lines of a hung start-up, no transport
START_UP = "vllm-5484-trace-log-before-hang-bootstrap"  # NCCL's bootstrap lines before a hang
ONE_GPU = "sglang-1612-topo-single-4090"  # `topo -m` of a box with one GPU and no NIC


def test_an_nccl_excerpt_of_ring_orders_is_not_judged_and_names_topo_m(run: Run) -> None:
    code, out, err = run("analyze", dev_paste(RINGS_ONLY), "--format", "json")
    data = json.loads(out)
    assert code == ExitCode.OK
    assert data["verdict"] == data["gate"]["verdict"] == "not judged"
    assert data["gate"]["judged"] == [] and data["gate"]["to_judge"] == TOPO_M
    assert "NCCL's log shows no transport between ranks" in data["gate"]["reason"]
    assert err.startswith("topoaudit: NOT JUDGED (exit 0): nothing the gate checks could be judged")
    assert err.rstrip().endswith(f"to judge it, {TOPO_M}")


def test_not_judged_exits_3_under_strict(run: Run) -> None:
    assert run("analyze", dev_paste(START_UP))[0] == ExitCode.OK
    assert run("analyze", dev_paste(START_UP), "--strict")[0] == ExitCode.INCOMPLETE


@pytest.mark.parametrize(
    ("fmt", "said"),
    [
        ("console", "topoaudit NOT JUDGED"),
        ("markdown", "**NOT JUDGED** (exit 0: nothing the gate checks could be judged"),
        ("html", '<span class="verdict v-not-judged">NOT JUDGED</span>'),
        ("prometheus", 'topoaudit_verdict{Hostname="deepseek",verdict="not judged"} 1.0'),
        ("k8s-labels", "topoaudit.dev/verdict=not-judged"),
        ("remedy", "verdict not judged"),
    ],
)
def test_every_format_says_not_judged(run: Run, fmt: str, said: str) -> None:
    code, out, _ = run("analyze", dev_paste(RINGS_ONLY), "--format", fmt)
    assert code == ExitCode.OK and said in out
    if fmt in ("console", "markdown", "html"):  # the capture that would let it judge, as each format writes it
        words = " ".join(out.replace("│", " ").replace("\\", "").split())
        assert TOPO_M in words


def test_junit_skips_the_gate_case_of_a_report_that_judged_nothing(run: Run) -> None:
    _, out, _ = run("analyze", dev_paste(RINGS_ONLY), "--format", "junit")
    suite = ET.fromstring(out.split("\n", 1)[1]).find("testsuite")
    assert suite is not None
    gate = next(tc for tc in suite.iter("testcase") if tc.get("name") == "gate")
    skipped = gate.find("skipped")
    assert skipped is not None and gate.find("failure") is None
    assert skipped.get("message", "").startswith("nothing the gate checks could be judged")
    verdict = next(p for p in suite.iter("property") if p.get("name") == "verdict")
    assert verdict.get("value") == "not judged"
    degraded = next(tc for tc in suite.iter("testcase") if tc.get("name") == "nvlink-degraded")
    reason = degraded.find("skipped")
    assert reason is not None and "the nccl-log input describes none" in reason.get("message", "")


def test_one_gpu_and_no_nic_has_no_interconnect_and_no_capture_to_ask_for(run: Run) -> None:
    code, out, _ = run("analyze", dev_paste(ONE_GPU), "--format", "json")
    gate = json.loads(out)["gate"]
    assert (code, gate["verdict"], gate["to_judge"]) == (ExitCode.OK, "not judged", "")
    assert gate["reason"] == (
        "nothing the gate checks could be judged: the input shows one GPU and no NIC: there is no interconnect to judge"
    )


@pytest.mark.parametrize(
    ("paste", "judged"),
    [
        ("nccl-1261-a100-4gpu-topo-nv4-alltoall", "the links between 4 GPUs (topo-matrix)"),
        ("nccl-1817-l20-shm-cross-socket", "NCCL's transports between 5 rank pairs"),
        ("azhc-142-h200-vm-allreduce-480", "an all-reduce sweep of 8 ranks"),
        ("nccl-1608-h100nvl-nvlink-status-12of18", "the NVLink ports of"),
    ],
)
def test_a_pass_says_what_it_covered(run: Run, paste: str, judged: str) -> None:
    code, out, _ = run("analyze", dev_paste(paste), "--format", "json")
    gate = json.loads(out)["gate"]
    assert (code, gate["verdict"]) == (ExitCode.OK, "pass")
    assert any(j.startswith(judged) for j in gate["judged"]), gate["judged"]
    _, console, _ = run("analyze", dev_paste(paste))
    assert "judged: " + judged in " ".join(console.split())


def test_an_info_finding_alone_makes_no_verdict(run: Run) -> None:
    """The start-up lines name no model: model-unknown is info, and it does not turn nothing into a PASS."""
    _, out, _ = run("analyze", dev_paste(START_UP), "--format", "json")
    data = json.loads(out)
    assert {f["severity"] for f in data["findings"]} <= {"info"} and data["verdict"] == "not judged"


def test_a_saved_not_judged_report_edited_to_pass_is_refused(run: Run, tmp_path: Path) -> None:
    _, out, _ = run("analyze", dev_paste(RINGS_ONLY), "--format", "json")
    data = json.loads(out)
    data["verdict"] = data["gate"]["verdict"] = "pass"
    edited = tmp_path / "report.json"
    edited.write_text(json.dumps(data))
    code, _, err = run("report", str(edited))
    assert code == ExitCode.UNUSABLE
    assert "its gate says 'pass' but its findings make it not judged" in err


def test_a_tuning_setting_on_the_command_line_judges_nothing_of_the_box(run: Run, tmp_path: Path) -> None:
    """NVIDIA/nccl-tests#270: `NCCL_ALGO=RING ... all_reduce_perf -g 8` and its header, cut before any row. The
    setting says how the run was asked to go, not what the box is: not judged. A setting that switches peer access
    off does say what the run's GPUs talk over, and is judged."""
    code, out, _ = run("analyze", dev_paste("nccl-tests-270-4090x8-allreduce-header-only"), "--format", "json")
    data = json.loads(out)
    assert code == ExitCode.OK and data["verdict"] == "not judged"
    assert "nccl-env-override" in {f["code"] for f in data["findings"]}  # still said, at info
    text = Path(dev_paste("nccl-tests-270-4090x8-allreduce-header-only")).read_text()
    off = tmp_path / "p2p-off.txt"
    off.write_text(text.replace("NCCL_ALGO=RING ", "NCCL_P2P_DISABLE=1 ", 1))
    data = json.loads(run("analyze", str(off), "--format", "json")[1])
    assert data["verdict"] == "warn" and "1 known message" in data["gate"]["judged"]


@pytest.mark.parametrize(
    "paste_id",
    ["lightning-18760-48rank-worker2-nccl-init-ib-hca", "nccl-1588-2x-h20-mpirun-env-overrides-cmd"],
)
def test_a_setting_the_catalog_knows_does_no_harm_judges_nothing(run: Run, paste_id: str) -> None:
    """Lightning-AI/pytorch-lightning#18760 (NCCL's start-up as far as `NCCL_IB_HCA set to mlx5`) and NVIDIA/nccl#1588
    (an mpirun line with `-x NCCL_P2P_LEVEL=NVL`): before, PASS over "1 known message". Nothing in either paste
    shows the box, so neither is a PASS, and no finding of either is above info."""
    code, out, _ = run("analyze", dev_paste(paste_id), "--format", "json")
    data = json.loads(out)
    assert code == ExitCode.OK and data["verdict"] == "not judged" and data["gate"]["judged"] == []
    assert {f["severity"] for f in data["findings"]} <= {"info"}
