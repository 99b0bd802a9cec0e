"""The bandwidth oracle: each figure with its source and kind, and every sweep judged against the figure of the
algorithm NCCL ran (NVLS against NVLS, ring against ring), on real nccl-tests captures and runs derived from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from topoaudit.bench.judge import judge_bench, ran_algorithm
from topoaudit.bench.oracle import Figure, Nics, expected_busbw
from topoaudit.catalog import GpuSpec, find_gpu
from topoaudit.cli import main
from topoaudit.model.values import Unsupported
from topoaudit.parse.nccl_tests import algorithm_in, parse_nccl_tests

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccltests"


def _spec(key: str) -> GpuSpec:
    spec = find_gpu(key)
    assert spec is not None
    return spec


def _analyze(path: Path | str, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    with pytest.raises(SystemExit):
        main(["analyze", str(path), "--format", "json", *args])
    return json.loads(capsys.readouterr().out)


# --- the table: every figure says where it comes from ------------------------------------------------------
@pytest.mark.parametrize(
    ("model", "gpus", "algo", "busbw", "kind", "cited"),
    [
        ("A100-SXM", 8, "ring", 235.0, "measured", "microsoft/superbenchmark"),
        ("H100-SXM", 8, "ring", 370.0, "measured", "NVIDIA/nccl-tests#212"),
        ("H100-SXM", 8, "nvls", 480.0, "measured", "NVIDIA/nccl-tests#212"),
        ("H200-SXM", 8, "ring", 367.61, "measured", "stas00/ml-engineering"),
        ("H200-SXM", 8, "nvls", 482.26, "measured", "NVIDIA/nccl-tests#272"),
        ("B200", 8, "nvls", 845.67, "measured", "NVIDIA/nccl#1807"),
        ("GB200", 72, "", 840.0, "measured", "coreweave/nccl-tests#43"),
        ("V100-SXM2", 8, "ring", 110.0, "gate", "nd40rs_v2.conf"),
        ("B200", 8, "ring", 721.8, "derived", "src/graph/topo.h"),
        ("H200-SXM", 8, "tree", 333.7, "derived", "src/graph/tuning.cc"),
    ],
)
def test_every_figure_names_its_source_and_kind(
    model: str, gpus: int, algo: str, busbw: float, kind: str, cited: str
) -> None:
    figure = expected_busbw(_spec(model), gpus, algorithm=algo)
    assert isinstance(figure, Figure)
    assert (figure.busbw_gbps, figure.kind) == (busbw, kind)
    assert cited in figure.source
    assert (figure.kind == "derived") == bool(figure.arithmetic)  # a derived figure says its sum


def test_derived_figures_say_their_arithmetic() -> None:
    ring = expected_busbw(_spec("B200"), 8, algorithm="ring")
    assert isinstance(ring, Figure) and ring.arithmetic == "18 NVLinks x 40.1 GB/s (sm100) = 721.8"
    tree = expected_busbw(_spec("A100-SXM"), 8, algorithm="tree")  # NCCL caps sm80 at 235, then tree x 0.9
    assert isinstance(tree, Figure) and tree.busbw_gbps == 211.5 and "capped at 235" in tree.arithmetic
    assert "derived" in ring.describe() and "721.8" in ring.describe()


def test_across_nodes_the_nics_set_the_figure() -> None:
    h100 = _spec("H100-SXM")
    slow_net = expected_busbw(h100, 8, nodes=4, nics=Nics(8, 200), algorithm="ring")
    assert isinstance(slow_net, Figure) and slow_net.busbw_gbps == 200.0  # 8 x 25 GB/s, below the node's 370
    assert "8 NICs x 25 GB/s" in slow_net.arithmetic and "NVIDIA/nccl#457" in slow_net.source
    fast_net = expected_busbw(h100, 8, nodes=4, nics=Nics(8, 400), algorithm="ring")
    assert isinstance(fast_net, Figure) and fast_net.busbw_gbps == 370.0  # the node's own ring is lower
    collnet = expected_busbw(h100, 8, nodes=2, nics=Nics(8, 400), algorithm="collnet")
    assert isinstance(collnet, Figure) and collnet.busbw_gbps == round(400 * 2 * 15 / 16 * 0.9, 1)
    unknown = expected_busbw(h100, 8, nodes=2)
    assert isinstance(unknown, Unsupported) and "NICs" in unknown.reason
    rack = expected_busbw(_spec("GB300"), 4, nodes=4, one_nvlink_domain=True)  # trays of one NVL72 rack
    assert isinstance(rack, Figure) and rack.busbw_gbps == 701.33


def test_no_figure_is_invented() -> None:
    a100_nvls = expected_busbw(_spec("A100-SXM"), 8, algorithm="nvls")  # A100 has no NVLS
    assert isinstance(a100_nvls, Unsupported) and "no public NVLS measurement" in a100_nvls.reason
    assert isinstance(expected_busbw(_spec("H100-SXM"), 8, nodes=2, nics=Nics(8, 400), algorithm="nvls"), Unsupported)
    assert isinstance(expected_busbw(_spec("H100-SXM"), 1), Unsupported)


# --- which algorithm ran -----------------------------------------------------------------------------------
def test_algorithm_from_tuning_lines_at_the_largest_size() -> None:
    text = (
        "h:1:1 [0] NCCL INFO 1048576 Bytes -> Algo 1 proto 2 time 30.0\n"
        "h:1:1 [0] NCCL INFO AllGather: 8589934592 Bytes -> Algo 1 proto 2 time 9.0\n"
        "h:1:1 [0] NCCL INFO 8589934592 Bytes -> Algo 4 proto 2 time 9000.0\n"
    )
    algo, evidence = algorithm_in(text, 8589934592) or ("", "")
    assert algo == "nvls" and evidence.startswith("line 3:")  # the all-gather line is not the all-reduce's
    assert algorithm_in("h:1:1 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo RING proto LL time 9.0", 1024) == (
        "ring",
        "line 1: h:1:1 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo RING proto LL time 9.0",
    )
    assert algorithm_in("NCCL_ALGO=Ring,Tree mpirun ./all_reduce_perf", 1 << 30) is None  # NCCL still chooses
    assert algorithm_in("mpirun -x NCCL_ALGO=NVLSTree ./all_reduce_perf", 1 << 30) == (
        "nvls_tree",
        "line 1: mpirun -x NCCL_ALGO=NVLSTree ./all_reduce_perf",
    )


def test_a_tuning_line_only_at_small_sizes_does_not_name_the_plateau_algorithm() -> None:
    assert algorithm_in("h:1:1 [0] NCCL INFO 65536 Bytes -> Algo 0 proto 0 time 37.8", 8 << 30) is None


def test_bench_environment_names_the_forced_algorithm() -> None:
    from topoaudit.app.bench import SweepRequest, bench_config
    from topoaudit.errors import UsageError

    config = bench_config(SweepRequest(algo="ring"))
    assert ("NCCL_ALGO", "Ring") in config.rank_env("nccl") and config.rank_env("gloo") == ()
    assert ("NCCL_ALGO", "NVLS") in bench_config(SweepRequest(algo="nvls")).rank_env("nccl")
    with pytest.raises(UsageError, match="--algo"):
        bench_config(SweepRequest(algo="pat"))
    parsed = parse_nccl_tests((FIXTURES / "derived-8xh200-slow-busbw-scaled.txt").read_text())
    import dataclasses

    forced = dataclasses.replace(parsed.result, environment={"NCCL_ALGO": "Ring"})
    assert ran_algorithm(forced) == ("ring", "NCCL_ALGO=Ring in the ranks' environment")


def test_bench_algo_option_is_offered_and_checked(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["bench", "--algo", "pat"])
    assert stop.value.code == 2 and "--algo" in capsys.readouterr().err


# --- NVLS against NVLS, ring against ring -------------------------------------------------------------------
def test_the_same_plateau_is_low_for_nvls_and_healthy_for_ring(capsys: pytest.CaptureFixture[str]) -> None:
    nvls = _analyze(FIXTURES / "derived-8xh200-nvls-tuning-340.txt", capsys)
    (below,) = [f for f in nvls["findings"] if f["code"] == "bench-below-expected"]
    assert below["severity"] == "warn" and below["evidence"]["expected_busbw_gbps"] == 482.26
    assert below["evidence"]["algorithm"] == "nvls" and "Algo 4" in below["evidence"]["algorithm_evidence"]
    assert (
        "NVIDIA/nccl-tests#272" in below["evidence"]["oracle_source"] and below["evidence"]["oracle_kind"] == "measured"
    )
    ring = _analyze(FIXTURES / "derived-8xh200-ring-env-340.txt", capsys)
    assert not [f for f in ring["findings"] if f["code"].startswith("bench-")]
    (group,) = ring["bench"]["groups"]
    assert group["expected_busbw_gbps"] == 367.61 and group["ratio"] == 0.925
    assert "ring" in group["expected_basis"] and "stas00/ml-engineering" in group["expected_basis"]


def test_a_ring_run_on_an_nvls_box_is_not_held_to_nvls() -> None:
    parsed = parse_nccl_tests((FIXTURES / "derived-8xh200-ring-env-340.txt").read_text())
    assert [f.code for f in judge_bench(parsed.result)] == []
    import dataclasses

    unstated = dataclasses.replace(parsed.result, environment={})
    assert [f.code for f in judge_bench(unstated)] == []  # not stated: the ring figure, never NVLS's


# --- every real capture, against its algorithm's figure, source in JSON and on the console ------------------
REAL = {
    # file: (expected GB/s or the reason there is none, verdict, codes from the bench judge)
    "nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt": (235.0, "pass", []),
    "nccltest-8x4090-p2p-disabled-stock-driver-1.txt": (14.45, "pass", []),
    "nccltest-8x4090-p2p-unlocked-tinygrad-driver-1.txt": (14.45, "pass", []),
    "nccltest-8x5090-p2p-patched-driver-nofooter-1.txt": (28.0, "warn", ["bench-incomplete"]),
    "nccltest-gb300-nvl-oci-4tray-16gpu-mnnvl-1.txt": (701.33, "pass", []),
    "nccltest-a3mega-h100-2node-16gpu-1.txt": ("NICs set the figure", "pass", []),
    "nccltest-a100-oci-bmgpu48-2node-10g-roce-1.txt": ("NICs set the figure", "pass", []),
    "nccltest-gh200-alps-2node-1gpu-each-slingshot-1.txt": ("NICs set the figure", "pass", []),
    "nccltest-rccl-mi355x-oci-8gpu-allreduce-trimmed-1.txt": ("model is unknown", "pass", []),
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_captures_judged_against_their_figure(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    expected, verdict, codes = REAL[name]
    doc = _analyze(FIXTURES / name, capsys)
    assert doc["gate"]["verdict"] == verdict
    assert sorted(f["code"] for f in doc["findings"] if f["code"].startswith(("bench-", "bandwidth-"))) == codes
    (group,) = doc["bench"]["groups"]
    if isinstance(expected, float):
        assert group["expected_busbw_gbps"] == expected
        assert group["expected_basis"].startswith("oracle: figure for") and "(measured at" in group["expected_basis"]
        assert any(n.startswith("expected busbw of group all:") for n in doc["bench"]["notes"])
    else:
        assert group["expected_busbw_gbps"]["status"] == "unsupported"
        assert expected in group["expected_busbw_gbps"]["reason"]


def test_console_shows_the_figure_and_its_source(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["analyze", str(FIXTURES / "nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt"), "--no-color"])
    out = " ".join(capsys.readouterr().out.split())
    assert "expected busbw of group all: figure for 8x NVIDIA A100 SXM4" in out
    assert "235 GB/s ring (measured at 16 GiB" in out and "microsoft/superbenchmark NDmv4 baseline.json" in out


def test_docs_bandwidth_table_is_what_the_oracle_gives() -> None:
    from topoaudit.bench.oracle import MARKER_BEGIN, MARKER_END, oracle_markdown

    doc = (Path(__file__).parents[2] / "docs" / "bandwidth.md").read_text(encoding="utf-8")
    table = doc.split(MARKER_BEGIN, 1)[1].split(MARKER_END, 1)[0].strip()
    assert table == oracle_markdown(), "regenerate docs/bandwidth.md from topoaudit.bench.oracle.oracle_markdown()"
    for cited in ("NVIDIA/nccl-tests#149", "NVIDIA/nccl-tests#212", "NVIDIA/nccl-tests#272", "coreweave/nccl-tests#43"):
        assert cited in doc
