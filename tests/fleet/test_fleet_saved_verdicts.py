"""A saved node report keeps what it was asked: the fleet judges it with its own --gpu-model, --tp and
--expect-* (the fleet's options win only where given), and says when its verdict differs from the saved one.
Also: a minority hardware group is a warning naming its nodes, and --color/--no-color work like elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import Run
from fleet_nodes import FIXTURES, write_snapshot

PASTE = FIXTURES / "topo-8xh100nvl-nv12-pairs-2nic-sglang-1.txt"  # 8x H100 NVL: four NV12 pairs


def _saved(run: Run, directory: Path, host: str, *args: str) -> Path:
    path = directory / f"{host}.json"
    code, _, err = run("analyze", str(PASTE), *args, "--format", "json", "-o", str(path))
    assert code == 1, err  # the node was saved as FAIL
    data = json.loads(path.read_text())
    assert data["verdict"] == "fail"
    data["host"]["hostname"] = host
    path.write_text(json.dumps(data))
    return path


def test_a_saved_fail_stays_fail_in_the_fleet(tmp_path: Path, run: Run) -> None:
    _saved(run, tmp_path, "node-model", "--gpu-model", "NVIDIA H200")
    _saved(run, tmp_path, "node-tp", "--tp", "8")
    code, out, _ = run("fleet", str(tmp_path), "--format", "json")
    report = json.loads(out)
    nodes = {n["host"]: n for n in report["nodes"]}
    assert code == 1 and {n["status"] for n in nodes.values()} == {"fail"}
    assert sorted(d["host"] for d in report["drain"]) == ["node-model", "node-tp"]
    assert nodes["node-model"]["group"].startswith("8x NVIDIA H200;")  # not "8x unknown model"
    assert nodes["node-model"]["judged_with"] == "the report's own --gpu-model 'NVIDIA H200'"
    assert nodes["node-tp"]["judged_with"] == "the report's own --tp 8"
    assert "tp-group-crosses-domain" in nodes["node-tp"]["codes"]
    assert all(n["saved_verdict"] == "fail" and n["note"] == "" for n in nodes.values())


def test_the_fleets_own_option_overrides_and_the_differing_verdict_is_explained(tmp_path: Path, run: Run) -> None:
    _saved(run, tmp_path, "node-tp", "--tp", "8")
    code, out, _ = run("fleet", str(tmp_path), "--tp", "2")
    assert "node-tp | PASS" in out.splitlines()  # the line people grep, whole: NV12 pairs are bridged by design
    note = " ".join(out.split("node-tp | ", 1)[1].split("\n\n", 1)[0].split())  # the note: indented lines below
    assert "saved FAIL, judged PASS here: the fleet's --tp 2 (the report was saved with --tp 8)" in note
    assert code == 0


def test_the_fleets_fail_on_is_named_when_it_changes_a_saved_verdict(tmp_path: Path, run: Run) -> None:
    _saved(run, tmp_path, "node-model", "--gpu-model", "NVIDIA H200")
    _, out, _ = run("fleet", str(tmp_path), "--fail-on", "info", "--format", "json")
    node = json.loads(out)["nodes"][0]
    assert node["status"] == "fail" and node["note"] == ""  # both FAIL: nothing to explain
    _, out, _ = run("fleet", str(tmp_path), "--gpu-model", "NVIDIA H100 NVL", "--format", "json")
    node = json.loads(out)["nodes"][0]
    assert node["saved_verdict"] == "fail" and node["status"] == "pass"
    assert node["note"].startswith("saved FAIL, judged ")
    assert (
        "the fleet's --gpu-model 'NVIDIA H100 NVL' (the report was saved with --gpu-model 'NVIDIA H200')"
        in (node["note"])
    )


def test_a_minority_hardware_group_is_a_warning_naming_the_odd_node(tmp_path: Path, run: Run) -> None:
    for k in range(3):
        write_snapshot(tmp_path, "snapshot-hgx-h100", f"h100-{k}")
    write_snapshot(tmp_path, "snapshot-hgx-h100", "v100-0")
    odd = tmp_path / "v100-0.snapshot.json"
    odd.write_text(odd.read_text().replace("NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB"))
    code, out, _ = run("fleet", str(tmp_path), "--format", "json")
    report = json.loads(out)
    minority = [f for f in report["findings"] if f["code"] == "fleet-hardware-minority"]
    assert [(f["hosts"], f["severity"]) for f in minority] == [(["v100-0"], "warn")]
    assert "1 node (v100-0) reports 8x Tesla V100-SXM2-32GB" in minority[0]["message"]
    assert "3 of 4 nodes report 8x NVIDIA H100 80GB HBM3" in minority[0]["message"]
    nodes = {n["host"]: n for n in report["nodes"]}
    assert "fleet-hardware-minority" in nodes["v100-0"]["warnings"] and not nodes["h100-0"]["warnings"]
    assert report["verdict"] == "warn" and code == 0


def test_two_equal_hardware_groups_are_no_minority(tmp_path: Path, run: Run) -> None:
    for k in range(2):
        write_snapshot(tmp_path, "snapshot-hgx-h100", f"h100-{k}")
        write_snapshot(tmp_path, "snapshot-hgx-h200", f"h200-{k}")
    _, out, _ = run("fleet", str(tmp_path), "--format", "json")
    assert "fleet-hardware-minority" not in out


def test_a_policy_says_what_the_fleet_should_be(tmp_path: Path, run: Run) -> None:
    for k in range(3):
        write_snapshot(tmp_path, "snapshot-hgx-h100", f"h100-{k}")
    write_snapshot(tmp_path, "snapshot-hgx-h200", "h200-0")
    policy = tmp_path.parent / "h100-only.toml"
    policy.write_text('[policy]\ndescription = "H100 nodes only"\n[expect]\ngpu_model = ["H100-SXM"]\n')
    code, out, err = run("fleet", str(tmp_path), "--policy", str(policy))
    assert code == 1, err
    assert "h200-0 | FAIL: expectation-not-met" in out.splitlines() and code == 1


@pytest.mark.parametrize("flag", ["--color", "--no-color"])
def test_fleet_takes_color_options_like_every_command(tmp_path: Path, run: Run, flag: str) -> None:
    write_snapshot(tmp_path, "snapshot-hgx-h100", "h100-0")
    code, out, err = run("fleet", str(tmp_path), flag)
    assert code == 0, err
    assert ("\x1b[" in out) == (flag == "--color")
    assert "h100-0 | " in out


def test_no_color_in_the_environment_is_honoured(tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    write_snapshot(tmp_path, "snapshot-hgx-h100", "h100-0")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = run("fleet", str(tmp_path))
    assert "\x1b[" not in out
    monkeypatch.delenv("NO_COLOR")
    _, out, _ = run("fleet", str(tmp_path))
    assert "\x1b[1;32mPASS\x1b[0m" in out
