"""`topoaudit fleet` as a user runs it: the verdict and exit code, the host lines, groups, outliers,
duplicates, stale and missing nodes, and the drain list."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
from cli_runner import Run
from fleet_nodes import node_report, write_report, write_topo

from topoaudit.app import fleet as app
from topoaudit.fleet.drain import reason_line
from topoaudit.fleet.inputs import expand_hostlist


def _healthy_fleet(directory: Path, hosts: int = 5) -> None:
    for k in range(hosts):  # run-to-run noise of a few tenths of a percent, as real sweeps have
        write_report(directory, f"gpu{k + 1:02d}", busbw_scale=1.0 + 0.002 * (k % 3))


def test_a_healthy_fleet_passes_with_one_pass_line_per_host(tmp_path: Path, run: Run) -> None:
    _healthy_fleet(tmp_path)
    code, out, _ = run("fleet", str(tmp_path))
    assert code == 0
    assert out.startswith("topoaudit fleet: PASS (exit 0)")
    assert [line for line in out.splitlines() if " | " in line] == [f"gpu{k:02d} | PASS" for k in range(1, 6)]
    assert "Drain list (0 nodes)" in out


def test_a_damaged_node_fails_the_fleet_and_is_drained_with_a_topoaudit_reason(tmp_path: Path, run: Run) -> None:
    for host in ("h100-a", "h100-b", "h100-c"):
        write_topo(tmp_path, host)
    write_topo(tmp_path, "h100-d", degraded=True)
    code, out, _ = run("fleet", str(tmp_path))
    assert code == 1
    # its own finding, and the fleet's: the pair's link count is far from the group's
    assert "h100-d | FAIL: nvlink-degraded, fleet-figure-outlier" in out.splitlines()
    assert "h100-d: NVLinks GPU3-GPU5 12 links, group median 18 links, ratio 0.67 (low, 4 nodes)" in out
    assert "h100-a | PASS" in out.splitlines()
    drains = [line.strip() for line in out.splitlines() if line.strip().startswith("scontrol ")]
    assert len(drains) == 1
    assert re.fullmatch(
        r'scontrol update nodename=h100-d state=drain reason="topoaudit: nvlink-degraded [^"]+ \(\+1 more\)"', drains[0]
    )


def test_a_slow_node_is_named_with_its_figure_the_group_median_and_the_ratio(tmp_path: Path, run: Run) -> None:
    _healthy_fleet(tmp_path)
    write_report(tmp_path, "gpu06", busbw_scale=0.7)
    code, out, _ = run("fleet", str(tmp_path), "--format", "json")
    assert code == 1
    report = json.loads(out)
    slow = [o for o in report["outliers"] if o["host"] == "gpu06"]
    assert slow and {o["host"] for o in report["outliers"]} == {"gpu06"}  # the noisy healthy nodes are not named
    largest = max(slow, key=lambda o: o["value"])
    assert largest["direction"] == "low"
    assert abs(largest["ratio"] - 0.7) < 0.01
    assert largest["median"] > largest["value"]
    assert report["outlier_rule"].startswith("median and MAD per hardware group")
    node = next(n for n in report["nodes"] if n["host"] == "gpu06")
    assert node["status"] == "fail" and "fleet-figure-outlier" in node["codes"]
    assert [d["host"] for d in report["drain"]] == ["gpu06"]
    assert report["drain"][0]["reason"].startswith("topoaudit: fleet-figure-outlier busbw all @ ")


def test_the_console_states_the_outlier_rule(tmp_path: Path, run: Run) -> None:
    _healthy_fleet(tmp_path)
    write_report(tmp_path, "gpu06", busbw_scale=0.7)
    _, out, _ = run("fleet", str(tmp_path))
    words = " ".join(out.split())  # the rule is prose, wrapped at the terminal's width
    assert "median and MAD per hardware group" in words
    assert "3.5 x max(1.4826 x MAD, 2% of the median; 0.25 link for link counts)" in words
    assert re.search(
        r"gpu06: busbw all @ \S+ \S+ [\d.]+ GB/s, group median [\d.]+ GB/s, ratio 0\.70 \(low, 6 nodes\)", words
    )


def test_two_nodes_claiming_one_gpu_uuid_fail_the_fleet_without_draining(tmp_path: Path, run: Run) -> None:
    _healthy_fleet(tmp_path, hosts=3)
    write_report(tmp_path, "gpu09", uuid_of="gpu01")
    code, out, _ = run("fleet", str(tmp_path))
    assert code == 1
    assert "gpu01 | FAIL: fleet-duplicate-identity" in out and "gpu09 | FAIL: fleet-duplicate-identity" in out
    # one finding for the copied report, not one per GPU: its first identity and how many more
    duplicates = [line for line in out.splitlines() if "[fail] fleet-duplicate-identity" in line]
    assert len(duplicates) == 1
    assert "GPU UUID GPU-gpu01-0 and 7 more GPU identities (8 GPU UUIDs) are reported by 2 nodes: gpu01, gpu09" in (
        " ".join(out.split())
    )
    assert "Drain list (0 nodes)" in out


def test_an_old_report_is_stale_a_warning_that_strict_turns_into_exit_3(tmp_path: Path, run: Run) -> None:
    _healthy_fleet(tmp_path, hosts=3)
    write_report(tmp_path, "gpu04", generated_at="2026-11-27T10:00:00+00:00")
    code, out, _ = run("fleet", str(tmp_path))
    assert code == 0
    assert "gpu04 | PASS (warnings: fleet-stale-report)" in out
    assert "gpu04's report is 4.0 days older than the newest (limit 1.0 days)" in out
    assert run("fleet", str(tmp_path), "--strict")[0] == 3
    assert run("fleet", str(tmp_path), "--max-report-age", "200")[0] == 0


def test_expected_nodes_that_never_reported_are_missing(tmp_path: Path, run: Run) -> None:
    _healthy_fleet(tmp_path, hosts=3)
    code, out, _ = run("fleet", str(tmp_path), "--expect-nodes", "gpu[01-04]")
    assert code == 1
    assert "gpu04 | MISSING: no report" in out
    _, out, _ = run("fleet", str(tmp_path), "--expect-nodes", "gpu[01-04]", "--format", "json")
    assert [(f["code"], f["severity"]) for f in json.loads(out)["findings"] if "gpu04" in f["message"]] == [
        ("fleet-node-missing", "fail")
    ]
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("# the allocation\ngpu[01-03]\n", encoding="utf-8")
    assert run("fleet", str(tmp_path / "gpu0*.json"), "--expect-nodes", str(hosts))[0] == 0


def test_slurm_host_lists_expand_with_their_zero_padding() -> None:
    assert expand_hostlist("gpu[008-010,12],login1") == ["gpu008", "gpu009", "gpu010", "gpu12", "login1"]
    assert expand_hostlist("r[1-2]n[1-2]") == ["r1n1", "r1n2", "r2n1", "r2n2"]


def test_a_mixed_fleet_shows_each_hardware_group(tmp_path: Path, run: Run) -> None:
    _healthy_fleet(tmp_path, hosts=3)
    for host in ("h100-a", "h100-b"):
        write_topo(tmp_path, host)
    code, out, _ = run("fleet", str(tmp_path), "--format", "json")
    groups = {g["gpu_model"]: len(g["hosts"]) for g in json.loads(out)["groups"]}
    assert code == 0
    assert groups == {"NVIDIA A100-SXM4-40GB": 3, "unknown model": 2}


def test_an_unreadable_node_is_an_error_line_and_fails_the_fleet(tmp_path: Path, run: Run) -> None:
    _healthy_fleet(tmp_path, hosts=3)
    (tmp_path / "gpu07.txt").write_text("not a capture\n", encoding="utf-8")
    code, out, _ = run("fleet", str(tmp_path))
    assert code == 1
    assert re.search(r"^gpu07 \| ERROR: .*gpu07\.txt: not a format topoaudit reads", out, re.M)
    _, out, _ = run("fleet", str(tmp_path), "--format", "json")
    assert [f["code"] for f in json.loads(out)["findings"] if "gpu07" in f["message"]] == ["fleet-node-unreadable"]


def test_no_node_input_is_exit_4_with_a_sentence(tmp_path: Path, run: Run) -> None:
    code, _, err = run("fleet", str(tmp_path))
    assert code == 4 and "no node reports found" in err
    (tmp_path / "notes.txt").write_text("not a capture\n", encoding="utf-8")
    code, _, err = run("fleet", str(tmp_path))
    assert code == 4 and "none of the 1 node input(s) could be judged; the first: " in err
    code, _, err = run("fleet", str(tmp_path / "nothing-*.json"))
    assert code == 4 and "matches no file" in err


def test_a_bundle_directory_is_one_node_named_by_the_report_inside(tmp_path: Path, run: Run) -> None:
    for host in ("gpu01", "gpu02"):
        bundle = tmp_path / f"bundle-{host}"
        bundle.mkdir()
        (bundle / "report.json").write_text(json.dumps(node_report(host)), encoding="utf-8")
        (bundle / "evidence").mkdir()
        (bundle / "evidence" / "stdin.txt").write_text("raw input\n", encoding="utf-8")
    code, out, _ = run("fleet", str(tmp_path))
    assert code == 0
    assert [line for line in out.splitlines() if " | " in line] == ["gpu01 | PASS", "gpu02 | PASS"]


def test_apply_runs_scontrol_with_the_reason_and_reports_each_result(
    tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet_dir = tmp_path / "fleet"
    fleet_dir.mkdir()
    _healthy_fleet(fleet_dir)
    write_report(fleet_dir, "gpu06", busbw_scale=0.7)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "scontrol.log"
    fake = bin_dir / "scontrol"
    fake.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done >> {log}\n', encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env_path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    monkeypatch.setenv("PATH", env_path)
    code, out, _ = run("fleet", str(fleet_dir), "--apply")
    assert code == 1
    args = log.read_text(encoding="utf-8").splitlines()
    assert args[:3] == ["update", "nodename=gpu06", "state=drain"]
    assert args[3].startswith("reason=topoaudit: fleet-figure-outlier busbw all @ ")
    assert len(args) == 4
    assert "applied with scontrol (--apply)" in out and "gpu06: exit 0: ok" in out


def test_without_apply_nothing_runs(tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    _healthy_fleet(tmp_path)
    write_report(tmp_path, "gpu06", busbw_scale=0.7)
    monkeypatch.setenv("PATH", str(tmp_path / "no-such-bin"))  # scontrol would not even be found
    code, out, _ = run("fleet", str(tmp_path))
    assert code == 1 and "printed, not run" in out


def test_apply_without_scontrol_is_exit_4(tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    _healthy_fleet(tmp_path)
    write_report(tmp_path, "gpu06", busbw_scale=0.7)
    monkeypatch.setenv("PATH", str(tmp_path / "no-such-bin"))
    code, _, err = run("fleet", str(tmp_path), "--apply")
    assert code == 4 and "scontrol" in err


def test_two_processes_judge_the_same_fleet_the_same_way(tmp_path: Path) -> None:
    _healthy_fleet(tmp_path)
    write_report(tmp_path, "gpu06", busbw_scale=0.7)
    write_topo(tmp_path, "h100-d", degraded=True)
    one = app.fleet(app.FleetRequest(paths=(str(tmp_path),)))
    two = app.fleet(app.FleetRequest(paths=(str(tmp_path),), jobs=2))
    assert one.nodes == two.nodes and one.outliers == two.outliers and one.drain == two.drain


def test_a_node_reporting_its_full_name_counts_for_its_short_name(tmp_path: Path, run: Run) -> None:
    for host in ("gpu01.cluster.local", "gpu02.cluster.local", "gpu03.cluster.local"):
        write_report(tmp_path, host)
    code, out, _ = run("fleet", str(tmp_path), "--expect-nodes", "gpu[01-03]")
    assert code == 0 and "MISSING" not in out


def test_a_drain_reason_is_one_line_without_double_quotes_and_short_enough_for_slurm() -> None:
    reason = reason_line('nvlink-degraded GPU3 "NV12"\n' + "x" * 400, " (+2 more)")
    assert reason.startswith("topoaudit: nvlink-degraded GPU3 'NV12' x")
    assert '"' not in reason and "\n" not in reason
    assert len(reason) == 200 and reason.endswith("... (+2 more)")
