"""The facts a multi-node figure follows: ``--nics COUNTxGBITS`` and the NCCL release a line names."""

from __future__ import annotations

import pytest

from topoaudit.model.network import NcclVersion, NicSet, parse_nccl_version, parse_nics


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
