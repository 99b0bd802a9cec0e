"""The bandwidth oracle: each figure with its source and kind, and every sweep judged against the figure of the
algorithm NCCL ran (NVLS against NVLS, ring against ring, NCCL's own choice where none is stated), on real
nccl-tests captures and runs derived from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.sweeps import sweep
from topoaudit.bench.judge import RunFacts, judge_bench, ran_algorithm, with_expectations
from topoaudit.bench.oracle import Figure, expected_busbw
from topoaudit.catalog import GpuSpec, find_gpu
from topoaudit.cli import main
from topoaudit.model.network import NcclVersion, NicSet
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
        ("B200", 8, "ring", 682.2, "measured", "stas00/ml-engineering"),
        ("GB200", 72, "", 840.0, "measured", "coreweave/nccl-tests#43"),
        ("V100-SXM2", 8, "ring", 110.0, "gate", "nd40rs_v2.conf"),
        ("B300", 8, "ring", 721.8, "derived", "src/graph/tuning.cc"),
        ("H200-SXM", 8, "tree", 298.5, "derived", "src/graph/tuning.cc"),
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


def test_derived_figures_say_their_arithmetic_and_the_releases_it_holds_for() -> None:
    ring = expected_busbw(_spec("B300"), 8, algorithm="ring")
    assert isinstance(ring, Figure) and ring.arithmetic == (
        "18 NVLinks x 40.1 GB/s (sm100; NCCL 2.27.5 and later: src/graph/topo.h@v2.27.5-1 SM100_NVLINK_BW) = 721.8"
    )
    assert ring.assumptions == ("NCCL version not reported: NCCL 2.30.7's arithmetic assumed",)
    tree = expected_busbw(_spec("A100-SXM"), 8, algorithm="tree")  # 12 x 20 = 240, x 0.92, x 7/8 in nccl-tests
    assert isinstance(tree, Figure) and tree.busbw_gbps == 193.2
    assert "x 0.92 (NCCL 2.18.3 and later: src/graph/tuning.cc@v2.18.3-1" in tree.arithmetic
    assert "x (n-1)/n = 7/8" in tree.arithmetic and "channel count" in tree.arithmetic
    assert "derived" in ring.describe() and "721.8" in ring.describe()


@pytest.mark.parametrize(
    ("version", "ring", "tree", "said"),
    [
        # 2.7.8: 12 x 21 (Volta's figure) = 252, capped at 235; tree x 0.9, capped at 110 on one node
        (NcclVersion(2, 7, 8), 235.0, 96.2, "src/graph/tuning.cc@v2.7.5-1: if (compCap80)"),
        # 2.10.3-2.17.1: 12 x 22 = 264, capped at 235; tree x 0.92
        (NcclVersion(2, 17, 1), 235.0, 189.2, "src/graph/topo.h@v2.10.3-1 SM80_NVLINK_WIDTH"),
        # 2.18.1: 12 x 20 = 240 and no cap
        (NcclVersion(2, 18, 1), 240.0, 193.2, "src/graph/topo.h@v2.18.1-1 SM80_NVLINK_BW"),
    ],
)
def test_a100_arithmetic_follows_the_nccl_release(version: NcclVersion, ring: float, tree: float, said: str) -> None:
    b300 = _spec("A100-SXM")
    import dataclasses

    no_band = dataclasses.replace(b300, busbw=())  # the measured band set aside: NCCL's own arithmetic
    got = expected_busbw(no_band, 8, algorithm="ring", nccl_version=version)
    assert isinstance(got, Figure) and got.busbw_gbps == ring and got.assumptions == ()
    assert said in got.arithmetic
    got_tree = expected_busbw(no_band, 8, algorithm="tree", nccl_version=version)
    assert isinstance(got_tree, Figure) and got_tree.busbw_gbps == tree


def test_hopper_ring_cap_of_2_17_1_and_per_link_figures_by_release() -> None:
    h20 = _spec("H20")  # 18 links on NVSwitch, no measured band
    assert expected_busbw(h20, 8, algorithm="ring", nccl_version=NcclVersion(2, 17, 1)).busbw_gbps == 370.0  # type: ignore[union-attr]
    assert expected_busbw(h20, 8, algorithm="ring", nccl_version=NcclVersion(2, 19, 3)).busbw_gbps == 360.0  # type: ignore[union-attr]
    assert expected_busbw(h20, 8, algorithm="ring", nccl_version=NcclVersion(2, 20, 3)).busbw_gbps == 370.8  # type: ignore[union-attr]
    b300 = _spec("B300")
    assert expected_busbw(b300, 8, algorithm="ring", nccl_version=NcclVersion(2, 26, 2)).busbw_gbps == 720.0  # type: ignore[union-attr]
    old = expected_busbw(b300, 8, algorithm="ring", nccl_version=NcclVersion(2, 21, 5))  # no SM100 constant yet
    assert isinstance(old, Figure) and old.busbw_gbps == 370.8 and "no SM100 constant yet" in old.arithmetic


def test_tree_pattern_and_channel_count_refine_the_tree_where_given() -> None:
    h20 = _spec("H20")
    plain = expected_busbw(h20, 8, algorithm="tree")
    fallen = expected_busbw(h20, 8, algorithm="tree", tree_pattern="tree")
    assert isinstance(plain, Figure) and isinstance(fallen, Figure)
    assert (
        fallen.busbw_gbps == round(plain.busbw_gbps * 0.85, 1) or abs(fallen.busbw_gbps - plain.busbw_gbps * 0.85) < 0.1
    )
    capped = expected_busbw(h20, 8, algorithm="tree", channels=8)  # 8 x 38.7 = 309.6 < 370.8 x 0.92
    assert isinstance(capped, Figure) and capped.busbw_gbps == round(309.6 * 7 / 8, 1)
    assert "8 channels x 38.7 GB/s" in capped.arithmetic


def test_across_nodes_the_nics_set_the_figure() -> None:
    h100 = _spec("H100-SXM")
    slow_net = expected_busbw(h100, 8, nodes=4, nics=NicSet(8, 200.0, "IB", "--nics 8x200"), algorithm="ring")
    assert isinstance(slow_net, Figure) and slow_net.busbw_gbps == 200.0  # 8 x 25 GB/s, below the node's 370.8
    assert "8 NICs x 25 GB/s" in slow_net.arithmetic and "NVIDIA/nccl#457" in slow_net.source
    assert not slow_net.warn_at_most and slow_net.warn_below_ratio == 0.86
    fast_net = expected_busbw(h100, 8, nodes=4, nics=NicSet(8, 400.0, "IB", "--nics 8x400"), algorithm="ring")
    assert isinstance(fast_net, Figure) and fast_net.busbw_gbps == 370.8  # the node's own ring is lower than 400
    assumed = expected_busbw(h100, 8, nodes=2)
    assert isinstance(assumed, Figure) and assumed.warn_at_most
    assert any("HGX H100 reference node" in a and "pass --nics" in a for a in assumed.assumptions)
    assert assumed.busbw_gbps == 319.8 and assumed.algorithm == "tree"  # the lower of ring 370.8 and tree
    no_reference = expected_busbw(_spec("GH200"), 1, nodes=2)
    assert isinstance(no_reference, Unsupported) and "NICs set the figure" in no_reference.reason
    rack = expected_busbw(_spec("GB300"), 4, nodes=18, one_nvlink_domain=True)  # trays of one NVL72 rack
    assert isinstance(rack, Figure) and rack.busbw_gbps == 937.0


def test_a_node_running_fewer_gpus_counts_its_share_of_the_nics() -> None:
    one_gpu = expected_busbw(
        _spec("H100-SXM"), 1, nodes=2, nics=NicSet(8, 400.0, "IB", "--nics 8x400"), algorithm="ring"
    )
    assert isinstance(one_gpu, Figure) and one_gpu.busbw_gbps == 50.0 and "1 of 8 NICs" in one_gpu.arithmetic


def test_collnet_and_nvls_tree_are_held_to_public_measurements_only() -> None:
    h100 = _spec("H100-SXM")
    nics = NicSet(8, 400.0, "IB", "--nics 8x400")
    collnet = expected_busbw(h100, 8, nodes=4, nics=nics, algorithm="collnet")
    assert isinstance(collnet, Figure) and (collnet.busbw_gbps, collnet.kind) == (450.0, "measured")
    assert "sku_baselines.md" in collnet.source
    nvls_tree = expected_busbw(h100, 8, nodes=2, nics=nics, algorithm="nvls_tree")
    assert isinstance(nvls_tree, Figure) and nvls_tree.busbw_gbps == 430.0 and "NVIDIA/nccl#1221" in nvls_tree.source
    other = expected_busbw(h100, 8, nodes=2, nics=NicSet(4, 200.0, "RoCE", "--nics 4x200"), algorithm="collnet")
    assert isinstance(other, Unsupported) and "no public CollNet measurement" in other.reason
    assert "src/graph/tuning.cc@v2.18.1-1" in other.reason


def test_no_figure_is_invented() -> None:
    a100_nvls = expected_busbw(_spec("A100-SXM"), 8, algorithm="nvls")  # A100 has no NVLS
    assert isinstance(a100_nvls, Unsupported) and "no public NVLS measurement" in a100_nvls.reason
    nvls = expected_busbw(_spec("H100-SXM"), 8, nodes=2, nics=NicSet(8, 400.0, "IB", "x"), algorithm="nvls")
    assert isinstance(nvls, Unsupported) and "NVLS-tree" in nvls.reason
    assert isinstance(expected_busbw(_spec("H100-SXM"), 1), Unsupported)


def test_no_figure_is_sourced_from_the_only_capture_it_judges() -> None:
    """A figure taken from one capture passes that capture by construction: it is shown, never used to judge."""
    from topoaudit.catalog import all_gpus

    for spec in all_gpus():
        for band in spec.busbw:
            assert not band.source.startswith("fixture "), (spec.key, band.source)
    gpu4090 = expected_busbw(_spec("RTX4090"), 8)
    assert isinstance(gpu4090, Unsupported) and "single self-measurement and cannot judge" in gpu4090.reason
    gb300 = expected_busbw(_spec("GB300"), 4, nodes=4, one_nvlink_domain=True)
    assert isinstance(gb300, Figure) and gb300.busbw_gbps == 721.8  # NCCL's ring arithmetic, not the capture
    assert any("single self-measurement, shown, not used to judge" in a for a in gb300.assumptions)


def test_with_no_algorithm_stated_the_figure_is_nccls_own_choice() -> None:
    h100 = expected_busbw(_spec("H100-SXM"), 8)
    assert isinstance(h100, Figure) and (h100.algorithm, h100.busbw_gbps, h100.lowest_gbps) == ("nvls", 480.0, 370.0)
    assert "picks NVLS" in h100.assumptions[0] and "nvls.cc@v2.18.1-1" in h100.assumptions[0]
    b200 = expected_busbw(_spec("B200"), 8)
    assert isinstance(b200, Figure) and (b200.algorithm, b200.busbw_gbps) == ("nvls", 845.67)
    before_nvls = expected_busbw(_spec("H100-SXM"), 8, nccl_version=NcclVersion(2, 16, 5))
    assert isinstance(before_nvls, Figure) and (before_nvls.algorithm, before_nvls.busbw_gbps) == ("ring", 370.0)
    assert "has no NVLS" in before_nvls.assumptions[0]
    a100 = expected_busbw(_spec("A100-SXM"), 8)
    assert isinstance(a100, Figure) and a100.algorithm == "ring"


def test_tolerance_comes_from_healthy_public_runs_and_provider_lines() -> None:
    from topoaudit.bench.oracle import HEALTHY_ACROSS_NODES, HEALTHY_ONE_DOMAIN, _figure_for, tolerance

    h100 = expected_busbw(_spec("H100-SXM"), 8, algorithm="nvls")
    assert isinstance(h100, Figure)
    ratio, why = tolerance(h100)
    assert ratio == 0.85 and "800 of 937" in why and "sku_baselines.md" in why
    for record in (*HEALTHY_ONE_DOMAIN, *HEALTHY_ACROSS_NODES):  # no healthy public run is judged low
        figure = expected_busbw(_spec(record.model), 8)  # for the tolerance of its scope
        scope = tolerance(_figure_for(record))[0]
        assert record.busbw_gbps >= scope * _figure_for(record).busbw_gbps, record
        assert isinstance(figure, Figure | Unsupported)
    gate = expected_busbw(_spec("V100-SXM2"), 8, algorithm="ring")
    assert isinstance(gate, Figure) and gate.warn_below_ratio == 1.0


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


def test_a_ring_run_on_an_nvls_box_is_held_to_the_ring_and_an_unstated_one_to_nvls() -> None:
    parsed = parse_nccl_tests((FIXTURES / "derived-8xh200-ring-env-340.txt").read_text())
    assert [f.code for f in judge_bench(parsed.result)] == []
    import dataclasses

    unstated = dataclasses.replace(parsed.result, environment={})  # NCCL picks NVLS on 8x H200: 340 is low
    (low,) = judge_bench(unstated)
    assert low.code == "bench-below-expected" and low.severity.value == "warn"
    assert "482.26 GB/s nvls figure for 8x NVIDIA H200 SXM (measured, NCCL's own choice here)" in low.message
    assert low.evidence["oracle_warn_below_ratio"] == 0.85


# --- every real capture, against its algorithm's figure, source in JSON and on the console ------------------
REAL = {
    # file: (expected GB/s or the reason there is none, verdict, codes from the bench judge)
    "nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt": (235.0, "pass", []),
    "nccltest-8x4090-p2p-disabled-stock-driver-1.txt": ("single self-measurement", "pass", []),
    "nccltest-8x4090-p2p-unlocked-tinygrad-driver-1.txt": ("single self-measurement", "pass", []),
    "nccltest-8x5090-p2p-patched-driver-nofooter-1.txt": (28.0, "pass", []),  # cut before its footer: an excerpt
    "nccltest-gb300-nvl-oci-4tray-16gpu-mnnvl-1.txt": (721.8, "pass", ["bench-sweep-dip"]),  # 64 MiB, at info
    # 2 nodes, algorithm not stated, NICs not printed: the reference node's assumed, the lower of ring and tree
    "nccltest-a3mega-h100-2node-16gpu-1.txt": (319.8, "pass", []),
    "nccltest-a100-oci-bmgpu48-2node-10g-roce-1.txt": (200.0, "pass", []),
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
        assert group["expected_basis"].startswith("oracle: figure for")
        assert "(measured at" in group["expected_basis"] or "(derived:" in group["expected_basis"]
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


# --- the runs the issue names, before and after ------------------------------------------------------------
H100 = "NVIDIA H100 80GB HBM3"
RING_ENV = "node00:1000:1000 [0] NCCL INFO NCCL_ALGO set by environment to Ring"
NVLS_ENV = "node00:1000:1000 [0] NCCL INFO NCCL_ALGO set by environment to NVLS"
NDR8 = NicSet(8, 400.0, "IB", "--nics 8x400")


def _judged(text: str, facts: RunFacts | None = None) -> list[tuple[str, str, str]]:
    result = parse_nccl_tests(text).result
    return [(f.severity.value, f.code, f.message) for f in judge_bench(result, facts=facts)]


@pytest.mark.parametrize(
    ("run", "facts", "verdict", "said"),
    [
        # 2 nodes of 8x H100 at 40 GB/s: NICs not named, the reference node's assumed: a warning, never a pass
        (sweep(H100, 2, 8, 40.0), None, "warn", "tree figure for 2 nodes x 8x NVIDIA H100 SXM5"),
        (sweep(H100, 2, 8, 40.0), RunFacts(NDR8), "fail", "319.8 GB/s tree figure for 2 nodes x 8x"),
        # NCCL_ALGO=Ring at 180 GB/s over 8x 400G per node: NCCL's arithmetic gives 370.8 (8 x 50, the node's ring)
        (sweep(H100, 2, 8, 180.0, extra=RING_ENV), RunFacts(NDR8), "fail", "49% of the 370.8 GB/s ring figure"),
        (sweep(H100, 2, 8, 180.0, extra=RING_ENV), None, "warn", "so it warns at most"),
        # NVLS that did not engage: 8x H100 and 8x B200 at their rings' speed with NCCL's default algorithm
        (sweep(H100, 1, 8, 370.0), None, "warn", "77% of the 480 GB/s nvls figure for 8x NVIDIA H100 SXM5"),
        (sweep(H100, 1, 8, 370.0, extra=NVLS_ENV), None, "warn", "NVLS did not engage"),
        (sweep("NVIDIA B200", 1, 8, 650.0), None, "warn", "77% of the 845.67 GB/s nvls figure for 8x NVIDIA B200"),
    ],
)
def test_runs_the_issue_names_do_not_pass(run: str, facts: RunFacts | None, verdict: str, said: str) -> None:
    ((severity, code, message),) = _judged(run, facts)
    assert (severity, code) == (verdict, "bench-below-expected")
    assert said in message


@pytest.mark.parametrize(
    ("run", "facts"),
    [
        (sweep(H100, 1, 8, 480.0), None),  # NVLS, NCCL's default (~480: sjeaugey in NVIDIA/nccl-tests#212)
        (sweep(H100, 1, 8, 370.0, extra=RING_ENV), None),  # the ring (~370)
        (sweep("NVIDIA B200", 1, 8, 838.0), None),
        (sweep("NVIDIA B200", 1, 8, 675.0, extra=RING_ENV), None),
        (sweep(H100, 2, 8, 330.0), RunFacts(NDR8)),  # 2 nodes, NVLS off (NVIDIA/nccl#1221)
        (sweep(H100, 4, 8, 320.0, extra=RING_ENV), RunFacts(NDR8)),  # 4 nodes over RoCE (NVIDIA/nccl#1221)
        (sweep(H100, 4, 8, 365.0, extra=RING_ENV), RunFacts(NDR8)),
    ],
)
def test_healthy_runs_pass(run: str, facts: RunFacts | None) -> None:
    assert _judged(run, facts) == []


def test_a_two_node_run_is_headed_nodes_by_gpus_and_says_its_assumptions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "two-nodes.txt"
    path.write_text(sweep(H100, 2, 8, 40.0))
    doc = _analyze(path, capsys)
    assert doc["gate"]["verdict"] == "warn"
    (group,) = doc["bench"]["groups"]
    assert "figure for 2 nodes x 8x NVIDIA H100 SXM5" in group["expected_basis"]
    assert "16x" not in group["expected_basis"]
    assert "HGX H100 reference node" in group["expected_basis"] and "pass --nics" in group["expected_basis"]
    (low,) = [f for f in doc["findings"] if f["code"] == "bench-below-expected"]
    assert low["evidence"]["nodes"] == 2 and low["evidence"]["gpus_per_node"] == 8
    assert low["evidence"]["oracle_warn_at_most"] is True


def test_the_nccl_release_the_run_reports_is_the_arithmetic_used() -> None:
    """nccl-tests prints the NCCL it ran (``nccl-library=21602``): NCCL 2.16.2 had no NVLS, so 370 is its ring."""
    old = sweep(H100, 1, 8, 370.0, version="nccl-headers=21602 nccl-library=21602")
    assert _judged(old) == []
    new = sweep(H100, 1, 8, 370.0, version="nccl-headers=22105 nccl-library=22105")
    ((severity, _code, message),) = _judged(new)
    assert severity == "warn" and "NVLS did not engage" in message
    result = parse_nccl_tests(new).result
    (group,) = with_expectations(result, _spec("H100-SXM")).groups
    assert "NCCL 2.21.5 (nccl-tests version 2.13.9 nccl-headers=22105 nccl-library=22105)" in group.expected_basis
    given = judge_bench(parse_nccl_tests(new).result, facts=RunFacts(nccl_version=NcclVersion(2, 16, 2)))
    assert given == ()


def test_ranks_spread_unevenly_over_hosts_get_no_figure() -> None:
    text = sweep(H100, 2, 8, 300.0).replace("on node01 device  7", "on node00 device  8")
    (group,) = with_expectations(parse_nccl_tests(text).result, _spec("H100-SXM")).groups
    assert isinstance(group.expected_busbw_gbps, Unsupported) and "unevenly" in group.expected_busbw_gbps.reason
