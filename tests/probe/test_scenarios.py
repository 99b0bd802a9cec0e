"""Every scenario box through the whole live audit (fake NVML + fake sysfs + fake nvidia-smi): the domains,
finding codes, verdict and exit code a user would see, and `analyze snapshot.json` giving the same answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli as run
from fakebox import make_box
from fakenvml import SCENARIOS

from topoaudit.probe.snapshot import SNAPSHOT_SCHEMA_VERSION

ALL = sorted(p.stem for p in SCENARIOS.glob("*.toml"))
AUDITABLE = [n for n in ALL if n not in ("no-driver", "driver-not-loaded", "no-gpu-visible")]


def audit(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, dict, str]:
    code, out, err = run(
        capsys,
        "audit",
        "--format",
        "json",
        "--sysfs-root",
        str(root),
        "--smi-timeout",
        "2",
        "--call-timeout",
        "5",
        *args,
    )
    return code, (json.loads(out) if out.strip() else {}), err


@pytest.mark.parametrize("name", ALL)
def test_live_audit_outcome(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    box = make_box(name, tmp_path, monkeypatch)
    expect = box.expect
    code, report, err = audit(capsys, box.root)
    assert code == expect["exit_code"], err
    if code == 4:
        assert expect["message"] in err
        assert "--demo" in err and "analyze" in err  # points the user at what works without a driver
        assert "Traceback" not in err
        return
    assert [d["gpus"] for d in report["domains"]] == expect["domains"]
    assert sorted({f["code"] for f in report["findings"]}) == expect["codes"]
    assert report["verdict"] == expect["verdict"]
    assert report["source"]["kind"] == "live" and report["source"]["demo"] is False
    lost = [g["index"] for g in report["gpus"] if g["status"] != "ok"]
    assert lost == expect.get("lost", [])
    assert report["gate"]["incomplete"] == expect.get("incomplete", False)
    if "strict_exit_code" in expect:
        strict, _, _ = audit(capsys, box.root, "--strict")
        assert strict == expect["strict_exit_code"]


@pytest.mark.parametrize("name", AUDITABLE)
def test_analyze_of_the_snapshot_gives_the_live_verdict(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    box = make_box(name, tmp_path, monkeypatch)
    bundle = tmp_path / "run1"
    live_code, live, err = audit(capsys, box.root, "--out", str(bundle))
    snapshot = bundle / "evidence" / "snapshot.json"
    assert snapshot.is_file(), err
    monkeypatch.setenv("PATH", "/nonexistent")  # analysing needs neither NVML nor nvidia-smi
    code, out, _ = run(capsys, "analyze", str(snapshot), "--format", "json")
    again = json.loads(out)
    assert code == live_code
    for key in ("domains", "gate", "verdict", "skipped", "links", "gpus", "p2p", "host", "nics"):
        assert again[key] == live[key], key
    strip = lambda fs: [(f["code"], f["severity"], f["message"], f["evidence"]) for f in fs]  # noqa: E731
    assert strip(again["findings"]) == strip(live["findings"])
    assert again["source"]["kind"] == "snapshot"


def test_probe_writes_a_snapshot_that_analyze_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    box = make_box("hgx-h100", tmp_path, monkeypatch)
    snap = tmp_path / "snapshot.json"
    code, _, err = run(capsys, "probe", "-o", str(snap), "--sysfs-root", str(box.root))
    assert code == 0 and "probed 8 GPU(s)" in err
    doc = json.loads(snap.read_text())
    assert doc["kind"] == "topoaudit-snapshot" and doc["schema_version"] == SNAPSHOT_SCHEMA_VERSION == 2
    assert [c["command"] for c in doc["commands"]] == ["nvidia-smi topo -m", "nvidia-smi nvlink -s"]
    assert doc["commands"][0]["text"].startswith("        GPU0")  # the raw text, verbatim
    code, out, _ = run(capsys, "analyze", str(snap), "--format", "json", "--expect-domain", "8", "--tp", "8")
    assert code == 0 and json.loads(out)["verdict"] == "pass"
