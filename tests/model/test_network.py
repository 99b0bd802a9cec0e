"""The facts a multi-node figure follows: ``--nics COUNTxGBITS`` and the NCCL release a line names."""

from __future__ import annotations

import pytest

from topoaudit.model.bench import BenchResult, RankInfo
from topoaudit.model.nccl import NcclView
from topoaudit.model.network import (
    NcclVersion,
    NicSet,
    RunFacts,
    nics_from_nccl,
    nodes_heading,
    parse_nccl_version,
    parse_nics,
    run_facts,
)
from topoaudit.model.values import Unsupported
from topoaudit.parse.nccl_log import parse_nccl_log

NOT_RUN = Unsupported("test", "not given")


@pytest.mark.parametrize(
    ("text", "count", "gbits", "layer"),
    [
        ("8x400", 8, 400.0, ""),
        ("8x400G", 8, 400.0, ""),
        (" 4 x 200 Gb/s ", 4, 200.0, ""),
        ("4x200:RoCE", 4, 200.0, "RoCE"),
    ],
)
def test_nics_option_reads_count_rate_and_link_layer(text: str, count: int, gbits: float, layer: str) -> None:
    nics = parse_nics(text)
    assert (nics.count, nics.gbits_each, nics.link_layer, nics.assumed) == (count, gbits, layer, False)
    assert nics.source == f"--nics {text.strip()}"


@pytest.mark.parametrize("text", ["", "400", "8x", "0x400", "8x0", "eight by 400"])
def test_a_nics_option_that_is_not_count_x_rate_is_one_sentence(text: str) -> None:
    with pytest.raises(ValueError, match="--nics takes COUNTxGBITS per node"):
        parse_nics(text)


def test_a_nic_set_says_where_it_came_from() -> None:
    assert NicSet(8, 400.0, "IB", "--nics 8x400").describe() == "8x 400G IB (--nics 8x400)"


@pytest.mark.parametrize(
    ("line", "version"),
    [
        ("NCCL version 2.26.2+cuda12.8", NcclVersion(2, 26, 2)),
        ("node:12:12 [0] NCCL INFO NCCL version 2.19.3+cuda12.3", NcclVersion(2, 19, 3)),
        ("2.29.1", NcclVersion(2, 29, 1)),
        ("# nccl-tests version 2.18.2 nccl-headers=23007 nccl-library=23007", NcclVersion(2, 30, 7)),
        ("nccl-library=2708", NcclVersion(2, 7, 8)),  # NCCL_VERSION_CODE before 2.9: major*1000 + minor*100
        ("CUDA 12.4.1", None),
        ("", None),
    ],
)
def test_the_nccl_release_a_line_names(line: str, version: NcclVersion | None) -> None:
    assert parse_nccl_version(line) == version


def test_releases_are_ordered() -> None:
    assert (
        NcclVersion(2, 18, 1) < NcclVersion(2, 18, 3) < NcclVersion(2, 20, 3) and str(NcclVersion(2, 9, 9)) == "2.9.9"
    )


# --- the NICs and release of one audit, from what the input holds -------------------------------------------
def _view(*lines: str) -> NcclView:
    return parse_nccl_log("\n".join(lines))


USING = "node00:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>"
SPEED = "node00:1:1 [0] NCCL INFO NET/IB: [{i}] mlx5_{i}:uverbs{i}:1/IB provider=Mlx5 speed={s} context=0x1 ar=0"


def test_nccls_net_ib_lines_give_one_nodes_nics_with_their_speed() -> None:
    nics = nics_from_nccl(_view(USING, SPEED.format(i=0, s=400000), SPEED.format(i=1, s=400000)))
    assert nics == NicSet(2, 400.0, "IB", "read from NCCL's NET/IB lines (node00)")


def test_without_a_speed_line_the_rate_is_absent_and_says_why() -> None:
    nics = nics_from_nccl(_view(USING))
    assert nics is not None and nics.count == 2 and not nics.known_rate
    assert isinstance(nics.gbits_each, Unsupported) and "speed=" in nics.gbits_each.reason


def test_a_host_listing_another_nic_count_is_named() -> None:
    other = "node01:2:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE ; OOB ib0:10.0.0.2<0>"
    nics = nics_from_nccl(_view(USING, other))
    assert nics is not None and nics.count == 2
    assert nics.source == "read from NCCL's NET/IB lines (node00; node01 listed another count)"


def test_run_facts_take_the_option_first_then_the_log_and_each_release_with_where_it_was_read() -> None:
    log = _view("node00:1:1 [0] NCCL INFO NCCL version 2.19.3+cuda12.3", USING)
    given = parse_nics("8x400")
    assert run_facts(nics=given, nccl=log, bench=NOT_RUN, ras=NOT_RUN) == RunFacts(
        given, NcclVersion(2, 19, 3), "NCCL's log banner"
    )
    from_log = run_facts(nics=NOT_RUN, nccl=log, bench=NOT_RUN, ras=NOT_RUN)
    assert from_log.network is not None and from_log.network.source.startswith("read from NCCL's NET/IB lines")
    ras = run_facts(nics=None, nccl=NOT_RUN, bench=NOT_RUN, ras={"nccl_version": "2.29.2"})
    assert ras == RunFacts(None, NcclVersion(2, 29, 2), "NCCL RAS's version line")
    assert run_facts(nics=None, nccl=NOT_RUN, bench=NOT_RUN, ras=NOT_RUN) == RunFacts()


def test_a_run_over_several_hosts_is_headed_by_its_nodes() -> None:
    def bench(hosts: list[str]) -> BenchResult:
        ranks = tuple(RankInfo(r, 0, h, f"cuda:{r}") for r, h in enumerate(hosts))
        return BenchResult("nccl-tests", "all_reduce", "nccl", len(hosts), tuple(set(hosts)), ranks, (), "complete")

    assert nodes_heading(bench(["a"] * 8 + ["b"] * 8), 8, "NVIDIA H100") == "2 nodes x 8 GPUs (NVIDIA H100)"
    assert nodes_heading(bench(["a"] * 8 + ["b"] * 4), 8, "H100") == "2 hosts (8, 4 GPUs) of H100"
    assert nodes_heading(bench(["a"] * 8), 8, "H100") == "8× H100"
    assert nodes_heading(NOT_RUN, 4, "H100") == "4× H100"
