"""Behaviours of the sweep judge a change must not lose: a sweep still rising is named, not judged low; wrong
data in the in-place half is corruption; a plateau exactly at --expect-busbw passes; the plateau is read from
the large sizes even when a mid-size row is faster; nccl-tests and nvbandwidth of one box that disagree."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from topoaudit.bench.judge import judge_bench, still_rising
from topoaudit.cli import main
from topoaudit.model.bench import BenchGroup, BenchResult, BenchRow, RankInfo
from topoaudit.model.busbw import plateau
from topoaudit.parse.nccl_tests import parse_nccl_tests

FIXTURES = Path(__file__).parents[1] / "fixtures"
A100 = FIXTURES / "nccltests" / "nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt"
H100_NVBANDWIDTH = FIXTURES / "captures" / "nvbandwidth-8xh100-v0.10-multirun-separators-latency-1.txt"
README_NVBANDWIDTH = FIXTURES / "captures" / "nvbandwidth-8gpu-d2d-ce-readme-example-1.txt"
SLOW_H200 = FIXTURES / "nccltests" / "derived-8xh200-slow-busbw-scaled.txt"


def _cut_at(text: str, largest: int) -> str:
    """The real A100 run as if swept only up to ``largest`` bytes (``-e``): its own rows, the rest dropped."""
    keep = []
    for line in text.splitlines():
        tokens = line.split()
        if tokens and tokens[0].isdigit() and int(tokens[0]) > largest:
            continue
        keep.append(line)
    return "\n".join(keep) + "\n"


def _codes(result: BenchResult, **kw: object) -> list[str]:
    return [f.code for f in judge_bench(result, **kw)]  # type: ignore[arg-type]


# --- a sweep that never reached its plateau ------------------------------------------------------------------
def test_a_sweep_still_rising_is_named_not_judged_low() -> None:
    cut = parse_nccl_tests(_cut_at(A100.read_text(), 32 << 20)).result  # 16 MiB 119.81 -> 32 MiB 147.46
    found = judge_bench(cut)
    assert [f.code for f in found] == ["bench-sizes-too-small"]
    (f,) = found
    assert f.evidence["largest_size_bytes"] == 32 << 20 and f.evidence["previous_busbw_gbps"] == 119.81
    assert "235 GB/s" in f.message and "not a verdict on the links" in f.message


def test_the_whole_real_sweep_has_reached_its_plateau() -> None:
    whole = parse_nccl_tests(A100.read_text()).result  # 4 GiB 234.17 -> 8 GiB 235.14: flat
    assert still_rising(whole.groups[0]) is None and _codes(whole) == []


def test_a_rising_sweep_below_expect_busbw_is_named_too() -> None:
    cut = parse_nccl_tests(_cut_at(A100.read_text(), 32 << 20)).result
    assert _codes(cut, expect_busbw_gbps=200.0) == ["bench-sizes-too-small"]  # one fact, said once
    flat_but_low = parse_nccl_tests(A100.read_text()).result
    assert _codes(flat_but_low, expect_busbw_gbps=240.0) == ["bench-below-expected"]


def test_a_low_sweep_that_is_flat_is_still_low() -> None:
    slow = parse_nccl_tests(SLOW_H200.read_text()).result  # the real curve scaled: flat at 45 GB/s
    assert _codes(slow) == ["bench-below-expected"]


# --- pins ---------------------------------------------------------------------------------------------------
def _group(rows: tuple[BenchRow, ...]) -> BenchResult:
    top = plateau([(r.size_bytes, r.busbw_gbps) for r in rows])
    assert top is not None
    ranks = tuple(RankInfo(r, r, "h", f"cuda:{r}", name="NVIDIA H200") for r in range(8))
    group = BenchGroup(
        "all", "all", tuple(range(8)), tuple(f"h:cuda{r}" for r in range(8)), rows,
        plateau_busbw_gbps=top[1], plateau_size_bytes=top[0],
    )  # fmt: skip
    # a ring run: these pins are about --expect-busbw and the plateau, not about NVLS engaging on an H200
    return BenchResult(
        "nccl-tests", "all_reduce", "nccl", 8, ("h",), ranks, (group,), "complete", environment={"NCCL_ALGO": "Ring"}
    )


def _row(size: int, busbw: float, wrong: int = 0, inplace_wrong: int = 0) -> BenchRow:
    return BenchRow(size, size // 4, "float", 1.0, busbw / 1.75, busbw, wrong, inplace_wrong=inplace_wrong)


def test_wrong_elements_in_the_in_place_half_alone_are_corruption() -> None:
    rows = (_row(1 << 28, 360.0), _row(1 << 29, 365.0, inplace_wrong=7), _row(1 << 30, 366.0))
    found = [f for f in judge_bench(_group(rows)) if f.code == "bench-data-corruption"]
    assert len(found) == 1 and found[0].evidence["wrong_by_size_bytes"] == {str(1 << 29): 7}
    assert "512 MiB (7 wrong)" in found[0].message


def test_wrong_elements_in_the_out_of_place_half_are_corruption() -> None:
    rows = (_row(1 << 28, 360.0, wrong=3), _row(1 << 29, 365.0), _row(1 << 30, 366.0))
    found = [f for f in judge_bench(_group(rows)) if f.code == "bench-data-corruption"]
    assert len(found) == 1 and found[0].evidence["wrong_by_size_bytes"] == {str(1 << 28): 3}


def test_the_real_in_place_half_with_wrong_elements_is_corruption() -> None:
    parsed = parse_nccl_tests(A100.read_text()).result
    (group,) = parsed.groups
    rows = tuple(dataclasses.replace(r, inplace_wrong=5) if r.size_bytes == 1 << 30 else r for r in group.rows)
    bad = dataclasses.replace(parsed, groups=(dataclasses.replace(group, rows=rows),))
    assert _codes(bad) == ["bench-data-corruption"]


def test_sizes_exactly_4x_apart_are_neighbours_so_a_rise_between_them_is_named() -> None:
    """256 MiB 150 -> 1 GiB 200 GB/s on 8x H200 (catalog 367.61): still rising, not low; 8x apart is not known."""
    four = judge_bench(_group((_row(1 << 28, 150.0), _row(1 << 30, 200.0))))
    assert [f.code for f in four] == ["bench-sizes-too-small"]
    assert four[0].evidence["previous_size_bytes"] == 1 << 28
    assert "still rising at its largest size (256 MiB 150 -> 1 GiB 200 GB/s busbw, +33%)" in four[0].message
    eight = judge_bench(_group((_row(1 << 27, 150.0), _row(1 << 30, 200.0))))
    assert [(f.code, f.severity.value) for f in eight] == [("bench-below-expected", "warn")]


def test_a_plateau_exactly_at_expect_busbw_passes() -> None:
    rows = (_row(1 << 28, 350.0), _row(1 << 29, 359.0), _row(1 << 30, 360.0), _row(1 << 31, 360.0))
    assert _codes(_group(rows), expect_busbw_gbps=360.0) == []
    assert _codes(_group(rows), expect_busbw_gbps=360.01) == ["bench-below-expected"]


def test_the_plateau_comes_from_the_large_sizes_even_when_a_mid_size_row_is_faster() -> None:
    # a mid-size row at 420 (a cache effect, a lucky trial) must not stand for the plateau of 340
    rows = tuple(_row(1 << s, 420.0 if s == 26 else 340.0) for s in range(20, 34))
    result = _group(rows)
    assert result.groups[0].plateau_busbw_gbps == 340.0
    found = [f for f in judge_bench(result, expect_busbw_gbps=400.0) if f.code == "bench-below-expected"]
    assert len(found) == 1 and found[0].evidence["measured_busbw_gbps"] == 340.0


# --- nccl-tests and nvbandwidth of one box ------------------------------------------------------------------
def _analyze(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    path = tmp_path / "paste.txt"
    path.write_text(text)
    with pytest.raises(SystemExit):
        main(["analyze", str(path), "--format", "json"])
    return json.loads(capsys.readouterr().out)


def test_nccl_far_below_nvbandwidth_on_the_same_gpus_names_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _analyze(SLOW_H200.read_text() + H100_NVBANDWIDTH.read_text(), tmp_path, capsys)
    (f,) = [f for f in doc["findings"] if f["code"] == "bandwidth-tools-disagree"]
    assert f["evidence"]["nccl_tests_busbw_gbps"] == 45.0 and f["evidence"]["low_tool"] == "nccl-tests"
    assert f["evidence"]["nvbandwidth_gbps"] > 380 and "45 GB/s" in f["message"]
    assert str(f["evidence"]["nvbandwidth_gbps"]) in f["message"]


def test_a_healthy_ring_beside_its_copies_agrees(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 8x A100 ring 235.14 against the README's ~276 GB/s per pair: 0.85x, what the tools keep
    doc = _analyze(A100.read_text() + README_NVBANDWIDTH.read_text(), tmp_path, capsys)
    assert doc["bench"]["groups"][0]["plateau_busbw_gbps"] == 235.14
    assert not [f for f in doc["findings"] if f["code"] == "bandwidth-tools-disagree"]


def test_the_cross_tool_check_says_when_it_could_not_judge(tmp_path: Path) -> None:
    from topoaudit.pipeline import analyze
    from topoaudit.readers import load_path
    from topoaudit.render.junit import not_judged as capture_judgement

    alone = tmp_path / "nvbandwidth.txt"
    alone.write_text(H100_NVBANDWIDTH.read_text())
    loaded = load_path(str(alone))
    report = analyze(loaded.machine, source=loaded.source, captures=loaded.captures)
    assert "nccl-tests sweep" in (capture_judgement("bandwidth-tools-disagree", report) or "")
    both = tmp_path / "both.txt"
    both.write_text(SLOW_H200.read_text() + H100_NVBANDWIDTH.read_text())
    loaded = load_path(str(both))
    report = analyze(loaded.machine, source=loaded.source, captures=loaded.captures, bench=loaded.bench)
    assert capture_judgement("bandwidth-tools-disagree", report) == ""
    assert "bandwidth-tools-disagree" in {f.code for f in report.findings}
