"""`topoaudit healthcheck` against a real Slurm (munged, slurmctld, slurmd started by the `slurm` fixture):
a faulty box (fake NVML scenario) drains its node with a `topoaudit:` reason that `sinfo -R` shows; a
healthy box resumes only a node this check drained, never another tool's drain."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fakebox import make_box
from slurm_cluster import SlurmCluster

from topoaudit.cli import main

pytestmark = pytest.mark.slurm


def healthcheck(
    box_name: str,
    slurm: SlurmCluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *args: str,
) -> tuple[int, str]:
    box = make_box(box_name, tmp_path / box_name, monkeypatch)
    monkeypatch.setenv("SLURM_CONF", str(slurm.conf))
    monkeypatch.delenv("SLURMD_NODENAME", raising=False)  # the node is found as `hostname -s`
    cache = tmp_path / f"{box_name}.json"
    with pytest.raises(SystemExit) as exc:
        main(["healthcheck", "--sysfs-root", str(box.root), "--smi-timeout", "2", "--cache", str(cache), *args])
    out, _ = capsys.readouterr()
    return int(exc.value.code or 0), out


@pytest.fixture
def idle_node(slurm: SlurmCluster) -> SlurmCluster:
    slurm.run("scontrol", "update", f"nodename={slurm.node}", "state=resume", check=False)
    assert slurm.reasons().strip() == ""
    return slurm


def test_a_faulty_box_drains_its_node_and_a_healthy_one_resumes_it(
    idle_node: SlurmCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = healthcheck("nvlink-down", idle_node, tmp_path, monkeypatch, capsys)
    assert code == 1, out
    reasons = idle_node.reasons()
    assert re.match(r"topoaudit: nvlink-(degraded|link-down) ", reasons), reasons
    assert reasons.rstrip().endswith(f"|{idle_node.node}")
    assert "drain" in idle_node.state()
    assert "slurm: drained" in out

    with monkeypatch.context() as healthy:
        code, out = healthcheck("hgx-h100", idle_node, tmp_path, healthy, capsys)
    assert code == 0, out
    assert "resumed" in out
    assert idle_node.reasons().strip() == ""
    assert "drain" not in idle_node.state()


def test_another_tools_drain_is_neither_resumed_nor_overwritten(
    idle_node: SlurmCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    idle_node.run("scontrol", "update", f"nodename={idle_node.node}", "state=drain", "reason=NHC: check_hw_ib failed")
    with monkeypatch.context() as healthy:
        code, out = healthcheck("hgx-h100", idle_node, tmp_path, healthy, capsys)
    assert code == 0 and "left drained" in out
    assert idle_node.reasons().startswith("NHC: check_hw_ib failed|")
    code, out = healthcheck("nvlink-down", idle_node, tmp_path, monkeypatch, capsys)
    assert code == 1 and "another reason" in out
    assert idle_node.reasons().startswith("NHC: check_hw_ib failed|")
    assert "drain" in idle_node.state()


def test_a_node_slurm_does_not_know_is_named_in_one_sentence(
    idle_node: SlurmCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    box = make_box("hgx-h100", tmp_path, monkeypatch)
    monkeypatch.setenv("SLURM_CONF", str(idle_node.conf))
    with pytest.raises(SystemExit) as exc:
        main(["healthcheck", "--sysfs-root", str(box.root), "--cache", str(tmp_path / "c.json"), "--node", "gpu-999"])
    _, err = capsys.readouterr()
    assert exc.value.code == 4
    assert "scontrol show node failed" in err and "gpu-999" in err and "Traceback" not in err
