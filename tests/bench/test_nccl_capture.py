"""NCCL's view collected while the bench measures: the environment it would set for NCCL (a pure function), the
user's own variables respected, the files read back as evidence and the per-rank logs handed to the NCCL log
reader; on gloo nothing of it is set."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from topoaudit.bench.config import BenchConfig
from topoaudit.bench.nccl_capture import DEBUG_SUBSYSTEMS, nccl_view, plan_capture, read_capture
from topoaudit.model.nccl import NcclView
from topoaudit.model.values import Unsupported

NCCL_LOGS = Path(__file__).parent.parent / "fixtures" / "nccl"
TWO_A100 = NCCL_LOGS / "ncclinfo-a100sxm4-2gpu-p2p-direct-read-24ch-container-1.txt"
CAPTURE_VARS = ("NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "NCCL_TOPO_DUMP_FILE", "NCCL_GRAPH_DUMP_FILE")


def test_nccl_is_asked_for_its_info_log_per_rank_and_both_dumps_into_the_run() -> None:
    capture = plan_capture("/run/x", {"PATH": "/bin", "NCCL_IB_HCA": "mlx5_0"})
    env = dict(capture.env)
    assert tuple(env) == CAPTURE_VARS and capture.kept == () and capture.notes == ()
    assert env["NCCL_DEBUG"] == "INFO"
    assert env["NCCL_DEBUG_FILE"] == "/run/x/nccl-debug.%h.%p.log"  # NCCL puts host and pid: one file per rank
    assert env["NCCL_TOPO_DUMP_FILE"] == "/run/x/nccl-topo.xml"
    assert env["NCCL_GRAPH_DUMP_FILE"] == "/run/x/nccl-graph.xml"
    subsystems = set(env["NCCL_DEBUG_SUBSYS"].split(","))
    assert {"INIT", "GRAPH", "ENV", "NET", "P2P", "SHM", "NVLS", "TUNING"} <= subsystems
    assert not subsystems & {"COLL", "CALL", "PROXY"}  # per-call lines would print inside the timed loop


def test_variables_the_user_set_are_theirs_and_the_run_says_so() -> None:
    user = {"NCCL_DEBUG": "WARN", "NCCL_DEBUG_FILE": "/scratch/nccl.%h.log", "NCCL_TOPO_DUMP_FILE": "/scratch/t.xml"}
    capture = plan_capture("/run/x", user)
    assert [k for k, _ in capture.env] == ["NCCL_DEBUG_SUBSYS", "NCCL_GRAPH_DUMP_FILE"]
    assert dict(capture.kept) == user
    assert capture.notes == (
        "NCCL capture: NCCL_DEBUG=WARN was set by the user and is used as set",
        "NCCL capture: NCCL_DEBUG_FILE=/scratch/nccl.%h.log was set by the user and is used as set",
        "NCCL capture: NCCL_TOPO_DUMP_FILE=/scratch/t.xml was set by the user and is used as set",
    )


def test_ranks_get_the_capture_on_nccl_only() -> None:
    capture = plan_capture("/run/x", {})
    config = BenchConfig(env=(("GLOO_SOCKET_IFNAME", "lo"),), nccl_capture=capture)
    assert config.rank_env("gloo") == (("GLOO_SOCKET_IFNAME", "lo"),)
    assert config.rank_env("nccl") == (("GLOO_SOCKET_IFNAME", "lo"), *capture.env)
    assert dict(config.rank_env("nccl"))["NCCL_DEBUG_SUBSYS"] == DEBUG_SUBSYSTEMS
    assert BenchConfig().rank_env("nccl") == ()


def test_the_files_nccl_wrote_come_back_and_the_rank_logs_are_read_as_one_view(tmp_path: Path) -> None:
    """A real two-GPU log split into the two per-rank files NCCL_DEBUG_FILE=...%h.%p would give."""
    run, elsewhere = tmp_path / "run", tmp_path / "user"
    run.mkdir()
    elsewhere.mkdir()
    lines = TWO_A100.read_text(encoding="utf-8").splitlines(keepends=True)
    (run / "nccl-debug.3767c65d25c4.887.log").write_text("".join(x for x in lines if "] NCCL" not in x or "[0]" in x))
    (run / "nccl-debug.3767c65d25c4.888.log").write_text("".join(x for x in lines if "[1] NCCL" in x))
    (run / "nccl-graph.xml").write_text('<graphs version="1"/>\n')
    (elsewhere / "topo.xml").write_text('<system version="1"/>\n')
    capture = plan_capture(str(run), {"NCCL_TOPO_DUMP_FILE": str(elsewhere / "topo.xml")})
    files = read_capture(capture)
    assert sorted(files) == [
        "nccl-debug.3767c65d25c4.887.log",
        "nccl-debug.3767c65d25c4.888.log",
        "nccl-graph.xml",
        "topo.xml",  # the user's dump, where they pointed it
    ]
    view = nccl_view(files)
    assert isinstance(view, NcclView)
    assert {(t.src_rank, t.dst_rank, t.via) for t in view.transports} == {
        (0, 1, "P2P/direct pointer/read"),
        (1, 0, "P2P/direct pointer/read"),
    }


def test_no_log_or_no_nccl_line_is_a_reason_not_a_view() -> None:
    none = nccl_view({"nccl-topo.xml": b"<system/>"})
    assert isinstance(none, Unsupported) and "no INFO log" in none.reason
    garbage = nccl_view({"nccl-debug.h.1.log": b"hello\n"})
    assert isinstance(garbage, Unsupported) and "no NCCL_DEBUG=INFO line" in garbage.reason


@pytest.mark.slow
def test_a_gloo_run_sets_nothing_of_it_and_brings_no_files() -> None:
    pytest.importorskip("torch")
    from topoaudit.bench import run_bench_with_nccl_view

    config = BenchConfig(backend="gloo", nproc=2, min_bytes=8, max_bytes=64, target_s=0.01, warmup=1, timeout_s=10.0)
    result, files = run_bench_with_nccl_view(config)
    assert result is not None and result.status == "complete" and files == {}
    assert not any(key in result.environment for key in CAPTURE_VARS)  # what the ranks ran with
    assert not any("NCCL capture" in note for note in result.notes)


def test_bench_reports_busbw_beside_nccls_choice_and_the_bundle_carries_the_raw_files(
    run: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The use case and the command around a sweep on NCCL (the sweep itself needs GPUs: its result and the files
    NCCL wrote are given): the report has both views, the bundle's evidence/ has NCCL's own files."""
    import report_samples as rs

    from topoaudit.app import bench as app
    from topoaudit.bench import launch

    log = TWO_A100.read_bytes()
    files = {"nccl-debug.3767c65d25c4.880.log": log, "nccl-topo.xml": b'<system version="1"/>\n'}
    monkeypatch.setattr(launch, "run_bench_with_nccl_view", lambda config, progress=None: (rs.bench_result(2), files))
    monkeypatch.setattr(app, "_probed_machine", lambda: None)
    bundle = tmp_path / "bench-run"
    code, out, err = run("bench", "--format", "json", "--out", str(bundle))
    report = json.loads(out)
    assert code == report["gate"]["exit_code"] and "Traceback" not in err
    assert report["bench"]["groups"][0]["plateau_busbw_gbps"] > 0
    assert {(t["src_rank"], t["dst_rank"], t["via"]) for t in report["nccl"]["transports"]} == {
        (0, 1, "P2P/direct pointer/read"),
        (1, 0, "P2P/direct pointer/read"),
    }
    assert (bundle / "evidence" / "nccl-debug.3767c65d25c4.880.log").read_bytes() == log
    assert (bundle / "evidence" / "nccl-topo.xml").is_file()
