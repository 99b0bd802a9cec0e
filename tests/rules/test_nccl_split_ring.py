"""An NCCL log alone whose rings and trees inside one host mix P2P with SHM or the network (nccl-ring-split)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from topoaudit.model.finding import Severity
from topoaudit.model.report import AuditOptions, Report
from topoaudit.pipeline import analyze
from topoaudit.readers import load_text

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl"
SPLIT = "constructed-2.20.5-split-box-8rank-shm-hops.txt"


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def judged(capture: str, **options: object) -> Report:
    loaded = load_text(capture, "capture")
    return analyze(
        loaded.machine,
        source=loaded.source,
        options=AuditOptions(**options),  # type: ignore[arg-type]
        input_issues=loaded.issues,
        nccl=loaded.nccl,
    )


def codes(report: Report) -> set[str]:
    return {f.code for f in report.findings}


def split_finding(report: Report):  # type: ignore[no-untyped-def]
    return next(f for f in report.findings if f.code == "nccl-ring-split")


@pytest.mark.parametrize("gpu_model", [None, "NVIDIA H200 NVL"])
def test_split_box_log_warns_naming_islands_and_slow_hops(gpu_model: str | None) -> None:
    options = {"gpu_model": gpu_model} if gpu_model else {}
    report = judged(text(SPLIT), **options)
    assert report.verdict == "warn"
    found = split_finding(report)
    assert found.severity == Severity.WARN
    assert found.evidence["islands"] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert [h["ranks"] for h in found.evidence["slow_hops"]] == [[0, 7], [3, 4]]
    assert "ranks 0-3; ranks 4-7" in found.message and "3-4 via SHM/direct/direct" in found.message
    quoted = "\n".join(found.evidence["log_lines"])
    assert "3[3] -> 4[4] via SHM/direct/direct" in quoted and "7[7] -> 0[0] via SHM/direct/direct" in quoted
    assert "via P2P/direct pointer" in quoted  # the lines that show each island


def test_the_tree_edge_between_islands_is_named() -> None:
    found = split_finding(judged(text(SPLIT)))
    hop = next(h for h in found.evidence["slow_hops"] if h["ranks"] == [3, 4])
    assert hop["in"] == ["ring", "tree"]
    assert any("Trees [0] 4/-1/-1->3->2" in line for line in found.evidence["log_lines"])


def test_network_hops_inside_one_host_split_the_ring_too() -> None:
    log = text(SPLIT).replace(" via SHM/direct/direct", " [send] via NET/Socket/0")
    found = split_finding(judged(log))
    assert found.evidence["islands"] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert "NET/Socket/0" in found.message


@pytest.mark.parametrize("option", ["tp", "expect_domain"])
def test_tp_larger_than_every_island_fails(option: str) -> None:
    report = judged(text(SPLIT), **{option: 8})
    found = split_finding(report)
    assert found.severity == Severity.FAIL and report.verdict == "fail"
    assert "largest island holds 4" in found.message
    assert split_finding(judged(text(SPLIT), **{option: 4})).severity == Severity.WARN


def test_one_island_is_no_split() -> None:
    log = text(SPLIT).replace("via SHM/direct/direct", "via P2P/direct pointer")
    assert "nccl-ring-split" not in codes(judged(log))


def test_a_log_with_no_p2p_at_all_is_no_split() -> None:
    """Every rank its own island: nothing was split, the rings never had peer access to lose.

    What the log shows instead is a host whose GPUs never use P2P, a finding of its own.
    """
    log = text(SPLIT).replace("via P2P/direct pointer", "via SHM/direct/direct")
    report = judged(log)
    assert "nccl-ring-split" not in codes(report)
    assert {f.code for f in report.findings if f.severity is not Severity.INFO} == {"nccl-p2p-unused"}


def test_real_logs_whose_rings_are_all_p2p_raise_no_split() -> None:
    for name in (
        "ncclinfo-a100sxm4-4gpu-init-trees-rings-container-1.txt",
        "ncclinfo-a100sxm4-2gpu-p2p-direct-read-24ch-container-1.txt",
    ):
        assert "nccl-ring-split" not in codes(judged(text(name)))


def test_with_a_topology_beside_it_transport_below_topology_decides() -> None:
    both = text("topo-h100-8gpu-stas-ht-1.txt") + "\n" + text(SPLIT)
    report = judged(both)
    assert "nccl-ring-split" not in codes(report)
    below = next(f for f in report.findings if f.code == "nccl-transport-below-topology")
    assert below.severity == Severity.FAIL


def test_shm_between_gpus_behind_one_switch_at_pxb_is_below_the_topology() -> None:
    # the real 4x 2080 Ti paste with its GPU0-GPU1 pair two bridges apart (PXB) instead of one (PIX)
    topo = text("topo-4x2080ti-pix-one-switch-lmdeploy-1.txt")
    lines = topo.splitlines()
    lines[1] = lines[1].replace("PIX", "PXB", 1)
    lines[2] = lines[2].replace("PIX", "PXB", 1)
    report = judged("\n".join(lines) + "\n" + text("constructed-2.17-channel-conn-busid-pcie.txt"))
    below = next(f for f in report.findings if f.code == "nccl-transport-below-topology")
    assert below.evidence["pairs"][0]["link"] == "PXB"
    assert "share a PCIe switch" in below.message


@pytest.mark.parametrize("fmt", ["console", "json", "markdown"])
def test_every_format_shows_the_islands(fmt: str) -> None:
    args = [sys.executable, "-m", "topoaudit", "analyze", str(FIXTURES / SPLIT)]
    args += ["--no-color"] if fmt == "console" else ["--format", fmt]
    result = subprocess.run(args, capture_output=True, text=True, env={"COLUMNS": "200", "PATH": ""}, check=False)
    assert result.returncode == 0, result.stderr
    output = result.stdout
    if fmt == "json":
        doc = json.loads(output)
        found = next(f for f in doc["findings"] if f["code"] == "nccl-ring-split")
        assert found["evidence"]["islands"] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    else:
        assert "ranks 0-3; ranks 4-7" in " ".join(output.split())
    assert subprocess.run([*args, "--tp", "8"], capture_output=True, check=False).returncode == 1


def test_the_graph_line_says_the_ring_runs_through_the_cpu() -> None:
    # NCCL_DEBUG_SUBSYS=INIT,GRAPH adds the search result (src/graph/search.cc, 2.20.5 format)
    pattern = (
        "h200nvl-07:41233:41290 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 2, bw 24.000000/24.000000, "
        "type SYS/PIX, sameChannels 1\n"
    )
    log = text(SPLIT).replace("NCCL version 2.20.5+cuda12.4\n", "NCCL version 2.20.5+cuda12.4\n" + pattern)
    found = split_finding(judged(log))
    assert "ring graph runs over SYS at 24 GB/s (line 2)" in found.message
    assert any("type SYS/PIX" in line for line in found.evidence["log_lines"])


# --- excerpts: a few channel lines, without the comm line or the ring lines -----------------------------------

SPLIT_4_OLD_FORM = """\
gpu-node:2345:2401 [0] NCCL INFO Channel 02 : 0[1b000] -> 1[1c000] via P2P/CUMEM
gpu-node:2345:2402 [1] NCCL INFO Channel 02 : 1[1c000] -> 2[3d000] via SHM/direct/direct
gpu-node:2345:2403 [2] NCCL INFO Channel 02 : 2[3d000] -> 3[3e000] via P2P/CUMEM
gpu-node:2345:2404 [3] NCCL INFO Channel 02 : 3[3e000] -> 0[1b000] via SHM/direct/direct
gpu-node:2345:2401 [0] NCCL INFO Channel 03 : 0[1b000] -> 1[1c000] via P2P/CUMEM
"""
"""Five channel lines of NCCL 2.13-2.17 (``Channel 02 :``, bus ids in brackets): a 4-GPU box split in two NVLink
pairs, ranks 0-1 and 2-3 on P2P and the hops between them through host memory."""


def test_five_channel_lines_of_a_split_box_name_the_split() -> None:
    report = judged(SPLIT_4_OLD_FORM)
    assert report.verdict == "warn"
    found = split_finding(report)
    assert found.evidence["islands"] == [[0, 1], [2, 3]]
    assert [h["ranks"] for h in found.evidence["slow_hops"]] == [[0, 3], [1, 2]]
    assert "1-2 via SHM/direct/direct (connection)" in found.message
    assert found.message.endswith("Ranks 0-3 seen; the communicator's size is not in the paste.")
    assert (
        "line 2: gpu-node:2345:2402 [1] NCCL INFO Channel 02 : 1[1c000] -> 2[3d000] via SHM/direct/direct"
        in (found.evidence["log_lines"])
    )


def test_channel_lines_without_their_prefix_are_one_host_by_their_shm() -> None:
    """Quoted without ``host:pid:tid [dev] NCCL INFO``: SHM joins ranks of one host only."""
    bare = "\n".join(line.split("NCCL INFO ", 1)[1] for line in SPLIT_4_OLD_FORM.splitlines()) + "\n"
    assert split_finding(judged(bare)).evidence["islands"] == [[0, 1], [2, 3]]


def test_the_finding_and_the_report_say_what_the_paste_covered() -> None:
    lines = SPLIT_4_OLD_FORM.replace("Channel 02 :", "Channel 02/0 :").replace("Channel 03 :", "Channel 03/0 :")
    comm = "gpu-node:2345:2401 [0] NCCL INFO comm 0x5 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n"
    report = judged(comm + lines)
    found = split_finding(report)
    assert found.evidence["coverage"] == "the paste shows 4 of 8 ranks (0-3)"
    assert "The paste shows 4 of 8 ranks (0-3)." in found.message
    (excerpt,) = [i for i in report.input_issues if i.action == "excerpt"]
    assert excerpt.message.startswith("the paste shows 4 of 8 ranks (0-3); what these lines show is judged")


def test_pairs_on_p2p_with_shm_hops_across_sockets_of_a_pcie_box_without_p2p_are_no_split() -> None:
    """Every hop through host memory and none on P2P (a PCIe box across sockets) is no island split."""
    shm_only = SPLIT_4_OLD_FORM.replace("via P2P/CUMEM", "via SHM/direct/direct")
    assert "nccl-ring-split" not in codes(judged(shm_only))


SHM_ONLY = """\
sinnet:868106:868182 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct
sinnet:868106:868181 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct
sinnet:868106:868182 [0] NCCL INFO Channel 01 : 0[0] -> 1[1] via SHM/direct/direct
sinnet:868106:868181 [1] NCCL INFO Connected all rings, use ring PXN 0 GDR 1
"""


def test_a_host_whose_gpus_never_use_p2p_warns_naming_the_transport() -> None:
    report = judged(SHM_ONLY)
    (found,) = [f for f in report.findings if f.code == "nccl-p2p-unused"]
    assert found.severity is Severity.WARN
    assert found.message.startswith(
        "NCCL uses peer access for none of the 1 rank pair(s) the log shows inside one host (ranks 0,1): they go "
        "through SHM/direct/direct"
    )
    assert "GPUs on different CPU sockets use host memory by design" in found.message
    assert report.gate.verdict == "warn"


def test_the_setting_that_asks_for_host_memory_is_named() -> None:
    log = "sinnet:1:1 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1.\n" + SHM_ONLY
    (found,) = [f for f in judged(log).findings if f.code == "nccl-p2p-unused"]
    assert "NCCL_P2P_DISABLE=1 is set (line 1), which asks for this." in found.message


@pytest.mark.parametrize(
    "setting", ["NCCL_P2P_DISABLE set by environment to 0.", "NCCL_P2P_LEVEL set by environment to SYS"]
)
def test_a_setting_that_keeps_p2p_on_is_not_named_as_the_cause(setting: str) -> None:
    log = f"sinnet:1:1 [0] NCCL INFO {setting}\n" + SHM_ONLY
    (found,) = [f for f in judged(log).findings if f.code == "nccl-p2p-unused"]
    assert "asks for this" not in found.message
    assert "GPUs on different CPU sockets use host memory by design" in found.message


def test_channel_lines_without_the_rings_connected_may_leave_out_the_p2p_ones() -> None:
    """Cross-socket SHM hops copied out of a PCIe box's log: by design there, and the P2P lines are not pasted."""
    excerpt = "".join(
        line.replace("0[0]", "4[4]").replace("1[1]", "3[3]") + "\n"
        for line in SHM_ONLY.splitlines()
        if "Connected all rings" not in line
    )
    assert "nccl-p2p-unused" not in codes(judged(excerpt))
    back_to_zero = "sinnet:1:1 [7] NCCL INFO Channel 00 : 7[7] -> 0[0] via SHM/direct/direct\n"
    assert "nccl-p2p-unused" not in codes(judged(back_to_zero))


def test_channel_lines_that_close_a_ring_from_rank_zero_show_every_rank() -> None:
    """vllm-project/vllm#17568 cut to its channel lines: 0 -> 1 and 1 -> 0 over SHM close a ring of two ranks, so no
    P2P line can have been left out; one direction alone does not close it."""
    excerpt = "".join(line + "\n" for line in SHM_ONLY.splitlines() if "Connected all rings" not in line)
    assert "nccl-p2p-unused" in codes(judged(excerpt))
    one_way = "".join(line + "\n" for line in excerpt.splitlines() if "0[0] -> 1[1]" in line)
    assert "nccl-p2p-unused" not in codes(judged(one_way))


def test_an_excerpt_whose_pairs_take_in_every_rank_of_the_communicator_shows_them_all() -> None:
    """vllm-project/vllm#9920: a TP=2 communicator (`nranks 2`) whose one pair goes over SHM: no P2P line is left out.
    Four ranks of which two are shown are still an excerpt."""
    init = "HP-Z8:23458:23665 [0] NCCL INFO comm 0x23ba7ea0 rank 0 nranks {n} cudaDev 0 busId 47000 - Init COMPLETE\n"
    excerpt = "".join(line + "\n" for line in SHM_ONLY.splitlines() if "Connected all rings" not in line)
    assert "nccl-p2p-unused" in codes(judged(init.format(n=2) + excerpt))
    assert "nccl-p2p-unused" not in codes(judged(init.format(n=4) + excerpt))


def test_one_pair_on_p2p_is_not_a_host_without_p2p() -> None:
    log = SHM_ONLY + "sinnet:868106:868183 [2] NCCL INFO Channel 00 : 2[2] -> 3[3] via P2P/CUMEM/read\n"
    assert "nccl-p2p-unused" not in codes(judged(log))


def test_with_the_topology_beside_the_log_the_pairs_are_judged_against_their_links() -> None:
    matrix = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tSYS\t0-7\nGPU1\tSYS\t X \t8-15\n"
    assert "nccl-p2p-unused" not in codes(judged(matrix + SHM_ONLY))
