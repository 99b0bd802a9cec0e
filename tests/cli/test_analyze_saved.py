"""``analyze`` of a saved report or bundle judges it again with the request it was saved with (its --gpu-model,
--tp, --expect-*, --nics, policy, --fail-on and --strict, wherever the command line names none) and from every fact
it kept (its NCCL view and captures too); a finding the kept facts cannot judge again is carried as it was saved. A
saved FAIL never becomes exit 0 by re-reading."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cli_runner import Run

from topoaudit.exitcodes import ExitCode

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FIXTURES = Path(__file__).parents[1] / "fixtures"
NV12_PAIRS = str(FIXTURES / "topo" / "topo-8xh100nvl-nv12-pairs-2nic-sglang-1.txt")  # 8x H100 NVL, four NV12 pairs
A10_VM = str(FIXTURES / "topo" / "topo-4xa10-vm-all-sys-single-numa-1.txt")  # 4x A10, no NVLink, NICs far: warnings


def dev_paste(paste_id: str) -> str:
    real = FIXTURES / "real"
    parts = {p["id"]: p["part"] for p in tomllib.loads((real / "corpus.toml").read_text())["paste"]}
    assert parts[paste_id] == "dev", f"{paste_id} is held back"
    return str(real / "pastes" / f"{paste_id}.txt")


def test_a_bundle_keeps_its_own_tp_and_its_saved_fail(run: Run, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    assert run("analyze", NV12_PAIRS, "--tp", "8", "--out", str(bundle))[0] == ExitCode.FINDINGS
    code, out, err = run("analyze", str(bundle), "--format", "json")
    data = json.loads(out)
    assert code == ExitCode.FINDINGS and data["verdict"] == "fail"
    assert "tp-group-crosses-domain" in {f["code"] for f in data["findings"]}
    assert data["source"]["description"].endswith("judged with the report's own --tp 8")
    assert "tp-group-crosses-domain" in err
    code, _, _ = run("analyze", str(bundle), "--tp", "2")  # a question of the user's own is answered
    assert code == ExitCode.OK


def test_a_report_saved_with_fail_on_warn_still_exits_1(run: Run, tmp_path: Path) -> None:
    saved = tmp_path / "report.json"
    code, _, _ = run("analyze", A10_VM, "--nics", "2x100", "--fail-on", "warn", "--format", "json", "-o", str(saved))
    assert code == ExitCode.FINDINGS
    code, out, _ = run("analyze", str(saved), "--format", "json")
    again = json.loads(out)
    assert code == ExitCode.FINDINGS and again["options"]["fail_on"] == "warn"
    assert again["options"]["nics"]["source"] == "--nics 2x100"  # NIC placement stays judged for runs across nodes


def test_a_saved_nccl_log_report_keeps_its_nccl_findings(run: Run, tmp_path: Path) -> None:
    """NCCL's view is kept and judged again: the finding is this run's, not a copy."""
    saved = tmp_path / "report.json"
    assert run("analyze", dev_paste("nccl-1338-h800-nvls-invalid-arg"), "--format", "json", "-o", str(saved))[0] == 1
    code, out, _ = run("analyze", str(saved), "--format", "json")
    data = json.loads(out)
    assert code == ExitCode.FINDINGS and data["verdict"] == "fail"
    (nvls,) = [f for f in data["findings"] if f["code"] == "nccl-nvls-invalid-argument"]
    assert "carried_from_saved_report" not in nvls["evidence"]
    assert data["nccl"]["warnings"], "the NCCL view was dropped"


def test_a_saved_finding_the_kept_facts_cannot_judge_is_carried(run: Run, tmp_path: Path) -> None:
    """A report from a version with a signature this one lacks: its FAIL is not lost by reading it here."""
    saved = tmp_path / "report.json"
    run("analyze", NV12_PAIRS, "--format", "json", "-o", str(saved))
    data = json.loads(saved.read_text())
    data["findings"].insert(
        0,
        {
            "code": "xid-from-a-newer-version",
            "severity": "fail",
            "message": "Xid 79 on GPU 3 (line 12).",
            "evidence": {"line": 12},
            "remedy": "Reset the GPU.",
            "remedy_commands": [],
        },
    )
    data["gate"].update(verdict="fail", exit_code=1, reason="1 finding(s) at or above 'fail': xid-from-a-newer-version")
    data["verdict"] = "fail"
    saved.write_text(json.dumps(data))
    code, out, _ = run("analyze", str(saved), "--format", "json")
    report = json.loads(out)
    assert code == ExitCode.FINDINGS and report["verdict"] == "fail"
    (carried,) = [f for f in report["findings"] if f["code"] == "xid-from-a-newer-version"]
    assert carried["message"] == "Xid 79 on GPU 3 (line 12)." and carried["evidence"]["carried_from_saved_report"]
