"""`topoaudit healthcheck` without Slurm: the cached result and its age, judging only (--no-drain), the
sentence when scontrol is missing, and the drain reason's form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakebox import make_box

from topoaudit.app.healthcheck import NodeState, _fields
from topoaudit.cli import main
from topoaudit.fleet.drain import MAX_REASON_CHARS, reason_line


def healthcheck(capsys: pytest.CaptureFixture[str], root: Path, cache: Path, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(["healthcheck", "--sysfs-root", str(root), "--smi-timeout", "2", "--cache", str(cache), *args])
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_a_fresh_cached_result_is_reused_and_an_old_one_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    box = make_box("nvlink-down", tmp_path, monkeypatch)
    cache = tmp_path / "last.json"
    code, out, _ = healthcheck(capsys, box.root, cache, "--no-drain", "--node", "gpu-node-7")
    assert code == 1 and "probed now" in out and "topoaudit: nvlink-" in out
    assert json.loads(cache.read_text())["verdict"] == "fail"  # the full report, for later checks

    healthy = make_box("hgx-h100", tmp_path / "healed", monkeypatch)  # the box changed; the cache did not
    code, out, _ = healthcheck(capsys, healthy.root, cache, "--no-drain", "--node", "gpu-node-7")
    assert code == 1 and "cached" in out  # within --max-age: the cached verdict, not a new probe

    saved = json.loads(cache.read_text())
    saved["generated_at"] = "2020-01-01T00:00:00+00:00"  # the result's own time says how old it is
    cache.write_text(json.dumps(saved))
    code, out, _ = healthcheck(capsys, healthy.root, cache, "--no-drain", "--max-age", "600")
    assert code == 0 and "probed now" in out
    assert json.loads(cache.read_text())["verdict"] == "pass"


def test_a_result_judged_under_other_options_is_judged_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    box = make_box("hgx-h100", tmp_path, monkeypatch)
    cache = tmp_path / "last.json"
    code, _, _ = healthcheck(capsys, box.root, cache, "--no-drain")
    assert code == 0
    code, out, _ = healthcheck(capsys, box.root, cache, "--no-drain", "--expect-gpus", "16")
    assert code == 1 and "probed now" in out and "topoaudit: expectation-not-met Expected 16 GPUs" in out
    code, out, _ = healthcheck(capsys, box.root, cache, "--no-drain", "--expect-gpus", "16")
    assert code == 1 and "cached" in out


def test_a_result_judged_by_a_policy_is_reused_under_that_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    box = make_box("hgx-h100", tmp_path, monkeypatch)
    cache = tmp_path / "last.json"
    policy = ("--no-drain", "--policy", "builtin:hgx-8gpu")
    code, out, _ = healthcheck(capsys, box.root, cache, *policy)
    assert code == 0 and "probed now" in out and "policy 'hgx-8gpu'" in out
    code, out, _ = healthcheck(capsys, box.root, cache, *policy)
    assert code == 0 and "cached" in out


def test_a_cache_that_cannot_be_written_does_not_stop_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    box = make_box("nvlink-down", tmp_path, monkeypatch)
    code, out, err = healthcheck(capsys, box.root, tmp_path / "no-such-dir" / "last.json", "--no-drain")
    assert code == 1 and "FAIL" in out and "result not cached: " in out and "no-such-dir" in out
    assert "Traceback" not in err


def test_draining_without_scontrol_is_refused_in_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    box = make_box("nvlink-down", tmp_path, monkeypatch)  # PATH holds only the fake nvidia-smi and /usr/bin:/bin
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    code, _, err = healthcheck(capsys, box.root, tmp_path / "last.json")
    assert code == 4
    assert "scontrol, which is not on PATH" in err and "--no-drain" in err and "Traceback" not in err


def test_no_driver_is_an_unhealthy_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    box = make_box("no-driver", tmp_path, monkeypatch)
    cache = tmp_path / "last.json"
    code, out, _ = healthcheck(capsys, box.root, cache, "--no-drain")
    assert code == 4 and "FAIL" in out and "topoaudit: probe failed: " in out
    assert not cache.exists()  # nothing judged, nothing cached


def test_reason_is_one_line_without_quotes_and_cut_to_fit() -> None:
    reason = reason_line('GPU3 "link 5"\nis down\\really ' + "x" * 400, " (+2 more)")
    assert reason.startswith("topoaudit: GPU3 'link 5' is down/really")
    assert "\n" not in reason and '"' not in reason
    assert len(reason) == MAX_REASON_CHARS and reason.endswith("... (+2 more)")


def test_scontrol_oneliner_is_read_with_its_free_text_reason() -> None:
    line = (
        "NodeName=vm Arch=x86_64 OS=Linux 6.1 #1 SMP @0  State=IDLE+DRAIN ThreadsPerCore=1 Partitions=debug "
        "CapWatts=n/a Reason=topoaudit: nvlink-link-down GPU3 link=3 down [root@2026-12-01T12:35:40]"
    )
    fields = _fields(line)
    state = NodeState("vm", fields["State"], fields["Reason"])
    assert state.reason == "topoaudit: nvlink-link-down GPU3 link=3 down"
    assert state.drained and state.drained_by_us
    assert not NodeState("vm", "MIXED+DRAIN", "NHC: check_hw_ib").drained_by_us
    assert not NodeState("vm", "IDLE", "").drained
