"""A pasted nccl-tests run judged from what it printed: what it died of, where it hung, its data check, its glued
runs, its small-message latency, and the variables on its command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from parse.dev_pastes import dev_paste

from topoaudit.model.finding import Finding, Severity
from topoaudit.model.report import AuditOptions, Report
from topoaudit.pipeline import analyze_facts
from topoaudit.readers import load_text

NCCLTESTS = Path(__file__).parents[1] / "fixtures" / "nccltests"
GH200 = (NCCLTESTS / "nccltest-gh200-alps-2node-1gpu-each-slingshot-1.txt").read_text()  # 2 nodes, 8 sizes, footer


def judged(text: str, **options: object) -> Report:
    return analyze_facts(load_text(text, "paste.txt"), options=AuditOptions(**options))  # type: ignore[arg-type]


def found(report: Report) -> dict[str, Finding]:
    return {f.code: f for f in report.findings}


# --- what a run died of ------------------------------------------------------------------------------------


def test_cuda_error_802_names_the_fabric_manager_with_its_remedy() -> None:
    """``Test CUDA failure common.cu:1030 'system not yet initialized'`` right after ``# Using devices`` (H20)."""
    report = judged(dev_paste("nccltests-338-h20-802-mpi-abort"))
    fm = found(report)["nccl-fabric-manager-down"]
    assert report.gate.verdict == "fail" and fm.severity == Severity.FAIL
    assert fm.message == (
        "The run died before its first row with CUDA error 802 ('system not yet initialized' at common.cu:1030, "
        "host gpu, line 2): the NVSwitch fabric manager is not running, so the GPUs cannot use NVLink."
    )
    assert [c.command for c in fm.remedy_commands] == [
        "systemctl start nvidia-fabricmanager",
        "systemctl enable nvidia-fabricmanager",
    ]
    assert "bench-rank-failed" not in found(report)  # one finding, naming the cause


def test_802_on_blackwell_brings_up_the_nvlink_subnet_manager_first() -> None:
    fm = found(judged(dev_paste("nccltests-338-h20-802-mpi-abort"), gpu_model="NVIDIA B200"))[
        "nccl-fabric-manager-down"
    ]
    assert [c.action for c in fm.remedy_commands][:2] == ["package-check", "module-load"]


def test_a_run_that_died_after_good_rows_names_the_failure_and_how_far_it_got() -> None:
    report = judged(dev_paste("nccltests-322-h100-1024rank-unhandled-at-32g"))
    failed = found(report)["bench-rank-failed"]
    assert failed.message.startswith(
        "The run failed after 5 row(s), the largest 16 GiB: host HCA-128 reports 'unhandled cuda error (run with "
        "NCCL_DEBUG=INFO for details)' at common.cu:1204 (line 7); 3 more failure line(s)"
    )
    assert "rank -1" not in failed.message
    assert [e["host"] for e in failed.evidence["errors"]] == ["HCA-128", "HCA-108", "HCA-107", "HCA-108"]


def test_a_failure_on_a_named_rank_says_the_rank() -> None:
    failed = found(judged(dev_paste("nccltests-355-2x8h800-devapi-ima-midrow")))["bench-rank-failed"]
    assert failed.message.startswith("The run failed before its first row: rank 0 (node0) reports 'an illegal memory")


def test_one_failure_line_alone_is_a_failed_run_not_a_refusal(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    paste = tmp_path / "run.txt"
    paste.write_text(dev_paste("nccltests-6-unhandled-cuda-one-line"))
    code, out, err = run("analyze", str(paste), "--format", "json")
    assert code == 1, err
    assert [f["code"] for f in json.loads(out)["findings"] if f["severity"] == "fail"] == ["bench-rank-failed"]


# --- a run that printed its setup and then nothing --------------------------------------------------------


def test_a_run_that_stops_before_its_table_is_named_and_not_judged() -> None:
    """NVIDIA/nccl-tests#117: the run printed its parameters and '# Using devices', then nothing. A run that hung in
    NCCL's setup stops there, and so does a paste cut there (several threads' excerpts end that way): the finding
    names the line, at information; before, it failed the box on that alone."""
    report = judged(dev_paste("nccltests-117-4090-hang-after-using-devices"))
    hung = found(report)["bench-run-hung"]
    assert hung.severity == Severity.INFO and "paste cut there" in hung.evidence["severity_reason"]
    assert "The last line it printed is line 4: '# Using devices'." in hung.message


def test_a_run_that_printed_its_table_header_and_no_row_hung_in_its_first_size() -> None:
    """NVIDIA/nccl#104: the column names, then nothing (ACS blocked the peer copies): the classic hang fails, and the
    message says where it stopped."""
    report = judged(dev_paste("nccl-104-m40-hang-after-header"))
    hung = found(report)["bench-run-hung"]
    assert report.gate.verdict == "fail" and hung.severity == Severity.FAIL
    assert "It hung in its first collective" in hung.message


def test_the_hang_names_the_last_line_of_nccl_s_log_beside_the_device_lines() -> None:
    hung = found(judged(dev_paste("nccl-1706-h800-cmd-p2pdisable-header")))["bench-run-hung"]
    assert hung.severity == Severity.INFO  # NCCL's log stops inside its setup, before the table, and never warned
    assert hung.message.startswith("The run on 4 rank(s) of deepseek printed its setup and then nothing")
    assert "line 15: 'deepseek:2081556:2081564 [0] NCCL INFO PROFILER/Plugin: Could not find" in hung.message


def test_a_one_rank_run_that_stopped_after_its_header_says_nothing_of_the_links() -> None:
    """One GPU (NVIDIA/nccl-tests#249, a g5.8xlarge with one A10G): nothing moves between GPUs, so a paste that ends
    after the column header is named but judged nothing; before, it failed the box."""
    report = judged(dev_paste("nccl-tests-249-a10g-single-gpu-header"))
    hung = found(report)["bench-run-hung"]
    assert hung.severity == Severity.INFO and "one rank and no NCCL warning" in hung.evidence["severity_reason"]
    assert report.gate.verdict == "not judged"


def test_a_device_list_cut_short_is_the_paste_stopping_not_the_run() -> None:
    """dstackai/dstack#2604: 2 hosts of 8 H100, the paste ends at rank 9 (8 ranks on the first host, 2 on the last).
    nccl-tests prints every device line at once, so the copy stopped there: before, the run was failed as hung.
    The same list whole, ending after every host's ranks, reads as a run that stopped in its setup (not judged); with
    the table's column names after it, as a run that hung in its first size."""
    head = "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) iters: 20\n#\n# Using devices\n"
    rank = "#  Rank {r:2d} Group  0 Pid {p:6d} on {h} device  {d} [0000:8d:00] NVIDIA H100 80GB HBM3\n"
    ranks = [rank.format(r=r, p=100 + r, h=f"node{r // 8}", d=r % 8) for r in range(16)]
    cut = found(judged(head + "".join(ranks[:10])))["bench-run-hung"]
    assert cut.severity == Severity.INFO and "cut there, not the run" in cut.evidence["severity_reason"]
    whole = found(judged(head + "".join(ranks)))["bench-run-hung"]
    assert whole.severity == Severity.INFO and "before its table" in whole.evidence["severity_reason"]
    table = "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
    after = found(judged(head + "".join(ranks) + table))["bench-run-hung"]
    assert after.severity == Severity.FAIL
    # the same list with ranks 3-12 left out (NVIDIA/nccl#1531 pastes "......" in their place): an excerpt, not a hang
    elided = "".join(ranks[:3]) + "......\n" + "".join(ranks[13:])
    for shown in (elided, elided.replace("......\n", "")):
        cut = judged(head + shown + table)
        assert found(cut)["bench-run-hung"].severity == Severity.INFO
        assert "poster left lines out" in found(cut)["bench-run-hung"].evidence["severity_reason"]
        assert "gpus-short-of-node" not in found(cut)


def test_a_one_rank_run_whose_nccl_log_warned_before_it_stopped_still_hung() -> None:
    """NVIDIA/nccl-tests#217: one GPU, bootstrap on the loopback, a socket WARN, then nothing: NCCL itself is stuck."""
    hung = found(judged(dev_paste("nccl-tests-217-a6000-lo-socket-closed")))["bench-run-hung"]
    assert hung.severity == Severity.WARN


def test_a_run_with_rows_or_a_footer_did_not_hang() -> None:
    lines = GH200.split("\n")
    assert "bench-run-hung" not in found(judged("\n".join(lines[:14]) + "\n"))  # rows, no footer: an excerpt
    assert "bench-run-hung" not in found(judged("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 3.9\n"))


def test_rows_cut_before_the_footer_are_judged_not_called_incomplete() -> None:
    lines = GH200.split("\n")
    report = judged("\n".join(lines[:16]) + "\n")
    assert "bench-incomplete" not in found(report) and report.gate.verdict == "pass"


# --- the data check ----------------------------------------------------------------------------------------


def test_out_of_bounds_failed_alone_is_wrong_data() -> None:
    report = judged(dev_paste("nccl-1261-a100-4gpu-ll128-oob-failed"))  # one line: '# Out of bounds values : 16 FAILED'
    bad = found(report)["bench-data-corruption"]
    assert report.gate.verdict == "fail"
    assert bad.message == (
        "nccl-tests' data check failed: 16 value(s) out of bounds (line 1: '# Out of bounds values : 16 FAILED'): "
        "the collective returned wrong data."
    )


def test_wrong_rows_and_their_footer_are_one_finding() -> None:
    report = judged((NCCLTESTS / "derived-gh200-wrong-elements.txt").read_text())
    assert [f.code for f in report.findings if f.code == "bench-data-corruption"] == ["bench-data-corruption"]


# --- a tail of rows ----------------------------------------------------------------------------------------


def test_a_tail_of_rows_with_its_footer_is_judged_and_says_its_ranks() -> None:
    """Six rows of a 24-rank run and its footer (NVIDIA/nccl-tests#119): sound rows, data check OK."""
    loaded = load_text(dev_paste("nccltests-119-tail-multinode-96gbs-healthy"), "paste.txt")
    report = analyze_facts(loaded)
    assert report.gate.verdict == "pass" and loaded.source.description == "nccl-tests text output: 24 ranks"
    assert loaded.bench.world_size == 24  # type: ignore[union-attr]
    assert any("a run across nodes" in n for n in loaded.bench.notes)  # type: ignore[union-attr]
    assert {i.action for i in report.input_issues} == {"excerpt"}


# --- several runs in one paste ---------------------------------------------------------------------------


def slower(text: str, by: float) -> str:
    """The run with every busbw and algbw divided by ``by`` (and its times multiplied)."""
    out = []
    for line in text.split("\n"):
        parts = line.split()
        if len(parts) == 13 and parts[0].isdigit():
            for k in (5, 9):
                parts[k] = f"{float(parts[k]) * by:.2f}"
            for k in (6, 7, 10, 11):
                parts[k] = f"{float(parts[k]) / by:.2f}"
            line = "  ".join(parts)
        out.append(line)
    return "\n".join(out)


def test_a_good_run_then_one_four_times_slower_does_not_pass() -> None:
    report = judged(GH200 + slower(GH200, 4))
    disagree = found(report)["bench-runs-disagree"]
    assert report.gate.verdict != "pass"
    assert disagree.message.startswith("The paste holds 2 runs of all_reduce on the same GPUs, and they disagree: ")
    assert "run 2 (line 25) reaches 5.71 GB/s busbw at 128 MiB where the first run reaches 22.86 (25%)" in (
        disagree.message
    )
    assert [g.name for g in report.bench.groups] == ["all", "run 2 (line 25)"]  # type: ignore[union-attr]


def test_two_runs_that_agree_are_both_judged_and_pass_the_comparison() -> None:
    report = judged(GH200 + GH200)
    assert "bench-runs-disagree" not in found(report)
    assert len(report.bench.groups) == 2  # type: ignore[union-attr]


def test_a_run_of_other_gpus_glued_after_the_first_is_said_not_judged_with_it() -> None:
    other = GH200.replace("NVIDIA GH200 120GB", "NVIDIA H200")
    report = judged(GH200 + other)
    (apart,) = [i for i in report.input_issues if i.message.startswith("run 2 starts here")]
    assert apart.action == "recovered" and "a run on other GPUs (2 rank(s): NVIDIA H200)" in apart.message
    assert report.gate.verdict == "warn"  # never PASS: half the paste was not judged
    assert len(report.bench.groups) == 1  # type: ignore[union-attr]


# --- small-message latency ---------------------------------------------------------------------------------

H800_BROADCAST = """\
$ ./build/broadcast_perf -b 8 -e 1M -f 2 -g 2
# nThread 1 nGpus 2 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1
#
# Using devices
#  Rank  0 Group  0 Pid  41022 on   h800-07 device  0 [0000:18:00] NVIDIA H800
#  Rank  1 Group  0 Pid  41022 on   h800-07 device  1 [0000:2a:00] NVIDIA H800
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float    none       0   127.41    0.00    0.00      0   126.93    0.00    0.00      0
          16             4     float    none       0   127.12    0.00    0.00      0   127.80    0.00    0.00      0
          32             8     float    none       0   128.03    0.00    0.00      0   127.33    0.00    0.00      0
"""
"""A 2-rank broadcast on one H800 box at about 127 µs for its smallest sizes (the shape of a pasted run)."""


def test_small_messages_at_ten_times_nvlink_latency_are_a_finding() -> None:
    report = judged(H800_BROADCAST, gpu_model="NVIDIA H800")
    slow = found(report)["bench-latency-high"]
    assert slow.severity == Severity.WARN and "bench-incomplete" not in found(report)
    assert slow.message.startswith(
        "Its smallest messages take 126.93 µs (8 B, the fastest of 3 size(s) up to 1 KiB) where NCCL's own latency "
        "model puts a 2-rank broadcast over NVLink at 7.2 µs (6.6 µs + 1 step(s) x 0.6 µs"
    )
    assert slow.evidence["model_us"] == 7.2 and slow.evidence["link"] == "NVLink"


@pytest.mark.parametrize(
    "name",
    [
        "nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt",  # 32 µs, model 15 µs over NVLink
        "nccltest-8x4090-p2p-unlocked-tinygrad-driver-1.txt",  # 38.8 µs, model 20.6 µs over PCIe
        "nccltest-a3mega-h100-2node-16gpu-1.txt",  # two hosts: not judged
    ],
)
def test_healthy_boxes_small_messages_are_no_finding(name: str) -> None:
    assert "bench-latency-high" not in found(judged((NCCLTESTS / name).read_text()))


def test_an_old_format_row_whose_max_error_breaks_the_bound_fails_without_its_footer() -> None:
    """NVIDIA/nccl#831's header and one row, as a window pastes them: float sums off by 1 in the in-place half."""
    lines = dev_paste("nccl-831-a100-socket-ll128-oob-failed").splitlines()
    report = judged("\n".join(lines[8:11]))
    corrupt = found(report)["bench-data-corruption"]
    assert report.gate.verdict == "fail"
    assert "above nccl-tests' bound of 1e-05 for float" in corrupt.message and "line 3" in corrupt.message


# --- large messages below any GPU path -----------------------------------------------------------------------------

V100_8_NODES = dev_paste("nccl-tests-78-allreduce-v100-8node-ib")
"""NVIDIA/nccl-tests#78: 8 V100 nodes over IB at 4.3 GB/s busbw for 512 MiB (the thread: far below the network)."""


def test_large_messages_below_any_gpu_path_warn_when_no_figure_holds_them() -> None:
    tail = "\n".join(V100_8_NODES.splitlines()[5:8])  # the last row and the footer, as a window pastes them
    report = judged(tail)
    floor = found(report)["bench-busbw-floor"]
    assert report.gate.verdict == "warn" and floor.severity == Severity.WARN
    assert floor.message.startswith("Its largest messages move at most 4.32 GB/s busbw (512 MiB, the best of 1 size(s)")
    assert floor.evidence["floor_gbps"] == 5.0


def test_a_run_across_nodes_is_held_to_one_100g_rdma_nic() -> None:
    """CSCS's docs: 2 nodes of 4 GH200 with the CXI hook off, 5.5 GB/s busbw at 128 MiB (about 20 with it on)."""
    floor = found(judged(dev_paste("cscs-docs-cxi-hook-disabled-allreduce")))["bench-busbw-floor"]
    assert (floor.evidence["floor_gbps"], floor.evidence["across_nodes"]) == (10.0, True)
    assert "below 10 GB/s: less than one 100 Gb/s RDMA NIC carries between nodes" in floor.message


def test_the_floor_says_why_no_figure_held_the_run() -> None:
    """The model named, the ranks not pasted: NCCL's figure for it cannot be placed on them."""
    floor = found(judged(V100_8_NODES, gpu_model="Tesla V100-SXM2-32GB"))["bench-busbw-floor"]
    assert floor.message.endswith(
        "no figure of the GPU model held it (the paste shows no '#  Rank' lines naming the ranks' GPUs)."
    )


def test_the_floor_leaves_runs_a_figure_holds_and_fast_runs_alone() -> None:
    held = found(judged(V100_8_NODES, expect_busbw_gbps=40.0))
    assert "bench-busbw-floor" not in held and "bench-below-expected" in held
    assert "bench-busbw-floor" not in found(judged(GH200))  # 2 nodes at about 20 GB/s


# --- the command line --------------------------------------------------------------------------------------


def test_variables_on_the_pasted_command_line_say_what_the_run_measured() -> None:
    report = judged(dev_paste("nccltests-117-4090-hang-after-using-devices"))
    typed = found(report)["nccl-env-override"]
    assert typed.message.startswith("The pasted command line shows 1 NCCL setting(s) that change the path")
    assert typed.remedy_commands == ()  # typed where it is seen: nothing to find


# --- a sweep that falls at one size ---------------------------------------------------------------------------------


def test_a_size_far_below_both_neighbours_is_named_with_its_neighbours() -> None:
    """aws/aws-ofi-nccl#65 (two p4d): 64 MiB at 19.1 GB/s between 32.57 and 30.73, in both halves of the row."""
    (dip,) = [
        f for f in judged(dev_paste("aws-ofi-nccl-65-p4d-busbw-dip-64mb")).findings if f.code == "bench-sweep-dip"
    ]
    assert dip.severity == Severity.INFO  # healthy boxes show it where NCCL switches protocol
    assert dip.message.startswith("The all_reduce sweep falls at 64 MiB: 19.1 GB/s busbw, 62% of the lower")
    assert [d["size_bytes"] for d in dip.evidence["dips"]] == [64 << 20]


def test_a_sweep_that_only_rises_or_wobbles_has_no_dip() -> None:
    assert "bench-sweep-dip" not in found(judged(GH200))
    wobble = dev_paste("aws-ofi-nccl-65-p4d-busbw-dip-64mb").replace("19.10", "25.10").replace("19.09", "25.09")
    assert "bench-sweep-dip" not in found(judged(wobble))  # 77% of its neighbour: above the 70% line


# --- a sweep that collapses at its large sizes ----------------------------------------------------------------------


def test_a_sweep_that_falls_from_one_size_on_and_stays_down_is_a_collapse() -> None:
    """NVIDIA/nccl#1453 (H100, rows tagged per write by MPICH): 29.5 GB/s at 32 MiB, then about 5 GB/s to 512 MiB."""
    report = judged(dev_paste("nccl-1453-h100-allreduce-busbw-collapse"))
    collapse = found(report)["bench-sweep-collapse"]
    assert collapse.severity == Severity.WARN and report.gate.verdict == "warn"
    assert collapse.message.startswith(
        "The all_reduce sweep collapses at 64 MiB: 29.5 GB/s busbw at 32 MiB, then 5.27 GB/s, and no larger size "
        "gets back above 5.31 GB/s (4 sizes up to 512 MiB, 18% of the best at most)."
    )
    assert collapse.evidence["from_size_bytes"] == 64 << 20 and collapse.evidence["best_busbw_gbps"] == 29.5


def _rows(busbw: list[float]) -> str:
    """A sweep from 1 MiB up with these busbw figures (out-of-place and in-place alike)."""
    rows = []
    for k, bw in enumerate(busbw):
        size = (1 << 20) << k
        time_us = size / (bw * 1e3 / 1.75)
        rows.append(
            f"{size:>12}  {size // 4:>12}     float     sum      -1  {time_us:7.1f}  {bw / 1.75:6.2f}  {bw:6.2f}"
            f"      0  {time_us:7.1f}  {bw / 1.75:6.2f}  {bw:6.2f}      0"
        )
    return (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong\n" + "\n".join(rows) + "\n"
    )


@pytest.mark.parametrize(
    "busbw",
    [
        [10.0, 20.0, 40.0, 80.0, 120.0, 150.0, 160.0, 162.0],  # rises and flattens
        [10.0, 20.0, 40.0, 80.0, 120.0, 150.0, 160.0, 70.0],  # one slow last size: a blip, not a collapse
        [10.0, 20.0, 40.0, 80.0, 30.0, 31.0, 150.0, 160.0],  # falls and recovers: a dip
        [10.0, 20.0, 40.0, 80.0, 100.0, 110.0, 60.0, 58.0],  # falls to 53% of the best: within the line
    ],
)
def test_a_sweep_that_holds_up_or_recovers_is_no_collapse(busbw: list[float]) -> None:
    assert "bench-sweep-collapse" not in found(judged(_rows(busbw)))


def test_a_collapse_at_the_last_two_sizes_is_named() -> None:
    collapse = found(judged(_rows([10.0, 20.0, 40.0, 80.0, 120.0, 150.0, 40.0, 38.0])))["bench-sweep-collapse"]
    assert collapse.evidence["from_size_bytes"] == 64 << 20 and collapse.evidence["largest_after_gbps"] == 40.0


def test_ranks_on_unnamed_hosts_are_held_to_the_networks_latency() -> None:
    """dstackai/dstack#3069: two p5.4xlarge without EFA, a tail of rows: 2 ranks at 119 µs for 1 KiB, where NCCL
    models 16.6 µs even with every step between nodes (TCP sockets carried the run)."""
    latency = found(judged(dev_paste("dstack-3069-p5-4xlarge-no-efa-nccl-tests")))["bench-latency-high"]
    assert latency.severity == Severity.WARN
    assert "a 2-rank all_reduce over the network at 16.6 µs (6.6 µs + 2 step(s) x 5 µs" in latency.message
    assert (latency.evidence["link"], latency.evidence["ranks"]) == ("the network", 2)


# --- a run of one rank ----------------------------------------------------------------------------------------------

ONE_RANK_PER_PROCESS = """\
   134217728      33554432     float     sum      -1    631.9  212.41    0.00      0     0.51  263017.30    0.00      0
   134217728      33554432     float     sum      -1    419.3  320.07    0.00      0     0.31  428400.03    0.00      0
   536870912     134217728     float     sum      -1   2202.2  243.79    0.00      0     0.31  1747057.96    0.00      0
   268435456      67108864     float     sum      -1   1007.4  266.46    0.00      0     0.31  857621.27    0.00      0
"""
"""Two processes of `mpirun -np 2 all_reduce_perf` built without MPI: each prints its own run of one GPU, the rows
interleaved, busbw 0 (2(n-1)/n of algbw with n = 1) and the in-place half a no-op of 0.3 us."""


def test_rows_of_one_rank_runs_say_so_and_judge_nothing() -> None:
    report = judged(ONE_RANK_PER_PROCESS, gpu_model="NVIDIA H100 80GB HBM3")
    single = found(report)["bench-single-rank"]
    assert single.severity == Severity.INFO and report.gate.verdict == "not judged"
    assert "1 more row(s) repeat a size, each another process's own run" in single.message
    assert "the run had one rank: nothing crossed a link between GPUs" in report.gate.reason
    assert not [i for i in report.input_issues if i.action == "recovered"]  # interleaved runs are not damage


def test_a_run_of_several_ranks_is_not_one_rank() -> None:
    assert "bench-single-rank" not in found(judged(_rows([10.0, 20.0, 40.0, 80.0])))
