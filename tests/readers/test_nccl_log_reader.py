"""The NCCL log reader on excerpts: a line quoted without ``NCCL``, a junk host line, a log cut mid-line, and
what the paste covers said with the source."""

from __future__ import annotations

import json

from parse.dev_pastes import dev_paste

from topoaudit.pipeline import analyze_facts
from topoaudit.readers import load_text, reader


def test_a_line_quoted_with_a_bare_info_is_an_nccl_log() -> None:
    """``INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'``: no ``NCCL`` anywhere in the paste."""
    text = dev_paste("nccl-1939-gdr-disabled-hca0")
    assert "NCCL" not in text and reader("nccl-log").sniff(text)
    loaded = load_text(text, "paste.txt")
    assert loaded.source.kind == "nccl-log" and loaded.machine.gpus == ()


def test_a_log_that_names_no_gpu_is_judged_not_refused(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Before, a paste of NCCL lines without a host prefix was refused: "no GPUs in the input"."""
    paste = tmp_path / "gdr.txt"
    paste.write_text(dev_paste("nccl-1939-gdr-disabled-hca0"))
    code, out, err = run("analyze", str(paste), "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["verdict"] == "warn" and "nccl-gdr-disabled" in {f["code"] for f in report["findings"]}


def test_a_junk_or_spliced_host_line_never_decides_the_machine() -> None:
    """``0junk`` sorts first and prints a line, but holds no rank: the machine is the host with the ranks."""
    text = (
        "0junk:1:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.9<0>\n"
        "gpu7:4410:4410 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n"
        "gpu7:4410:4410 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
        "gpu7:4410:4410 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0\n"
    )
    loaded = load_text(text, "paste.txt")
    assert loaded.machine.host.hostname == "gpu7" and [g.index for g in loaded.machine.gpus] == [0]
    assert "nccl-gdr-disabled" in {f.code for f in analyze_facts(loaded).findings}


def test_the_source_says_what_the_paste_covers() -> None:
    text = dev_paste("nccl-1584-nvls-available-ib-sharp-init")
    loaded = load_text(text, "paste.txt")
    assert loaded.source.description.endswith("; the paste shows 1 of 8 ranks (0)")
    (excerpt,) = [i for i in loaded.issues if i.action == "excerpt"]
    assert excerpt.message == "the paste shows 1 of 8 ranks (0); what these lines show is judged, the rest is not known"


def test_a_log_cut_inside_a_prefix_says_it_is_truncated() -> None:
    text = (
        "node1:12:3 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n"
        "node1:12:3 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM\n"
        "node1:12:3 [1] NCCL IN\n"
    )
    (cut,) = [i for i in load_text(text, "paste.txt").issues if "truncated" in i.message]
    assert cut.line == 3 and cut.action == "recovered"
    assert cut.message == (
        "the log is truncated: line 3 is cut inside NCCL's prefix ('node1:12:3 [1] NCCL IN') and says nothing"
    )


def test_a_paste_ending_inside_its_last_line_may_be_cut_and_says_so() -> None:
    text = (
        "node1:12:3 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n"
        "node1:12:3 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CU"
    )
    (cut,) = [i for i in load_text(text, "paste.txt").issues if "truncated" in i.message]
    assert cut.line == 2 and cut.action == "excerpt"  # a clipboard paste lacks its last line break too
    assert cut.message.startswith("the log may be truncated: it ends without a line break, inside line 2")
