"""Damaged NCCL logs: the parser and ``analyze`` refuse with one sentence (InputError) or read them, never
anything else. Hypothesis cuts, splices and corrupts the real and constructed logs of tests/fixtures/nccl,
and builds lines from NCCL's own fragments with hostile numbers and text in the slots."""

from __future__ import annotations

import functools
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topoaudit.errors import InputError
from topoaudit.model.report import report_from_dict, report_to_dict
from topoaudit.parse.nccl_log import parse_nccl_log
from topoaudit.readers import load_text

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl"

FRAGMENTS = [
    "NCCL version ",
    "NCCL INFO ",
    "NCCL WARN ",
    "Channel ",
    "Ring ",
    " : ",
    " -> ",
    "[",
    "]",
    " [send]",
    " [receive]",
    " via ",
    "P2P/CUMEM/read",
    "SHM/direct/direct",
    "NET/IB/0(7)/GDRDMA",
    "direct shared memory",
    "Trees [0] ",
    "->",
    "/-1/-1",
    "comm 0x1 rank ",
    " nRanks ",
    " nNodes ",
    " localRanks ",
    " localRank ",
    " MNNVL ",
    " nranks ",
    " cudaDev ",
    " nvmlDev ",
    " busId ",
    " - Init COMPLETE",
    " coll channels, ",
    " collnet channels, ",
    " nvls channels, ",
    " p2p channels, ",
    " p2p channels per peer",
    "NVLS multicast support is not available on dev ",
    "NET/IB : Using [0]",
    "GPU Direct RDMA Disabled for HCA ",
    "GPU Direct RDMA Enabled for GPU ",
    " / HCA ",
    " (distance ",
    "P2P is disabled between NVLINK connected GPUs ",
    " and ",
    "Pattern 4, crossNic 0, nChannels ",
    ", bw ",
    ", type SYS/PIX",
    "host:1:2 [",
    "graph/paths.cc:396 ",
    "'",
    "\n",
]
NUMBERS = st.sampled_from(["0", "1", "-1", "7", "99999999999999999999999", "1b000", "fffffffffffffffff", "", "00"])
TOKENS = st.one_of(st.sampled_from(FRAGMENTS), NUMBERS, st.text(max_size=6))


@functools.cache
def logs() -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.txt"))]


def read_or_refuse(text: str) -> None:
    """The parser returns a view or raises InputError; the loader and the JSON round trip hold for any view."""
    try:
        view = parse_nccl_log(text, "fuzz")
    except InputError:
        return
    assert view.lines_total == len(text.splitlines())
    try:
        loaded = load_text(text, "fuzz")
    except InputError:
        return
    if loaded.machine.gpus:
        from topoaudit.model.report import SourceInfo
        from topoaudit.pipeline import analyze

        report = analyze(loaded.machine, source=SourceInfo("nccl-log", "fuzz"), nccl=loaded.nccl)
        assert report_to_dict(report_from_dict(report_to_dict(report))) == report_to_dict(report)


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TOKENS, max_size=60))
def test_lines_built_from_nccl_fragments(tokens: list[str]) -> None:
    read_or_refuse("".join(tokens))


@settings(max_examples=120, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_damaged_real_logs(data: st.DataObject) -> None:
    text = data.draw(st.sampled_from(logs()))
    cut = data.draw(st.integers(0, len(text)))
    insert = data.draw(st.lists(TOKENS, max_size=8).map("".join))
    where = data.draw(st.integers(0, len(text)))
    damaged = (text[:where] + insert + text[where:])[: max(cut, 1)] if data.draw(st.booleans()) else text[cut:]
    read_or_refuse(damaged)
