"""The runs the issue names, judged end to end through ``analyze``: the NICs from ``--nics`` or from NCCL's
``NET/IB`` lines beside the nccl-tests table, else the reference node's, assumed and said (a warning at most);
the NCCL release the run reports; a multi-node run headed by its nodes and named by host."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.sweeps import net_ib, sweep
from topoaudit.cli import main

H100 = "NVIDIA H100 80GB HBM3"
RING_ENV = "node00:1000:1000 [0] NCCL INFO NCCL_ALGO set by environment to Ring"
NVLS_ENV = "node00:1000:1000 [0] NCCL INFO NCCL_ALGO set by environment to NVLS"


def _analyze(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *args: str) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "run.txt"
    path.write_text(text)
    with pytest.raises(SystemExit) as exit_info:
        main(["analyze", str(path), "--format", "json", *args])
    return int(exit_info.value.code or 0), json.loads(capsys.readouterr().out)


def _low(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if f["code"] == "bench-below-expected"]


@pytest.mark.parametrize(
    ("run", "args", "verdict", "said"),
    [
        # 2 nodes of 8x H100 at 40 GB/s: with no NICs named, the reference node's are assumed: a warning
        (sweep(H100, 2, 8, 40.0), (), "warn", "NICs 8x 400G (assumed: HGX H100 reference node): pass --nics"),
        (sweep(H100, 2, 8, 40.0), ("--nics", "8x400"), "fail", "319.8 GB/s tree figure for 2 nodes x 8x"),
        # NCCL's NET/IB lines beside the table name the NICs and, from NCCL 2.27.3, their speed
        (
            sweep(H100, 2, 8, 40.0, extra=net_ib(2)),
            (),
            "fail",
            "over 8x 400G IB (read from NCCL's NET/IB lines (node00))",
        ),
        # ... without a speed, the count is read and the rate assumed: still a warning at most
        (
            sweep(H100, 2, 8, 40.0, extra=net_ib(2, speed_mbps=None)),
            (),
            "warn",
            "8 NICs read from NCCL's NET/IB lines (node00); 400G each assumed: HGX H100 reference node",
        ),
        # NCCL_ALGO=Ring at 180 GB/s over 8x 400G per node: 8 x 50 = 400, the node's own ring 370.8 is lower
        (sweep(H100, 2, 8, 180.0, extra=RING_ENV), ("--nics", "8x400"), "fail", "49% of the 370.8 GB/s ring figure"),
        (sweep(H100, 2, 8, 180.0, extra=f"{RING_ENV}\n{net_ib(2)}"), (), "fail", "49% of the 370.8 GB/s ring"),
        (sweep(H100, 2, 8, 180.0, extra=RING_ENV), (), "warn", "so it warns at most"),
        # NVLS that did not engage: 8x H100 and 8x B200 at their ring's speed
        (sweep(H100, 1, 8, 370.0), (), "warn", "77% of the 480 GB/s nvls figure for 8x NVIDIA H100 SXM5"),
        (sweep(H100, 1, 8, 370.0, extra=NVLS_ENV), (), "warn", "NVLS did not engage"),
        (sweep("NVIDIA B200", 1, 8, 650.0), (), "warn", "77% of the 845.67 GB/s nvls figure for 8x NVIDIA B200"),
    ],
)
def test_the_issues_runs_warn_or_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], run: str, args: tuple[str, ...], verdict: str, said: str
) -> None:
    code, doc = _analyze(tmp_path, capsys, run, *args)
    (low,) = _low(doc)
    assert (doc["gate"]["verdict"], low["severity"], code) == (verdict, verdict, 1 if verdict == "fail" else 0)
    assert said in low["message"]


@pytest.mark.parametrize(
    ("run", "args"),
    [
        (sweep(H100, 1, 8, 480.0), ()),  # NVLS, NCCL's default (~480: sjeaugey in NVIDIA/nccl-tests#212)
        (sweep(H100, 1, 8, 370.0, extra=RING_ENV), ()),  # the ring (~370)
        (sweep(H100, 2, 8, 330.0, extra=net_ib(2)), ()),  # 2 nodes, NVLS off, 8x 400G (NVIDIA/nccl#1221)
        (sweep(H100, 2, 8, 330.0), ("--nics", "8x400:RoCE")),
        (sweep(H100, 4, 8, 365.0, extra=RING_ENV), ("--nics", "8x400")),
    ],
)
def test_healthy_runs_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str], run: str, args: tuple[str, ...]) -> None:
    code, doc = _analyze(tmp_path, capsys, run, *args)
    assert (code, doc["gate"]["verdict"], _low(doc)) == (0, "pass", [])


def test_nics_given_win_over_the_log_and_are_kept_in_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The log lists 8x 200G; the user says the node has 8x 400G: the figure follows the user."""
    run = sweep(H100, 2, 8, 250.0, extra=f"{RING_ENV}\n{net_ib(2, speed_mbps=200000)}")
    _, from_log = _analyze(tmp_path, capsys, run)
    assert _low(from_log) == []  # 8 x 25 = 200 GB/s from the log: 250 is above it
    _, given = _analyze(tmp_path, capsys, run, "--nics", "8x400")
    (low,) = _low(given)
    assert "67% of the 370.8 GB/s ring figure" in low["message"] and "(--nics 8x400)" in low["message"]
    assert given["options"]["nics"]["count"] == 8 and given["options"]["nics"]["gbits_each"] == 400.0


@pytest.mark.parametrize("value", ["400", "8x", "eight by 400", "0x400"])
def test_a_bad_nics_value_is_bad_input_in_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    path = tmp_path / "run.txt"
    path.write_text(sweep(H100, 2, 8, 40.0))
    with pytest.raises(SystemExit) as exit_info:
        main(["analyze", str(path), "--nics", value])
    assert exit_info.value.code == 4
    err = capsys.readouterr().err
    assert f"--nics takes COUNTxGBITS per node, such as 8x400 or 4x200:RoCE, not {value!r}" in err


def test_a_two_node_run_is_headed_by_nodes_and_named_by_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run.txt"
    path.write_text(sweep(H100, 2, 8, 40.0, extra=net_ib(2)))
    with pytest.raises(SystemExit):
        main(["analyze", str(path), "--format", "markdown"])
    out = capsys.readouterr().out
    assert "2 nodes x 8 GPUs (NVIDIA H100 80GB HBM3)" in out and "8× NVIDIA H100" not in out
    assert "group all (node00 ranks 0-7, node01 ranks 8-15) plateaus at 40 GB/s" in out


def test_a_rank_number_no_run_has_is_named_as_pasted_without_spelling_out_its_span(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A damaged device line (a rank of a hundred digits) is named as pasted; listing the span it implies would
    take more memory than the machine has."""
    huge = "9" * 100
    text = sweep(H100, 2, 8, 40.0, extra=net_ib(2)).replace("#  Rank  0 Group", f"#  Rank {huge} Group", 1)
    assert huge in text
    path = tmp_path / "run.txt"
    path.write_text(text)
    with pytest.raises(SystemExit) as exit_info:
        main(["analyze", str(path), "--format", "markdown"])
    assert exit_info.value.code == 1
    assert f"node00 ranks 1,2,3,4,5,6,7,{huge}" in capsys.readouterr().out


def test_the_nccl_release_the_log_banner_names_is_the_arithmetic_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NCCL 2.16.2 had no NVLS: 370 GB/s is its ring on 8x H100, not an NVLS run that did not engage."""
    banner = "node00:1000:1000 [0] NCCL INFO NCCL version 2.16.2+cuda12.0"
    _, doc = _analyze(tmp_path, capsys, sweep(H100, 1, 8, 370.0, extra=banner))
    assert _low(doc) == []
    (group,) = doc["bench"]["groups"]
    assert "NCCL 2.16.2 (the run's version line)" in group["expected_basis"]


def test_an_inspector_communicator_across_nodes_is_held_to_the_nics_given(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = Path(__file__).parents[1] / "fixtures" / "inspector" / "constructed-two-node-communicator.jsonl"
    figures = {}
    for args in ((), ("--nics", "8x200")):
        with pytest.raises(SystemExit):
            main(["analyze", str(path), "--format", "json", "--gpu-model", "H100-SXM", *args])
        low = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["code"] == "nccl-inspector-busbw-low"]
        figures[args] = {(f["evidence"]["expected_busbw_gbps"], f["evidence"]["oracle_warn_at_most"]) for f in low}
    assert figures[()] == {(319.8, True)}  # the reference node's 8x 400G, assumed: a tree figure that warns at most
    assert figures[("--nics", "8x200")] == {(200.0, False)}  # 8 x 25 GB/s, the ring: the user's network
