"""A bench group held to the oracle's figure, as the finding says it: the figure and where it comes from, the
NCCL release and where it was read, the algorithm and how it is known, the network, and why a group gets no
figure. The oracle's own text is taken from the oracle; what the judge adds is spelled out here."""

from __future__ import annotations

import dataclasses

import pytest
from test_judge import _result

from topoaudit.bench.judge import judge_bench, reported_nccl_version, with_expectations
from topoaudit.bench.oracle import Figure, expected_busbw
from topoaudit.catalog import find_gpu
from topoaudit.model.bench import BenchResult
from topoaudit.model.network import NcclVersion, NicSet, RunFacts
from topoaudit.model.values import Unsupported

H200 = find_gpu("H200-SXM")
H100 = find_gpu("H100-SXM")
RING = "algorithm ring (NCCL_ALGO=Ring in the ranks' environment)"


def _figure(spec_key: str, gpus: int, **kw: object) -> Figure:
    spec = find_gpu(spec_key)
    assert spec is not None
    figure = expected_busbw(spec, gpus, **kw)  # type: ignore[arg-type]
    assert isinstance(figure, Figure)
    return figure


def _basis(figure: Figure, shape: str, key: str, middle: str) -> str:
    said = "".join(f"; {a}" for a in figure.assumptions)
    tolerance = f"warn below {figure.warn_below_ratio:g}x: {figure.tolerance_source}"
    return f"figure for {shape} (catalog entry {key}): {figure.describe()}; {middle}{said}; {tolerance}"


def _below(result: BenchResult, **kw: object) -> tuple[str, str, dict[str, object]]:
    (found,) = [f for f in judge_bench(result, **kw) if f.code == "bench-below-expected"]  # type: ignore[arg-type]
    return found.severity.value, found.message, found.evidence


def test_a_measured_catalog_figure_names_the_release_the_ranks_ran_and_its_catalog_band() -> None:
    figure = _figure("H200-SXM", 8, algorithm="ring", nccl_version=NcclVersion(2, 21, 5))
    severity, message, evidence = _below(_result(45.0, environment={"NCCL_ALGO": "Ring", "nccl": "2.21.5"}))
    assert severity == "fail"
    assert (
        message
        == "group all plateaus at 45 GB/s busbw, 12% of the 367.61 GB/s ring figure for 8x NVIDIA H200 SXM (measured)"
    )
    assert evidence == {
        "group": "all",
        "measured_busbw_gbps": 45.0,
        "expected_busbw_gbps": 367.61,
        "ratio": 0.122,
        "warn_below": 0.85,
        "fail_below": 0.5,
        "expected_basis": _basis(figure, "8x NVIDIA H200 SXM", "H200-SXM", f"NCCL 2.21.5 (the ranks' NCCL); {RING}"),
        "basis": "catalog",
        "catalog_entry": "H200-SXM",
        "algorithm": "ring",
        "algorithm_evidence": "NCCL_ALGO=Ring in the ranks' environment",
        "nodes": 1,
        "gpus_per_node": 8,
        "nccl_version": "2.21.5",
        **figure.evidence(),
        "catalog_size_bytes": 16 << 30,
        "catalog_min_gbps": figure.floor_gbps,
        "catalog_source": figure.source,
        "catalog_algo": "ring",
    }


def test_a_derived_figure_follows_the_release_the_user_gave_and_says_so() -> None:
    facts = RunFacts(nccl_version=NcclVersion(2, 19, 3))
    figure = _figure("H100-SXM", 4, algorithm="ring", nccl_version=NcclVersion(2, 19, 3))
    assert figure.kind == "derived" and figure.busbw_gbps == 360.0  # 2.19's 20 GB/s per link, not 2.20's 20.6
    _, message, evidence = _below(_result(45.0, name="NVIDIA H100 80GB HBM3", n=4), facts=facts)
    assert (
        message
        == "group all plateaus at 45 GB/s busbw, 12% of the 360 GB/s ring figure for 4x NVIDIA H100 SXM5 (derived)"
    )
    assert evidence["basis"] == "nccl-model" and evidence["nccl_version"] == "2.19.3"
    assert evidence["expected_basis"] == _basis(
        figure, "4x NVIDIA H100 SXM5", "H100-SXM", f"NCCL 2.19.3 (given); {RING}"
    )
    assert "catalog_size_bytes" not in evidence and "catalog_source" not in evidence
    where = dataclasses.replace(facts, version_source="the log's NCCL INFO line")
    _, _, said = _below(_result(45.0, name="NVIDIA H100 80GB HBM3", n=4), facts=where)
    assert "; NCCL 2.19.3 (the log's NCCL INFO line); algorithm ring" in str(said["expected_basis"])


def test_an_unstated_algorithm_at_the_ring_s_speed_says_nvls_did_not_engage_and_where_to_look() -> None:
    figure = _figure("H200-SXM", 8)
    severity, message, evidence = _below(_result(360.0, environment={}))
    assert severity == "warn"
    assert message == (
        "group all plateaus at 360 GB/s busbw, 75% of the 482.26 GB/s nvls figure for 8x NVIDIA H200 SXM (measured, "
        "NCCL's own choice here): the plateau is what a ring reaches (367.61 GB/s), so NVLS did not engage; check "
        "NCCL_NVLS_ENABLE, NCCL_ALGO, the fabric manager, and the NCCL INFO line 'NVLS multicast support is not "
        "available'"
    )
    middle = "algorithm nvls, NCCL's own choice (not stated)"
    assert evidence["expected_basis"] == _basis(figure, "8x NVIDIA H200 SXM", "H200-SXM", middle)
    assert (evidence["algorithm"], evidence["nccl_version"]) == ("unknown", "not reported")


@pytest.mark.parametrize(
    ("plateau", "hint"),
    [(367.61 * 0.85, True), (367.61 * 0.85 - 0.01, False)],  # at the ring's tolerance it is the ring's speed
)
def test_the_nvls_hint_is_given_from_the_ring_s_tolerance_up(plateau: float, hint: bool) -> None:
    _, message, _ = _below(_result(plateau, environment={}))
    assert ("so NVLS did not engage" in message) is hint


def test_the_nvls_hint_follows_the_release_the_run_reports() -> None:
    """NCCL 2.16 has no NVLS: held to the ring, a run at the ring's speed is healthy, no hint."""
    assert [f.code for f in judge_bench(_result(360.0, environment={"nccl": "2.16.5"}))] == []


def test_across_nodes_the_network_given_is_named_and_an_assumed_one_warns_at_most() -> None:
    given = RunFacts(network=NicSet(8, 400.0, "IB", "--nics 8x400"))
    _, message, evidence = _below(_result(100.0, hosts=("a", "b")), facts=given)
    assert message == (
        "group all (a ranks 0-3, b ranks 4-7) plateaus at 100 GB/s busbw, 50% of the 200 GB/s ring figure for 2 nodes "
        "x 4x NVIDIA H200 SXM (derived) over 8x 400G IB (--nics 8x400)"
    )
    assert (evidence["nodes"], evidence["gpus_per_node"]) == (2, 4)
    severity, message, _ = _below(_result(40.0, hosts=("a", "b")))
    nics = next(a for a in _figure("H200-SXM", 4, nodes=2, algorithm="ring").assumptions if a.startswith("NICs "))
    assert severity == "warn" and message.endswith(f"(derived); {nics}, so it warns at most")


def test_a_group_on_a_links_model_that_ran_nvls_is_held_to_the_nvls_figure() -> None:
    _, message, evidence = _below(_result(360.0, expected=360.0, environment={"NCCL_ALGO": "NVLS"}))
    assert evidence["basis"] == "catalog" and "482.26 GB/s nvls figure" in message


def test_nvls_tree_inside_one_node_has_no_oracle_figure_so_the_links_model_stands() -> None:
    _, message, evidence = _below(_result(100.0, expected=360.0, environment={"NCCL_ALGO": "NVLSTree"}))
    assert evidence["basis"] == "links" and message.endswith("the topology predicts (18 NVLink4 links)")


def test_a_links_model_without_its_basis_says_only_the_topology_predicts() -> None:
    result = _result(100.0, expected=360.0)
    bare = dataclasses.replace(result, groups=(dataclasses.replace(result.groups[0], expected_basis=""),))
    _, message, evidence = _below(bare)
    assert message == "group all plateaus at 100 GB/s busbw, 28% of the 360 GB/s the topology predicts"
    assert (evidence["basis"], evidence["expected_basis"]) == ("links", "")
    gloo = dataclasses.replace(result, backend="gloo")  # no oracle figure: the links' one stands
    _, message, _ = _below(gloo)
    assert message.endswith("28% of the 360 GB/s the topology predicts (18 NVLink4 links)")


def _why(result: BenchResult) -> object:
    (group,) = with_expectations(result, H200).groups
    return group.expected_busbw_gbps


def test_why_a_group_gets_no_figure() -> None:
    base = _result(100.0)
    cpu = dataclasses.replace(base, ranks=(dataclasses.replace(base.ranks[0], device="cpu"), *base.ranks[1:]))
    assert _why(cpu) == Unsupported("oracle", "the ranks' GPUs are not all known")
    assert _why(dataclasses.replace(base, ranks=base.ranks[1:])) == Unsupported(
        "oracle", "the ranks' GPUs are not all known"
    )
    uneven = dataclasses.replace(
        base, ranks=tuple(dataclasses.replace(r, host="a" if r.rank < 6 else "b") for r in base.ranks)
    )
    assert _why(uneven) == Unsupported(
        "oracle", "the ranks are spread unevenly over the hosts (a 6, b 2): no one figure fits every node"
    )
    assert _why(dataclasses.replace(base, collective="all_gather")) == Unsupported(
        "oracle", "no all-reduce figure for an all_gather run of 8 rank(s) on nccl"
    )
    one = dataclasses.replace(base, groups=(dataclasses.replace(base.groups[0], ranks=(0,)),))
    assert _why(one) == Unsupported("oracle", "no all-reduce figure for an all_reduce run of 1 rank(s) on nccl")
    assert isinstance(_why(dataclasses.replace(base, ranks=tuple(reversed(base.ranks)))), float)


@pytest.mark.parametrize(
    ("environment", "version", "found"),
    [
        ({"nccl": "2.21.5"}, "nccl-tests version 2.13.9 nccl-headers=22105 nccl-library=22304", ((2, 21, 5), "ranks")),
        ({"nccl": "  "}, "nccl-tests version 2.13.9 nccl-headers=22105 nccl-library=22304", ((2, 23, 4), "tests")),
        ({}, "nccl-tests version 2.13.9", (None, "")),
        ({}, "NCCL-Tests JSON version 2.17.1", (None, "")),
        ({}, "rccl-tests version 2.21.5", (None, "")),
        ({}, "", (None, "")),
    ],
)
def test_the_nccl_release_is_read_from_the_ranks_then_nccl_tests_library_line_never_its_own_version(
    environment: dict[str, str], version: str, found: tuple[tuple[int, int, int] | None, str]
) -> None:
    release, where = reported_nccl_version(dataclasses.replace(_result(1.0), environment=environment, version=version))
    expected, source = found
    assert (release, where) == (
        NcclVersion(*expected) if expected else None,
        {"ranks": "the ranks' NCCL", "tests": version, "": ""}[source],
    )


# --- an NVL72 rack, NCCL's own choice measured ---------------------------------------------------------------
TRAYS = tuple(f"tray{k:02d}" for k in range(18))


def _rack(plateau: float, **environment: str) -> BenchResult:
    return _result(plateau, name="NVIDIA GB200", hosts=TRAYS, n=72, environment=environment)


def test_a_rack_at_the_ring_s_speed_names_the_ring_figure_of_the_release_it_ran() -> None:
    ring = _figure("GB200", 72, algorithm="ring", nccl_version=NcclVersion(2, 26, 2)).busbw_gbps
    _, message, _ = _below(_rack(650.0, nccl="2.26.2"))
    assert message.endswith(
        f": the plateau is what a ring reaches ({ring:g} GB/s), so NVLS did not engage; check NCCL_NVLS_ENABLE, "
        "NCCL_ALGO, the fabric manager, and the NCCL INFO line 'NVLS multicast support is not available'"
    )


def test_a_rack_on_a_links_model_is_still_held_to_nccl_s_measured_choice() -> None:
    result = _rack(650.0)
    linked = dataclasses.replace(result, groups=(dataclasses.replace(result.groups[0], expected_busbw_gbps=700.0),))
    _, message, evidence = _below(linked)
    assert evidence["basis"] == "catalog" and "of the 840 GB/s default figure for 72x NVIDIA GB200" in message


def test_a_rack_run_at_exactly_half_the_ring_s_figure_warns_below_it_fails() -> None:
    """NCCL's choice was assumed: a fail must also be under half the ring's figure (the lowest it could be)."""
    lowest = _figure("GB200", 72).lowest_gbps
    assert lowest > 0
    assert _below(_rack(lowest / 2))[0] == "warn"
    assert _below(_rack(lowest / 2 - 0.01))[0] == "fail"


def test_below_the_ring_s_tolerance_an_nvls_finding_names_only_the_figure() -> None:
    _, message, _ = _below(_result(367.61 * 0.85 - 0.01, environment={}))
    assert message.endswith("of the 482.26 GB/s nvls figure for 8x NVIDIA H200 SXM (measured, NCCL's own choice here)")


def test_a_single_node_run_with_nics_given_does_not_name_the_network() -> None:
    facts = RunFacts(network=NicSet(8, 400.0, "IB", "--nics 8x400"))
    _, message, _ = _below(_result(45.0), facts=facts)
    assert message.endswith("of the 367.61 GB/s ring figure for 8x NVIDIA H200 SXM (measured)")


def test_nvls_tree_across_nodes_is_held_to_its_measured_figure_not_the_links_model() -> None:
    facts = RunFacts(network=NicSet(8, 400.0, "RoCE", "--nics 8x400"))
    run = _result(300.0, expected=360.0, name="NVIDIA H100 80GB HBM3", hosts=("a", "b"), n=16,
                  environment={"NCCL_ALGO": "NVLSTree"})  # fmt: skip
    severity, message, evidence = _below(run, facts=facts)
    assert (severity, evidence["basis"], evidence["expected_busbw_gbps"]) == ("warn", "catalog", 430.0)
    assert "of the 430 GB/s nvls_tree figure for 2 nodes x 8x NVIDIA H100 SXM5 (measured)" in message


def test_nvls_tree_inside_one_node_without_a_links_basis_says_only_the_topology_predicts() -> None:
    result = _result(100.0, expected=360.0, environment={"NCCL_ALGO": "NVLSTree"})
    bare = dataclasses.replace(result, groups=(dataclasses.replace(result.groups[0], expected_basis=""),))
    _, message, evidence = _below(bare)
    assert message.endswith("28% of the 360 GB/s the topology predicts") and evidence["expected_basis"] == ""
    _, _, evidence = _below(result)
    assert (evidence["basis"], evidence["expected_basis"]) == ("links", "18 NVLink4 links")


def test_cards_without_nvlink_on_one_host_are_not_asked_which_share_a_bridge() -> None:
    l40s = _result(100.0, name="NVIDIA L40S", n=4)
    (group,) = with_expectations(l40s, find_gpu("L40S")).groups
    assert group.expected_busbw_gbps == Unsupported(
        "oracle", "no NCCL model for 4x NVIDIA L40S: its GPUs are not one NVLink domain"
    )


def test_a_group_with_its_links_model_keeps_it_and_the_next_group_still_gets_the_oracle_s() -> None:
    result = _result(100.0, expected=360.0)
    other = dataclasses.replace(result.groups[0], name="again", expected_busbw_gbps=Unsupported("bench", "no links"))
    judged = with_expectations(dataclasses.replace(result, groups=(result.groups[0], other)), H200)
    assert [g.expected_busbw_gbps for g in judged.groups] == [360.0, 367.61]
    gloo = dataclasses.replace(result, backend="gloo")
    assert with_expectations(gloo, H200).groups[0].expected_busbw_gbps == 360.0


def test_a_group_without_a_plateau_keeps_its_ratio_unmeasured_beside_the_oracle_s_figure() -> None:
    result = _result(100.0)
    unmeasured = Unsupported("bench", "no size of 1 MiB or more")
    group = dataclasses.replace(result.groups[0], plateau_busbw_gbps=unmeasured, ratio=unmeasured)
    (judged,) = with_expectations(dataclasses.replace(result, groups=(group,)), H200).groups
    assert (judged.expected_busbw_gbps, judged.ratio) == (367.61, unmeasured)


def test_an_nvls_figure_beside_a_group_without_a_plateau_is_given_without_a_hint() -> None:
    result = _result(100.0, environment={})
    unmeasured = Unsupported("bench", "no size of 1 MiB or more")
    group = dataclasses.replace(result.groups[0], plateau_busbw_gbps=unmeasured)
    (judged,) = with_expectations(dataclasses.replace(result, groups=(group,)), H200).groups
    assert judged.expected_busbw_gbps == 482.26 and judged.expected_basis.startswith("oracle: figure for 8x")


def test_a_figure_already_given_is_kept_when_the_model_is_not_known_again() -> None:
    once = with_expectations(_result(100.0), H200)
    (again,) = with_expectations(once, None).groups
    assert (again.expected_busbw_gbps, again.expected_basis) == (367.61, once.groups[0].expected_basis)
