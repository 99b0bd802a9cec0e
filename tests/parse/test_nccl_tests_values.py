"""What the nccl-tests reader hands the report, value by value: the rank lines, the rows and their halves, the
footer, each failure with where it happened, the issues said about the paste, glued runs and ``-J`` JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from topoaudit.model.bench import BenchRow, RankInfo, RowProblem, RunFailure
from topoaudit.model.nccl import LogLine
from topoaudit.model.values import Failed, Unsupported
from topoaudit.parse.nccl_tests import (
    NcclTestsParseError,
    algorithm_in,
    looks_like_nccl_tests,
    machine_from_result,
    parse_nccl_tests,
    ranks_from_rows,
)
from topoaudit.parse.topo_matrix import ParseIssue

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccltests"
GH200 = (FIXTURES / "nccltest-gh200-alps-2node-1gpu-each-slingshot-1.txt").read_text()
LINES = GH200.split("\n")
TABLE = LINES[8:11]  # the three header lines of the table
ROWS = LINES[11:19]  # 1 MiB .. 128 MiB
RANK_LINE = "#  Rank  0 Group  0 Pid  1 on  x device  0 [0000:1a:00.0] GPU"
NOT_IN_INPUT = Unsupported("nccl-tests", "in-place half not in the input")
NO_HOST = Unsupported("nccl-tests", "the line names no host")
NO_PID = Unsupported("nccl-tests", "the line names no pid")
NO_RANK = Unsupported("nccl-tests", "the line names no rank")
NO_CUDA_ERROR = Unsupported("nccl-tests", "no CUDA error named")


# --- a whole real run ----------------------------------------------------------------------------------------


def test_a_whole_two_node_run_reads_every_rank_row_and_footer_figure() -> None:
    parsed = parse_nccl_tests(GH200)
    result = parsed.result
    assert (parsed.flavour, parsed.format, parsed.issues, parsed.runs) == ("nccl-tests", "text", (), (result,))
    assert result.ranks == (
        RankInfo(0, 0, "nid007106", "cuda:0", 0, "0009:01:00.0", "NVIDIA GH200 120GB", 15784),
        RankInfo(1, 0, "nid007109", "cuda:0", 0, "0009:01:00.0", "NVIDIA GH200 120GB", 24926),
    )
    assert (result.source, result.collective, result.backend, result.world_size) == (
        "nccl-tests",
        "all_reduce",
        "nccl",
        2,
    )
    assert result.hosts == ("nid007106", "nid007109") and result.status == "complete"
    assert result.version == "nccl-tests version 2.18.2 nccl-headers=23007 nccl-library=23007"
    assert (result.avg_busbw_gbps, result.out_of_bounds, result.nccl_version) == (14.9966, 0, "2.30.7")
    assert result.command == Unsupported("nccl-tests", "no command line in the paste")
    assert (result.settings, result.failures, result.row_problems, result.errors) == ((), (), (), ())
    assert result.last_output == LogLine(23, "# Collective test concluded: all_reduce_perf")
    assert result.environment == {}
    (group,) = result.groups
    assert (group.name, group.kind, group.ranks, group.gpus) == (
        "all",
        "all",
        (0, 1),
        ("nid007106:cuda:0", "nid007109:cuda:0"),
    )
    assert (group.plateau_busbw_gbps, group.plateau_size_bytes) == (22.86, 134217728)
    assert (group.peak_busbw_gbps, group.peak_size_bytes) == (22.86, 134217728)
    assert group.expected_busbw_gbps == Unsupported("nccl-tests", "imported run: no machine model")
    assert [r.size_bytes for r in group.rows] == [1 << k for k in range(20, 28)]
    first, last = group.rows[0], group.rows[-1]
    assert (first.size_bytes, first.count, first.dtype, first.time_us, first.algbw_gbps, first.busbw_gbps) == (
        1048576,
        262144,
        "float",
        339.61,
        3.09,
        3.09,
    )
    assert (first.wrong, first.inplace_time_us, first.inplace_busbw_gbps, first.inplace_wrong) == (0, 335.85, 3.12, 0)
    assert (last.count, last.time_us, last.busbw_gbps, last.inplace_time_us, last.inplace_busbw_gbps) == (
        33554432,
        5871.07,
        22.86,
        5867.43,
        22.88,
    )
    assert result.notes == (
        "nccl-tests' 'Avg bus bandwidth' is a mean over every size (and both halves); the plateau is the gate",
    )


def test_the_machine_beside_an_imported_run_is_the_first_host_s_gpus_by_device() -> None:
    text = "\n".join(
        [
            "#  Rank  0 Group  0 Pid  1 on  nodeA device  1 [0000:3b:00.0] NVIDIA H100",
            "#  Rank  1 Group  0 Pid  2 on  nodeA device  0 [0000:1a:00.0] NVIDIA H100",
            "#  Rank  2 Group  0 Pid  3 on  nodeA device  1 [0000:3b:00.0] NVIDIA H100",
            "#  Rank  3 Group  0 Pid  4 on  nodeB device  2 [0000:5d:00.0] NVIDIA H100",
            *TABLE,
            *ROWS,
        ]
    )
    machine = machine_from_result(parse_nccl_tests(text).result)
    assert machine.source == "nccl-tests" and machine.host.hostname == "nodeA"
    assert [(g.index, g.pci_bus_id, g.name) for g in machine.gpus] == [
        (0, "0000:1a:00.0", "NVIDIA H100"),
        (1, "0000:3b:00.0", "NVIDIA H100"),
    ]
    alone = machine_from_result(parse_nccl_tests("\n".join(ROWS)).result)
    assert alone.gpus == () and alone.host.hostname == Unsupported("nccl-tests", "no '#  Rank' lines")


# --- rank lines ------------------------------------------------------------------------------------------------


def test_rank_lines_of_every_era_keep_host_device_bus_name_and_pid() -> None:
    text = "\n".join(
        [
            "#  Rank  0 Group  0 Pid  4001 on  node1 device  0 [0x1a] NVIDIA H100 80GB HBM3",
            "#  Rank  1 Group  0 Pid  4002 on  node1 device  1 [0000:3b:00.0] NVIDIA H100 80GB HBM3  ",
            "#  Rank  2 Pid  5001 on  node2 device  7 [0000:1a:00.0]",
            "#   Rank 3 on node3 device 3 [0x5d] Tesla P100-PCIE-16GB",
        ]
    )
    result = parse_nccl_tests(text).result
    assert result.ranks == (
        RankInfo(
            0,
            0,
            "node1",
            "cuda:0",
            0,
            Unsupported("nccl-tests", "only the PCI bus number is printed (0x1a)"),
            "NVIDIA H100 80GB HBM3",
            4001,
        ),
        RankInfo(1, 1, "node1", "cuda:1", 1, "0000:3b:00.0", "NVIDIA H100 80GB HBM3", 4002),
        RankInfo(2, 7, "node2", "cuda:7", 7, "0000:1a:00.0", Unsupported("nccl-tests", "no device name printed"), 5001),
        RankInfo(
            3,
            3,
            "node3",
            "cuda:3",
            3,
            Unsupported("nccl-tests", "only the PCI bus number is printed (0x5d)"),
            "Tesla P100-PCIE-16GB",
            0,
        ),
    )
    assert result.world_size == 4 and result.hosts == ("node1", "node2", "node3")
    assert result.groups[0].gpus == ("node1:cuda:0", "node1:cuda:1", "node2:cuda:7", "node3:cuda:3")
    assert result.status == "partial" and result.groups[0].rows == ()
    assert result.groups[0].peak_busbw_gbps == Unsupported("nccl-tests", "no rows")
    assert result.groups[0].plateau_busbw_gbps == Unsupported("nccl-tests", "no size >= 1 MiB in the input")
    assert result.avg_busbw_gbps == Unsupported("nccl-tests", "no 'Avg bus bandwidth' footer (output cut?)")
    assert result.out_of_bounds == Unsupported("nccl-tests", "no 'Out of bounds values' footer (output cut?)")
    assert result.last_output == LogLine(4, "#   Rank 3 on node3 device 3 [0x5d] Tesla P100-PCIE-16GB")


# --- failures ----------------------------------------------------------------------------------------------------

FAILING = """\
#  Rank  0 Group  0 Pid  4001 on  node1 device  0 [0000:1a:00.0] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  4002 on  node1 device  1 [0000:3b:00.0] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  5001 on  node2 device  0 [0000:1a:00.0] NVIDIA H100 80GB HBM3
node1: Test CUDA failure common.cu:941 'system not yet initialized'
.. node1 pid 4002: Test failure common.cu:401
.. node1 pid 4002: Test failure common.cu:877
node2: Test timeout (300s) common.cu:538
.. node3: Test failure common.cu:401
Invalid number of GPUs: 8 requested but only 4 were found
# error: ncclCommInitRank failed
"""


def test_each_failure_is_typed_and_placed_on_the_rank_its_host_and_pid_name() -> None:
    parsed = parse_nccl_tests(FAILING)
    result = parsed.result
    assert result.failures == (
        RunFailure(
            "cuda",
            "system not yet initialized",
            "",
            "common.cu:941",
            "node1",
            4002,
            1,
            802,
            LogLine(4, "node1: Test CUDA failure common.cu:941 'system not yet initialized'"),
        ),
        RunFailure(
            "timeout",
            "no progress for 300 s",
            "",
            "common.cu:538",
            "node2",
            NO_PID,
            2,
            NO_CUDA_ERROR,
            LogLine(7, "node2: Test timeout (300s) common.cu:538"),
        ),
        RunFailure(
            "test",
            "Test failure",
            "",
            "common.cu:401",
            "node3",
            NO_PID,
            NO_RANK,
            NO_CUDA_ERROR,
            LogLine(8, ".. node3: Test failure common.cu:401"),
        ),
        RunFailure(
            "gpus",
            "Invalid number of GPUs: 8 requested but only 4 were found",
            "",
            "",
            NO_HOST,
            NO_PID,
            NO_RANK,
            NO_CUDA_ERROR,
            LogLine(9, "Invalid number of GPUs: 8 requested but only 4 were found"),
        ),
        RunFailure(
            "nccl",
            "ncclCommInitRank failed",
            "",
            "",
            NO_HOST,
            NO_PID,
            NO_RANK,
            NO_CUDA_ERROR,
            LogLine(10, "# error: ncclCommInitRank failed"),
        ),
    )
    assert result.status == "failed" and parsed.issues == ()
    assert result.last_output == LogLine(10, "# error: ncclCommInitRank failed")


def test_a_failure_on_a_host_with_two_ranks_and_no_pid_names_no_rank() -> None:
    text = "\n".join([*FAILING.splitlines()[:3], "node1: Test NCCL failure common.cu:1097 'internal error'"])
    (failure,) = parse_nccl_tests(text).result.failures
    assert (failure.kind, failure.host, failure.pid, failure.rank, failure.cuda_error) == (
        "nccl",
        "node1",
        NO_PID,
        NO_RANK,
        NO_CUDA_ERROR,
    )


def test_a_trace_line_names_the_pid_of_an_unplaced_failure_of_its_host_and_no_other() -> None:
    text = "\n".join(
        [
            *FAILING.splitlines()[:3],
            "node2: Test CUDA failure common.cu:100 'out of memory'",
            "node1: Test CUDA failure common.cu:941 'out of memory'",
            ".. node2 pid 5001: Test failure common.cu:401",
        ]
    )
    failures = parse_nccl_tests(text).result.failures
    assert [(f.host, f.pid, f.rank, f.cuda_error) for f in failures] == [
        ("node2", 5001, 2, 2),
        ("node1", NO_PID, NO_RANK, 2),
    ]


def test_a_row_cut_by_a_failure_names_the_size_where_the_run_stopped() -> None:
    text = "\n".join(
        [*LINES[:13], "     4194304       1048576     float     sum      -1 nid007106: Test CUDA failure x.cu:1 'boom'"]
    )
    parsed = parse_nccl_tests(text)
    assert [r.size_bytes for r in parsed.result.groups[0].rows] == [1048576, 2097152]
    assert parsed.issues == (
        ParseIssue(14, "recovered", "the run failed in the row for 4194304 bytes; no figure in it"),
    )
    (failure,) = parsed.result.failures
    assert (failure.message, failure.source_location, failure.host, failure.rank) == ("boom", "x.cu:1", "nid007106", 0)
    assert parsed.result.status == "failed"


def test_the_footer_s_data_check_is_a_failure_only_when_it_failed() -> None:
    ok = parse_nccl_tests("\n".join([*LINES[:19], "# Out of bounds values : 0 OK"])).result
    assert ok.out_of_bounds == 0 and ok.failures == () and ok.status == "partial"
    failed = parse_nccl_tests("\n".join([*LINES[:19], "# Out of bounds values : 0 FAILED"])).result
    assert failed.out_of_bounds == 0 and [f.kind for f in failed.failures] == ["data-check"]
    counted = parse_nccl_tests("\n".join([*LINES[:19], "# Out of bounds values : 3"])).result
    (failure,) = counted.failures
    assert failure == RunFailure(
        "data-check",
        "Out of bounds values : 3",
        "",
        "",
        NO_HOST,
        NO_PID,
        NO_RANK,
        NO_CUDA_ERROR,
        LogLine(20, "# Out of bounds values : 3"),
    )
    assert counted.out_of_bounds == 3 and counted.status == "partial"  # a data-check failure is not a crash


# --- footers -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("footer", "avg", "status"),
    [
        ("# Avg bus bandwidth    : 14.9966 ", 14.9966, "complete"),
        ("# Avg bus bandwidth    : 0 ", 0.0, "complete"),
        (
            "# Avg bus bandwidth    : nan ",
            Unsupported("nccl-tests", "the footer's average 'nan' is not a figure"),
            "partial",
        ),
        (
            "# Avg bus bandwidth    : -1.5",
            Unsupported("nccl-tests", "the footer's average '-1.5' is not a figure"),
            "partial",
        ),
        (
            "# Avg bus bandwidth    : ",
            Unsupported("nccl-tests", "no 'Avg bus bandwidth' footer (output cut?)"),
            "partial",
        ),
    ],
)
def test_the_footer_s_average_is_kept_only_when_it_is_a_figure(footer: str, avg: object, status: str) -> None:
    result = parse_nccl_tests("\n".join([*LINES[:19], footer])).result
    assert result.avg_busbw_gbps == avg and result.status == status
    assert len(result.groups[0].rows) == 8


# --- rows -----------------------------------------------------------------------------------------------------------


def test_a_row_trimmed_to_its_out_of_place_half_says_so_and_marks_the_in_place_figures_absent() -> None:
    trimmed = ROWS[0].split("-1")[0] + "-1   339.61    3.09    3.09       0"
    parsed = parse_nccl_tests("\n".join([*LINES[:11], trimmed]))
    (row,) = parsed.result.groups[0].rows
    assert (row.time_us, row.busbw_gbps, row.wrong) == (339.61, 3.09, 0)
    assert (row.inplace_time_us, row.inplace_busbw_gbps, row.inplace_wrong) == (NOT_IN_INPUT,) * 3
    assert parsed.issues == (ParseIssue(12, "recovered", "row trimmed: only the out-of-place half is present"),)


def test_a_row_without_its_wrong_count_says_the_column_is_missing() -> None:
    (row,) = (
        parse_nccl_tests("\n".join([*LINES[:11], "1048576 262144 float sum -1 339.61 3.09 3.09"])).result.groups[0].rows
    )
    assert row.wrong == Unsupported("nccl-tests", "#wrong column not in the input")


@pytest.mark.parametrize(
    ("wrong", "read"),
    [
        ("0", 0),
        ("17", 17),
        ("N/A", Unsupported("nccl-tests", "data check disabled (-c 0): #wrong is N/A")),
        ("n/a", Unsupported("nccl-tests", "data check disabled (-c 0): #wrong is N/A")),
        ("-1", Unsupported("nccl-tests", "unreadable #wrong '-1'")),
        ("inf", Unsupported("nccl-tests", "unreadable #wrong 'inf'")),
        ("x" * 50, Unsupported("nccl-tests", f"unreadable #wrong {'x' * 40!r}")),
    ],
)
def test_the_wrong_count_is_a_count_or_says_why_not(wrong: str, read: object) -> None:
    line = f"1048576 262144 float sum -1 339.61 3.09 3.09 {wrong} 335.85 3.12 3.12 {wrong}"
    (row,) = parse_nccl_tests("\n".join([*LINES[:11], line])).result.groups[0].rows
    assert row.wrong == read and row.inplace_wrong == read


@pytest.mark.parametrize(
    ("error", "read"),
    [
        ("0", 0),
        ("0e+00", 0),
        ("2e-07", 0),  # within float's bound (1e-5): nccl-tests counts no element wrong
        ("3e-04", Unsupported("nccl-tests", "old format reports a max error 3e-04, above the bound for float")),
    ],
)
def test_the_old_error_column_is_a_deviation_not_a_count(error: str, read: object) -> None:
    header = (
        "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error"
    )
    line = f"  1048576   262144   float   sum   339.61   3.09   3.09  {error}   335.85   3.12   3.12  {error}"
    (row,) = parse_nccl_tests("\n".join([header, line])).result.groups[0].rows
    assert (row.time_us, row.busbw_gbps, row.inplace_busbw_gbps) == (339.61, 3.09, 3.12)
    assert row.wrong == read and row.inplace_wrong == read


@pytest.mark.parametrize(
    ("figures", "why"),
    [
        ("0 3.09 3.09", "a time of 0"),
        ("-1 3.09 3.09", "a negative time (-1)"),
        ("nan 3.09 3.09", "time 'nan', not a number"),
        ("1.1e12 3.09 3.09", "time 1.1e12, beyond any measurement"),
        ("339.61 -0.5 3.09", "a negative algbw (-0.5)"),
        ("339.61 inf 3.09", "algbw 'inf', not a number"),
        ("339.61 1000001 3.09", "algbw 1000001, beyond any measurement"),
        ("339.61 3.09 -inf", "busbw '-inf', not a number"),
        ("339.61 3.09 1e308", "busbw 1e308, beyond any measurement"),
        ("1.0000005e12 3.09 3.09", "time 1.0000005e12, beyond any measurement"),
        ("1 1e6 -1", "a negative busbw (-1)"),
        ("2e6 3.09 -1", "a negative busbw (-1)"),
    ],
)
def test_an_impossible_out_of_place_figure_leaves_the_row_out_saying_which(figures: str, why: str) -> None:
    line = f"1048576 262144 float sum -1 {figures} 0 335.85 3.12 3.12 0"
    parsed = parse_nccl_tests("\n".join([*LINES[:11], line, ROWS[1]]))
    message = f"the row for 1048576 bytes has {why}; left out of the figures"
    assert parsed.result.row_problems == (RowProblem("impossible", 1048576, message, LogLine(12, line)),)
    assert [r.size_bytes for r in parsed.result.groups[0].rows] == [2097152]
    assert parsed.issues == (ParseIssue(12, "recovered", message),)


@pytest.mark.parametrize(
    "figures",
    ["1e-3 0 0", "1e12 1e6 1e6", "1 0 1000000"],
)
def test_figures_at_the_bounds_of_a_measurement_are_kept(figures: str) -> None:
    line = f"1048576 262144 float sum -1 {figures} 0 {figures} 0"
    parsed = parse_nccl_tests("\n".join([*LINES[:11], line]))
    (row,) = parsed.result.groups[0].rows
    assert (row.time_us, row.algbw_gbps, row.busbw_gbps) == tuple(float(x) for x in figures.split())
    assert row.inplace_time_us == float(figures.split()[0]) and parsed.result.row_problems == ()


def test_an_impossible_in_place_half_keeps_the_out_of_place_row_and_says_why() -> None:
    line = "1048576 262144 float sum -1 339.61 3.09 3.09 0 0 3.12 3.12 0"
    parsed = parse_nccl_tests("\n".join([*LINES[:11], line]))
    (row,) = parsed.result.groups[0].rows
    failed = Failed("nccl-tests", "the in-place half has a time of 0")
    assert (row.busbw_gbps, row.inplace_time_us, row.inplace_busbw_gbps, row.inplace_wrong) == (
        3.09,
        failed,
        failed,
        failed,
    )
    message = "the in-place half of the row for 1048576 bytes has a time of 0"
    assert parsed.result.row_problems == (RowProblem("impossible", 1048576, message, LogLine(12, line)),)
    assert parsed.issues == (ParseIssue(12, "recovered", message),)


@pytest.mark.parametrize("size", ["12345678901234567", str((1 << 50) + 1)])
def test_a_size_no_buffer_can_have_is_left_out(size: str) -> None:
    line = f"{size} 262144 float sum -1 339.61 3.09 3.09 0 335.85 3.12 3.12 0"
    parsed = parse_nccl_tests("\n".join([*LINES[:11], line, ROWS[0]]))
    message = f"the row's size {size!r} is not a possible size; left out"
    assert parsed.result.row_problems == (RowProblem("impossible", 0, message, LogLine(12, line)),)
    assert [r.size_bytes for r in parsed.result.groups[0].rows] == [1048576]


def test_the_largest_possible_size_is_a_row() -> None:
    line = f"{1 << 50} 262144 float sum -1 339.61 3.09 3.09 0 335.85 3.12 3.12 0"
    (row,) = parse_nccl_tests("\n".join([*LINES[:11], line])).result.groups[0].rows
    assert row.size_bytes == 1 << 50


def test_a_conflicting_repeat_names_both_lines_and_a_third_copy_adds_nothing() -> None:
    slow = ROWS[6].replace("22.50   22.50", " 5.62    5.62")
    parsed = parse_nccl_tests("\n".join([*LINES[:18], slow, slow, ROWS[6], ROWS[7]]))
    message = (
        "67108864 bytes appears twice with other figures (line 18: busbw 22.5 GB/s, line 19: 5.62 GB/s); "
        "neither is judged"
    )
    assert parsed.result.row_problems == (RowProblem("conflict", 67108864, message, LogLine(19, slow.strip())),)
    assert parsed.issues == (ParseIssue(19, "recovered", message),)
    assert len(parsed.result.groups[0].rows) == 7 and len(parsed.runs) == 1


def test_a_row_pasted_twice_is_said_once() -> None:
    parsed = parse_nccl_tests("\n".join([*LINES[:19], ROWS[7]]))
    assert parsed.issues == (ParseIssue(20, "ignored", "the row for 134217728 bytes repeats line 19"),)
    assert len(parsed.runs) == 1 and len(parsed.result.groups[0].rows) == 8


def test_noise_inside_the_table_is_ignored_with_its_line_and_mpi_prefixes_are_stripped() -> None:
    text = "\n".join(
        [
            *LINES[:12],
            "gpu-a: NCCL INFO comm 0x55 rank 0 nranks 2 - Init COMPLETE",
            *(f"[1,0]<stdout>:{row}" for row in ROWS[1:3]),
        ]
    )
    parsed = parse_nccl_tests(text)
    assert parsed.issues == (
        ParseIssue(
            13,
            "ignored",
            "not a table row (MPI/NCCL noise?): gpu-a: NCCL INFO comm 0x55 rank 0 nranks 2 - Init COMPLETE",
        ),
    )
    assert [r.size_bytes for r in parsed.result.groups[0].rows] == [1048576, 2097152, 4194304]
    assert parsed.result.last_output == LogLine(15, ROWS[2].strip())


def test_rows_alone_are_read_with_the_assumed_columns_and_their_rank_count() -> None:
    parsed = parse_nccl_tests("\n".join(row.replace("     float", " float") for row in ROWS), name="x.txt")
    result = parsed.result
    assert len(result.groups[0].rows) == 8 and result.collective == "all_reduce"
    assert parsed.issues == (
        ParseIssue(0, "excerpt", "no column header: assumed time/algbw/busbw/#wrong per half"),
        ParseIssue(0, "excerpt", "no '#  Rank' lines: ranks, hosts and devices unknown"),
    )


def test_rows_of_a_data_movement_collective_without_its_name_are_read_from_their_figures() -> None:
    """dstack's A3 Mega guide prints the table without nccl-tests' `#` lines: redop none with busbw below algbw is
    all_gather or alltoall, which share the busbw factor, so the sweep is held to the same figure either way and
    nothing is damaged; busbw equal to algbw is sendrecv; a root is a broadcast's."""
    even = [r.replace("     sum      -1", "    none      -1") for r in ROWS]  # 2 ranks: busbw equals algbw
    assert parse_nccl_tests("\n".join([*TABLE, *even])).result.collective == "sendrecv"
    halved = [_with_busbw_halved(r) for r in even]  # all_gather's (n-1)/n of 2 ranks
    parsed = parse_nccl_tests("\n".join([*TABLE, *halved]))
    assert parsed.result.collective == "all_gather"
    issue = ParseIssue(
        0, "excerpt", "collective not named; redop 'none': all_gather or alltoall (the same busbw factor)"
    )
    assert issue in parsed.issues and not [i for i in parsed.issues if i.action == "recovered"]
    rooted = [_with_busbw_halved(r.replace("    none      -1", "    none       0")) for r in even]
    assert parse_nccl_tests("\n".join([*TABLE, *rooted])).result.collective == "broadcast"


def _with_busbw_halved(row: str) -> str:
    tokens = row.split()
    tokens[7], tokens[11] = f"{float(tokens[6]) / 2:.2f}", f"{float(tokens[10]) / 2:.2f}"
    return "  ".join(tokens)


@pytest.mark.parametrize(
    ("name", "collective"),
    [
        ("sendrecv_perf.log", "sendrecv"),
        ("allgather-8gpu.txt", "all_gather"),
        ("ReduceScatter.txt", "reduce_scatter"),
        ("AllReduce.txt", "all_reduce"),
        ("alltoall.txt", "alltoall"),
        ("run.txt", "all_reduce"),
    ],
)
def test_the_collective_comes_from_the_file_name_when_the_paste_names_none(name: str, collective: str) -> None:
    assert parse_nccl_tests("\n".join([*TABLE, *ROWS]), name=name).result.collective == collective


def test_the_collective_the_run_names_wins_over_the_file_name() -> None:
    assert parse_nccl_tests(GH200, name="alltoall.txt").result.collective == "all_reduce"
    text = "\n".join(["$ ./build/reduce_scatter_perf -b 1M -e 128M -g 1", *TABLE, *ROWS])
    assert parse_nccl_tests(text, name="alltoall.txt").result.collective == "reduce_scatter"


# --- glued runs -------------------------------------------------------------------------------------------------


def _starts(issues: tuple[ParseIssue, ...]) -> list[tuple[int, str]]:
    prefix = "another nccl-tests run starts here ("
    suffix = "): the runs are read apart, and each is judged on its own"
    return [
        (i.line, i.message[len(prefix) : -len(suffix)])
        for i in issues
        if i.message.startswith(prefix) and i.message.endswith(suffix) and i.action == "recovered"
    ]


def test_a_whole_second_run_starts_at_its_version_line() -> None:
    parsed = parse_nccl_tests(GH200 + GH200)
    assert _starts(parsed.issues) == [(25, "'nccl-tests version 2.18.2 nccl'")]
    assert [r.last_output for r in parsed.runs] == [
        LogLine(23, "# Collective test concluded: all_reduce_perf"),
        LogLine(47, "# Collective test concluded: all_reduce_perf"),
    ]


@pytest.mark.parametrize(
    ("second", "why"),
    [
        ([*TABLE[1:2], *ROWS], "a second table header"),
        (["#  Rank  0 Group  0 Pid  1 on  x device  0 [0000:1a:00.0] GPU", *ROWS], "rank lines after a table"),
        (["# Avg bus bandwidth    : 1.5"], "a second footer"),
        (ROWS, "rows after the footer"),
        (["$ ./build/all_reduce_perf -g 1", *ROWS], "a command line"),
        ([LINES[2], *ROWS], "'nThread 1 nGpus 1 minBytes 104'"),
    ],
)
def test_what_starts_a_second_run_after_a_whole_one(second: list[str], why: str) -> None:
    parsed = parse_nccl_tests("\n".join([*LINES[:22], *second]))
    assert _starts(parsed.issues) == [(23, why)]
    assert len(parsed.runs) == 2 and len(parsed.runs[0].groups[0].rows) == 8


def test_a_second_out_of_bounds_line_is_a_second_run() -> None:
    text = "\n".join([*LINES[:19], "# Out of bounds values : 0 OK", "# Out of bounds values : 0 OK"])
    assert _starts(parse_nccl_tests(text).issues) == [(21, "a second footer")]
    text = "\n".join([*LINES[:19], "# Avg bus bandwidth    : 1.5", "# Out of bounds values : 0 OK"])
    assert _starts(parse_nccl_tests(text).issues) == [(21, "a second footer")]


def test_the_size_column_restarting_in_one_series_only_starts_a_run() -> None:
    other = [r.replace("float     sum", "float     max") for r in ROWS[:2]]
    parsed = parse_nccl_tests("\n".join([*LINES[:15], *other, *ROWS[4:]]))
    assert _starts(parsed.issues) == [] and len(parsed.result.groups[0].rows) == 10
    restarted = parse_nccl_tests("\n".join([*LINES[:15], *ROWS[1:]]))
    assert _starts(restarted.issues) == [(16, "the size column restarts at 2097152 bytes")]
    assert [len(r.groups[0].rows) for r in restarted.runs] == [4, 7]


def test_a_run_with_no_row_before_the_next_one_is_no_run() -> None:
    parsed = parse_nccl_tests("\n".join(["$ ./build/all_reduce_perf -g 1", "$ ./build/all_reduce_perf -g 2", *ROWS]))
    assert _starts(parsed.issues) == [] and len(parsed.runs) == 1
    assert parsed.result.command == "./build/all_reduce_perf -g 2"


# --- versions and commands --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "version"),
    [
        ("# nccl-tests version 2.13.9 nccl-headers=21903 nccl-library=21903", "2.19.3"),
        ("# nccl-tests version 2.0.0 nccl-headers=2708 nccl-library=2708", "2.7.8"),
        ("# nccl-tests version 2.17.1 nccl-headers=22807 ncclGetVersion=22807", "2.28.7"),
        ("# nccl-tests version 2.17.1 nccl-library=10000", "1.0.0"),
        ("# nccl-tests version 2.17.1 nccl-library=9999", "9.9.99"),
        ("# NCCL version 2.21.5+cuda12.4", "2.21.5"),
        ("gpu-a:1234:1234 [0] NCCL INFO NCCL version 2.18.1+cuda12.1", "2.18.1"),
    ],
)
def test_the_nccl_version_is_read_from_any_line_that_names_it(line: str, version: str) -> None:
    assert parse_nccl_tests("\n".join([line, *LINES[3:19]])).result.nccl_version == version


def test_the_first_nccl_version_named_wins() -> None:
    text = "\n".join(["NCCL version 2.18.1+cuda12.1", "# NCCL version 2.21.5", *TABLE, *ROWS])
    assert parse_nccl_tests(text).result.nccl_version == "2.18.1"
    assert parse_nccl_tests("\n".join([*TABLE, *ROWS])).result.nccl_version == Unsupported(
        "nccl-tests", "no NCCL version line in the paste"
    )


@pytest.mark.parametrize(
    ("line", "command"),
    [
        (
            "(base) root@node:~/nccl-tests# NCCL_DEBUG=WARN ./build/all_reduce_perf -b 8 -e 1G -g 8",
            "NCCL_DEBUG=WARN ./build/all_reduce_perf -b 8 -e 1G -g 8",
        ),
        ("$ srun -N 2 --gpus-per-node 8 all_gather_perf -b 1M", "srun -N 2 --gpus-per-node 8 all_gather_perf -b 1M"),
        ("A=1 B=2 ~/bin/alltoall_perf", "A=1 B=2 ~/bin/alltoall_perf"),
        ("echo x A=1 ./build/sendrecv_perf", "A=1 ./build/sendrecv_perf"),
    ],
)
def test_the_command_keeps_the_program_and_the_assignments_typed_before_it(line: str, command: str) -> None:
    assert parse_nccl_tests("\n".join([line, *TABLE, *ROWS])).result.command == command


def test_rccl_tests_are_named_by_their_banner() -> None:
    parsed = parse_nccl_tests("\n".join(["rccl-tests: Version 2.0.0-develop:1c1a2b3", *TABLE, *ROWS]))
    assert parsed.flavour == "rccl-tests" and parsed.result.backend == "rccl"
    assert parsed.result.version == "rccl-tests: Version 2.0.0-develop:1c1a2b3"


# --- refusals -------------------------------------------------------------------------------------------------------


def test_a_paste_with_no_run_is_refused_naming_its_last_two_lines() -> None:
    with pytest.raises(NcclTestsParseError) as caught:
        parse_nccl_tests("$ ls\nrccl-tests: Version 2\nNCCL version 2.18.1\n# hello\n")
    assert str(caught.value) == (
        "no nccl-tests data row, rank line or failure found (the run printed line 3: 'NCCL version 2.18.1'; "
        "line 4: '# hello', then nothing that names a GPU)"
    )
    assert caught.value.hint == (
        "pass the stdout of all_reduce_perf (or another *_perf) including the size/time/busbw table"
    )
    long = "NCCL version 2.18.1 " + "x" * 100
    with pytest.raises(NcclTestsParseError) as cut:
        parse_nccl_tests(long)
    assert str(cut.value) == (
        f"no nccl-tests data row, rank line or failure found (the run printed line 1: {long[:80]!r}, then nothing "
        "that names a GPU)"
    )
    with pytest.raises(NcclTestsParseError) as empty:
        parse_nccl_tests("\n\n---\n")
    assert str(empty.value) == "no nccl-tests data row, rank line or failure found"


# --- the sniff -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "looks"),
    [
        (GH200, True),
        ("\n".join(ROWS[:2]), True),
        (ROWS[0], False),
        ("\n".join(TABLE[1:2] + ROWS[:1]), True),
        ("\n".join(TABLE[1:2]), True),  # the column names alone: a run that stopped before its first row
        ("# Avg bus bandwidth    : 14.9966", True),
        ("# Out of bounds values : 16 FAILED", True),
        ("# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728", True),
        ("node1: Test CUDA failure common.cu:941 'system not yet initialized'", True),
        (".. node1 pid 4002: Test failure common.cu:401", True),
        ("node2: Test timeout (300s) common.cu:538", True),
        ("#  Rank  0 Group  0 Pid  1 on  x device  0 [0000:1a:00.0] GPU\n./build/all_reduce_perf", True),
        ("#  Rank  0 Group  0 Pid  1 on  x device  0 [0000:1a:00.0] GPU", False),
        ("algbw busbw\nrccl-tests", True),
        ("NCCL INFO Bootstrap : Using eth0\nall_reduce_perf", False),
        ('{"results": [], "bus_bw": 1}', True),
        ('{"results": [], "nccl_version": 1}', True),
        ('{"results": []}', False),
        ('{"bus_bw": 1}', False),
        ('\n  {"results": [], "bus_bw": 1}', True),
        ("#  size  count  type  redop\nnccl-tests", True),
        ("algbw\nnccl-tests", False),
        ("busbw\nnccl-tests", False),
        ("algbw busbw", False),
        (f"{RANK_LINE}\nnccl-tests", True),
        (f"{RANK_LINE}\nrccl-tests", True),
        (f"{RANK_LINE}\nmy_perf", True),
        (f"{RANK_LINE}\n# Avg bus bandwidth", True),
        ("#  rank  0 on x device 0 [0]\nall_reduce_perf", False),
        (f"$ ./build/all_reduce_perf -g 1\n{RANK_LINE}", True),
    ],
)
def test_the_sniff_takes_what_only_nccl_tests_prints(text: str, looks: bool) -> None:
    assert looks_like_nccl_tests(text) is looks


@pytest.mark.parametrize(("filler", "looks"), [(19995 - len(RANK_LINE) - 1, True), (19996 - len(RANK_LINE) - 1, False)])
def test_the_sniff_reads_the_first_20000_characters(filler: int, looks: bool) -> None:
    text = f"{RANK_LINE}\n{'x' * filler}_perf"
    assert looks_like_nccl_tests(text) is looks


def test_the_footer_counts_anywhere_in_the_paste() -> None:
    assert looks_like_nccl_tests(f"{RANK_LINE}\n{'x' * 30000}\n# Avg bus bandwidth    : 14.9966")


# --- JSON (-J) ---------------------------------------------------------------------------------------------------


def _json(**changes: object) -> str:
    doc = json.loads((FIXTURES / "derived-gh200-json-J.json").read_text())
    doc.update(changes)
    return json.dumps(doc)


def test_json_output_reads_like_the_text_it_came_from() -> None:
    parsed = parse_nccl_tests((FIXTURES / "derived-gh200-json-J.json").read_text())
    text = parse_nccl_tests(GH200).result
    result = parsed.result
    assert (parsed.flavour, parsed.format, parsed.issues, parsed.runs) == ("nccl-tests", "json", (), (result,))
    assert result.groups[0].rows == text.groups[0].rows
    assert result.ranks == text.ranks and result.hosts == text.hosts
    assert (result.collective, result.status, result.nccl_version) == ("all_reduce", "complete", "2.30.7")
    assert (result.avg_busbw_gbps, result.out_of_bounds) == (text.avg_busbw_gbps, text.out_of_bounds)


def test_json_without_its_optional_parts_says_what_is_missing() -> None:
    doc = {"results": [{"size": 8, "out_of_place": {"cpu_time": 5.5, "alg_bw": "0.01", "bus_bw": 0.02}}]}
    parsed = parse_nccl_tests(json.dumps(doc), name="alltoall.json")
    result = parsed.result
    (row,) = result.groups[0].rows
    assert (row.size_bytes, row.count, row.dtype, row.time_us, row.algbw_gbps, row.busbw_gbps) == (
        8,
        0,
        "float",
        5.5,
        0.01,
        0.02,
    )
    assert row.wrong == Unsupported("nccl-tests", "data check disabled (-c 0): nwrong is null")
    assert (row.inplace_time_us, row.inplace_busbw_gbps, row.inplace_wrong) == (NOT_IN_INPUT,) * 3
    assert result.collective == "alltoall" and result.status == "partial"
    assert result.avg_busbw_gbps == Unsupported("nccl-tests", "no average")
    assert result.out_of_bounds == Unsupported("nccl-tests", "no out_of_bounds")
    assert result.nccl_version == Unsupported("nccl-tests", "no nccl_version in the JSON")
    assert result.version == "nccl-tests JSON v?, NCCL ?"
    assert parsed.issues == (ParseIssue(0, "excerpt", "no '#  Rank' lines: ranks, hosts and devices unknown"),)


def test_json_in_place_only_rows_and_rows_without_timing() -> None:
    doc = {
        "version": 2,
        "nccl_version": "2.27.3",
        "args": ["./build/reduce_scatter_perf", "-b", "8"],
        "devices": [{"rank": 3, "device": 2, "hostname": "gpu-b", "device_hex": "0000:3b:00.0", "pid": 77}, "x"],
        "results": [
            {"size": 16},
            {"size": 8, "count": 2, "type": "half", "in_place": {"time": 4.0, "alg_bw": 1, "bus_bw": 2, "nwrong": 3}},
        ],
        "average_bus_bandwidth": {"bandwidth": "1.5"},
        "out_of_bounds": {"count": 4},
    }
    parsed = parse_nccl_tests(json.dumps(doc))
    result = parsed.result
    assert result.ranks == (
        RankInfo(3, 2, "gpu-b", "cuda:2", 2, "0000:3b:00.0", Unsupported("nccl-tests", "no device_info"), 77),
    )
    (row,) = result.groups[0].rows
    assert (row.count, row.dtype, row.time_us, row.algbw_gbps, row.busbw_gbps, row.wrong) == (2, "half", 4.0, 1, 2, 3)
    assert (row.inplace_time_us, row.inplace_busbw_gbps, row.inplace_wrong) == (4.0, 2.0, 3)
    assert parsed.issues == (ParseIssue(0, "ignored", "results[0] has no timing"),)
    assert (result.collective, result.avg_busbw_gbps, result.out_of_bounds) == ("reduce_scatter", 1.5, 4)
    assert (result.version, result.nccl_version) == ("nccl-tests JSON v2, NCCL 2.27.3", "2.27.3")


def test_json_devices_without_their_fields_take_their_position() -> None:
    doc = {"devices": [{}, {}], "results": [{"size": 8, "out_of_place": {"time": 1, "alg_bw": 1, "bus_bw": 1}}]}
    result = parse_nccl_tests(json.dumps(doc)).result
    no_bus = Unsupported("nccl-tests", "only the PCI bus number is printed ()")
    no_name = Unsupported("nccl-tests", "no device_info")
    assert result.ranks == (
        RankInfo(0, 0, "unknown", "cuda:0", 0, no_bus, no_name, 0),
        RankInfo(1, 0, "unknown", "cuda:0", 0, no_bus, no_name, 0),
    )


def test_an_impossible_json_figure_is_an_input_issue() -> None:
    doc = {
        "results": [
            {"size": 8, "out_of_place": {"time": 0, "alg_bw": 1, "bus_bw": 1}},
            {"size": 16, "out_of_place": {"time": 1, "alg_bw": 1, "bus_bw": 1}},
        ]
    }
    parsed = parse_nccl_tests(json.dumps(doc))
    message = "results[0] (8 bytes) has a time of 0; left out of the figures"
    assert parsed.result.row_problems == (RowProblem("impossible", 8, message, LogLine(0, "results[0]")),)
    assert parsed.issues[0] == ParseIssue(0, "recovered", message)
    assert [r.size_bytes for r in parsed.result.groups[0].rows] == [16]


@pytest.mark.parametrize(
    ("value", "version"),
    [(23007, "2.30.7"), ("2708", "2.7.8"), ("123", "123"), ("1234567", "1234567"), ("2.19.3", "2.19.3")],
)
def test_json_nccl_version_as_a_code_or_a_string(value: object, version: str) -> None:
    assert parse_nccl_tests(_json(nccl_version=value)).result.nccl_version == version


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "nccl-tests JSON is not valid JSON: "),
        ('{"results": null}', "this JSON has no nccl-tests 'results' list"),
        ('{"results": {}}', "this JSON has no nccl-tests 'results' list"),
        ('{"results": []}', "nccl-tests JSON has no result rows"),
    ],
)
def test_json_that_is_not_a_run_is_refused(text: str, message: str) -> None:
    with pytest.raises(NcclTestsParseError) as caught:
        parse_nccl_tests(text)
    assert str(caught.value).startswith(message)


# --- rank count from the rows and the algorithm NCCL ran -------------------------------------------------------


def _row(busbw: float, algbw: float) -> BenchRow:
    return BenchRow(1 << 20, 1, "float", 10.0, algbw, busbw, 0)


@pytest.mark.parametrize(
    ("rows", "collective", "ranks"),
    [
        ([_row(175.0, 100.0)], "all_reduce", 8),
        ([_row(87.5, 100.0)], "all_gather", 8),
        ([_row(100.0, 100.0)], "all_reduce", 2),
        ([_row(175.0, 100.0)], "broadcast", None),
        ([_row(175.0, 100.0), _row(150.0, 100.0)], "all_reduce", None),
        ([_row(0.0, 100.0), _row(175.0, 100.0)], "all_reduce", 8),
        ([_row(210.0, 100.0)], "all_reduce", None),
        ([_row(180.0, 100.0)], "all_reduce", 10),
        ([_row(185.0, 100.0)], "all_reduce", None),
        ([_row(0.02, 0.01)], "all_reduce", None),
        ([_row(50.0, 100.0)], "all_gather", 2),
        ([_row(0.0, 100.0)], "all_reduce", None),
    ],
)
def test_the_rows_name_the_rank_count_only_when_every_precise_row_agrees(
    rows: list[BenchRow], collective: str, ranks: int | None
) -> None:
    assert ranks_from_rows(rows, collective) == ranks


@pytest.mark.parametrize(
    ("text", "largest", "ran"),
    [
        (
            "NCCL INFO AllReduce: 8589934592 Bytes -> Algo 1 proto 2 time 27.0",
            8589934592,
            ("ring", "line 1: NCCL INFO AllReduce: 8589934592 Bytes -> Algo 1 proto 2 time 27.0"),
        ),
        (
            "NCCL INFO 1024 Bytes -> Algo NVLS proto 2 time 1",
            2048,
            ("nvls", "line 1: NCCL INFO 1024 Bytes -> Algo NVLS proto 2 time 1"),
        ),
        (
            "NCCL INFO 1024 Bytes -> Algo 4 proto 2 time 1",
            2049,
            ("nvls", "line 1: NCCL INFO 1024 Bytes -> Algo 4 proto 2 time 1"),
        ),
        ("NCCL INFO 1024 Bytes -> Algo 4 proto 2 time 1", 2050, None),
        ("NCCL INFO AllGather: 8 Bytes -> Algo 1 proto 2 time 1", 8, None),
        (
            "NCCL INFO 8 Bytes -> Algo 0 proto 2 time 1\nNCCL INFO 16 Bytes -> Algo 1 proto 2 time 1",
            16,
            ("ring", "line 2: NCCL INFO 16 Bytes -> Algo 1 proto 2 time 1"),
        ),
        ("NCCL INFO 16 Bytes -> Algo 0 proto 2 time 1\nNCCL INFO 16 Bytes -> Algo 1 proto 2 time 1", 16, None),
        (
            "NCCL INFO 16 Bytes -> Algo 1 proto 2 time 1\nNCCL INFO 16 Bytes -> Algo 1 proto 1 time 1",
            16,
            ("ring", "line 1: NCCL INFO 16 Bytes -> Algo 1 proto 2 time 1"),
        ),
        (
            "x NCCL INFO NCCL_ALGO set by environment to Tree\nNCCL_ALGO=Ring ./all_reduce_perf",
            8,
            ("tree", "line 1: x NCCL INFO NCCL_ALGO set by environment to Tree"),
        ),
        ("NCCL_ALGO=Ring ./all_reduce_perf\nNCCL_ALGO=Tree", 8, ("ring", "line 1: NCCL_ALGO=Ring ./all_reduce_perf")),
        ("NCCL_ALGO=Ring,Tree ./all_reduce_perf", 8, None),
        ("NCCL INFO NCCL_ALGO set by environment to ^NVLS", 8, None),
    ],
)
def test_the_algorithm_nccl_ran_at_the_largest_size(text: str, largest: int, ran: tuple[str, str] | None) -> None:
    assert algorithm_in(text, largest) == ran


def test_the_algorithm_named_beside_the_table_reaches_the_result() -> None:
    text = "\n".join(["$ NCCL_ALGO=Tree ./build/all_reduce_perf -g 1", *TABLE, *ROWS])
    assert parse_nccl_tests(text).result.environment == {
        "nccl_algorithm": "tree",
        "nccl_algorithm_evidence": "line 1: $ NCCL_ALGO=Tree ./build/all_reduce_perf -g 1",
    }


# --- what the run prints around its table ------------------------------------------------------------------------


def test_the_collective_the_run_announces_wins_over_the_file_name() -> None:
    started = "\n".join(["# Collective test starting: alltoall_perf", *TABLE, *ROWS])
    assert parse_nccl_tests(started, name="all_gather.txt").result.collective == "alltoall"
    concluded = "\n".join([*TABLE, *ROWS, "# Collective test concluded: alltoall_perf"])
    assert parse_nccl_tests(concluded, name="all_gather.txt").result.collective == "alltoall"


def test_rows_after_the_run_concluded_are_another_run_and_noise_after_it_is_no_table_noise() -> None:
    text = "\n".join([*TABLE, *ROWS, "# Collective test concluded: all_reduce_perf", "srun: job 7 done", *ROWS])
    parsed = parse_nccl_tests(text)
    assert _starts(parsed.issues) == [(14, "rows after the footer")]
    assert [i.line for i in parsed.issues if i.action == "ignored"] == []


def test_noise_after_the_data_check_line_or_the_footer_is_no_table_noise() -> None:
    assert parse_nccl_tests("\n".join([*LINES[:20], "srun: job 7 done"])).issues == ()
    assert parse_nccl_tests("\n".join([*LINES[:19], LINES[20], "srun: job 7 done"])).issues == ()


def test_a_header_of_three_figures_reads_a_trimmed_row() -> None:
    header = "#  size  count  type  redop  root  time  algbw  busbw"
    (row,) = parse_nccl_tests("\n".join([header, "1048576 262144 float sum -1 339.61 3.09 3.09"])).result.groups[0].rows
    assert (row.time_us, row.busbw_gbps) == (339.61, 3.09)
    assert row.wrong == Unsupported("nccl-tests", "#wrong column not in the input")


def test_noise_between_the_header_and_the_first_row_is_said() -> None:
    parsed = parse_nccl_tests("\n".join([*TABLE, "NCCL INFO Channel 00/02", *ROWS]))
    assert ParseIssue(4, "ignored", "not a table row (MPI/NCCL noise?): NCCL INFO Channel 00/02") in parsed.issues


def test_long_noise_is_cut_to_80_characters() -> None:
    noise = "NCCL INFO " + "y" * 100
    parsed = parse_nccl_tests("\n".join([*LINES[:12], noise]))
    assert parsed.issues == (ParseIssue(13, "ignored", f"not a table row (MPI/NCCL noise?): {noise[:80]}"),)


def test_a_table_header_alone_is_a_run_that_stopped() -> None:
    result = parse_nccl_tests("\n".join(TABLE)).result
    assert result.status == "partial" and result.groups[0].rows == ()
    assert result.groups[0].peak_size_bytes == Unsupported("nccl-tests", "no rows")
    assert result.groups[0].plateau_size_bytes == Unsupported("nccl-tests", "no size >= 1 MiB in the input")
    assert result.world_size == 0


@pytest.mark.parametrize(
    ("lines", "starts"),
    [
        ([*ROWS, RANK_LINE], [(9, "rank lines after a table")]),
        ([*TABLE, *TABLE], [(5, "a second table header")]),
        (["# Avg bus bandwidth    : 1.5", *TABLE], [(3, "a second table header")]),
        ([*TABLE, LINES[2]], [(4, "'nThread 1 nGpus 1 minBytes 104'")]),
        (["# Avg bus bandwidth    : 1.5", LINES[0]], [(2, "'nccl-tests version 2.18.2 nccl'")]),
    ],
)
def test_what_starts_another_run_before_any_row(lines: list[str], starts: list[tuple[int, str]]) -> None:
    assert _starts(parse_nccl_tests("\n".join(lines)).issues) == starts


def test_the_last_line_printed_is_where_a_stopped_run_stopped_even_when_nccl_printed_it() -> None:
    text = "\n".join([*LINES[:8], "nid007106:1:1 [0] NCCL INFO Bootstrap : Using hsn0"])
    result = parse_nccl_tests(text).result
    assert result.last_output == LogLine(9, "nid007106:1:1 [0] NCCL INFO Bootstrap : Using hsn0")


def test_one_wrong_element_fails_the_data_check() -> None:
    result = parse_nccl_tests("\n".join([*LINES[:19], "# Out of bounds values : 1"])).result
    assert [(f.kind, f.message) for f in result.failures] == [("data-check", "Out of bounds values : 1")]


def test_nccl_s_error_line_keeps_everything_after_its_first_colon() -> None:
    text = "# error: ncclSystemError: Call to connect returned Connection refused"
    (failure,) = parse_nccl_tests(text).result.failures
    assert (failure.kind, failure.message) == ("nccl", "ncclSystemError: Call to connect returned Connection refused")


def test_a_footer_without_its_colon_is_no_average() -> None:
    result = parse_nccl_tests("\n".join([*LINES[:19], "# Avg bus bandwidth 1.5"])).result
    assert result.avg_busbw_gbps == Unsupported("nccl-tests", "no 'Avg bus bandwidth' footer (output cut?)")


# --- failures inside the table ----------------------------------------------------------------------------------


def test_failure_lines_inside_the_table_are_failures_not_noise() -> None:
    text = "\n".join(
        [
            *LINES[:12],
            "nid007106: Test CUDA failure common.cu:941 'out of memory'",
            ".. nid007106 pid 15784: Test failure common.cu:401",
            ".. nid007106 pid 15784: Test failure common.cu:877",
            "nid007109: Test timeout (300s) common.cu:538",
            "Invalid number of GPUs: 8 requested but only 4 were found",
            ".. nid007200 pid 1: Test failure common.cu:401",
            ".. nid007200 pid 2: Test failure common.cu:401",
        ]
    )
    parsed = parse_nccl_tests(text)
    assert parsed.issues == ()
    assert [(f.kind, f.host, f.pid, f.rank) for f in parsed.result.failures] == [
        ("cuda", "nid007106", 15784, 0),
        ("timeout", "nid007109", NO_PID, 1),
        ("gpus", NO_HOST, NO_PID, NO_RANK),
        ("test", "nid007200", 1, NO_RANK),
        ("test", "nid007200", 2, NO_RANK),
    ]


def test_a_failure_line_that_names_no_host_has_none() -> None:
    (failure,) = parse_nccl_tests("Test NCCL failure all_reduce.cu:95 'unhandled cuda error'").result.failures
    assert (failure.host, failure.rank, failure.source_location) == (NO_HOST, NO_RANK, "all_reduce.cu:95")


def test_a_warning_that_only_mentions_a_failure_is_table_noise() -> None:
    noise = "nid007106:1:1 [0] NCCL WARN Cuda failure 'out of memory'"
    parsed = parse_nccl_tests("\n".join([*LINES[:12], noise]))
    assert parsed.issues == (ParseIssue(13, "ignored", f"not a table row (MPI/NCCL noise?): {noise}"),)
    assert parsed.result.failures == ()


def test_a_row_without_root_cut_by_a_failure_names_its_size() -> None:
    text = "1048576 262144 float sum 339.61 3.09 3.09 0\n2097152 524288 float sum node0: Test CUDA failure x.cu:1 'e'"
    parsed = parse_nccl_tests(text)
    assert ParseIssue(2, "recovered", "the run failed in the row for 2097152 bytes; no figure in it") in parsed.issues


# --- lines that are not rows, and columns a header names -----------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "1048576 x float sum -1 339.61 3.09 3.09 0",
        "1048576 262144 floaty sum -1 339.61 3.09 3.09 0",
        "1048576 262144 float add -1 339.61 3.09 3.09 0",
        "1048576 262144 float sum -1 339.61 x 3.09 0",
        "1048576 262144 float sum -1 339.61 3.09 x 0",
        "1048576 262144 float sum x 339.61 3.09 3.09 0",
        "1x 262144 float sum -1 339.61 3.09 3.09 0",
    ],
)
def test_a_line_that_only_starts_like_a_row_is_table_noise(line: str) -> None:
    parsed = parse_nccl_tests("\n".join([*LINES[:12], line]))
    assert parsed.issues == (ParseIssue(13, "ignored", f"not a table row (MPI/NCCL noise?): {line}"),)
    assert len(parsed.result.groups[0].rows) == 1


def test_a_header_without_a_wrong_column_reads_three_figures_per_half() -> None:
    header = "#  size  count  type  redop  root  time  algbw  busbw  time  algbw  busbw"
    parsed = parse_nccl_tests("\n".join([header, "1048576 262144 float sum -1 339.61 3.09 3.09 335.85 3.12 3.12"]))
    (row,) = parsed.result.groups[0].rows
    assert (row.time_us, row.busbw_gbps, row.inplace_time_us, row.inplace_busbw_gbps) == (339.61, 3.09, 335.85, 3.12)
    assert row.wrong == Unsupported("nccl-tests", "#wrong column not in the input")
    assert row.inplace_wrong == Unsupported("nccl-tests", "#wrong column not in the input")


def test_a_header_of_cpu_times_reads_both_halves() -> None:
    header = "#  size  count  type  redop  root  cputime  algbw  busbw  cputime  algbw  busbw"
    parsed = parse_nccl_tests("\n".join([header, "1048576 262144 float sum -1 339.61 3.09 3.09 335.85 3.12 3.12"]))
    (row,) = parsed.result.groups[0].rows
    assert (row.inplace_time_us, row.inplace_busbw_gbps) == (335.85, 3.12)


def test_a_header_of_one_half_still_reads_a_whole_row() -> None:
    header = "#  size  count  type  redop  root  time  algbw  busbw  #wrong"
    (row,) = parse_nccl_tests("\n".join([header, ROWS[0]])).result.groups[0].rows
    assert (row.wrong, row.inplace_time_us, row.inplace_busbw_gbps, row.inplace_wrong) == (0, 335.85, 3.12, 0)


def test_the_old_one_half_header_reads_its_error_column() -> None:
    header = "#  size  count  type  redop  time  algbw  busbw  error"
    (row,) = (
        parse_nccl_tests("\n".join([header, "1048576 262144 float sum 339.61 3.09 3.09 2e-02"])).result.groups[0].rows
    )
    assert row.wrong == Unsupported("nccl-tests", "old format reports a max error 2e-02, above the bound for float")


def test_an_unreadable_in_place_figure_leaves_the_in_place_half_out() -> None:
    line = "1048576 262144 float sum -1 339.61 3.09 3.09 0 335.85 x 3.12 0"
    (row,) = parse_nccl_tests("\n".join([*LINES[:11], line])).result.groups[0].rows
    assert (row.busbw_gbps, row.inplace_time_us, row.inplace_busbw_gbps, row.inplace_wrong) == (
        3.09,
        NOT_IN_INPUT,
        NOT_IN_INPUT,
        NOT_IN_INPUT,
    )


def test_each_data_type_is_its_own_series_of_sizes() -> None:
    half = [r.replace("     float", "      half") for r in ROWS]
    parsed = parse_nccl_tests("\n".join([*LINES[:19], *half]))
    assert len(parsed.runs) == 1 and parsed.result.row_problems == ()
    assert [r.dtype for r in parsed.result.groups[0].rows].count("half") == 8


def test_a_table_that_starts_at_zero_bytes_is_one_run() -> None:
    zero = "     0     0     float     sum      -1     0.10    0.00    0.00       0     0.10    0.00    0.00       0"
    parsed = parse_nccl_tests("\n".join([*LINES[:11], zero, *ROWS]))
    assert len(parsed.runs) == 1 and [r.size_bytes for r in parsed.result.groups[0].rows][:2] == [0, 1048576]


def test_a_long_impossible_size_is_cut_in_its_message() -> None:
    size = "9" * 45
    line = f"{size} 262144 float sum -1 339.61 3.09 3.09 0 335.85 3.12 3.12 0"
    (problem,) = parse_nccl_tests("\n".join([*LINES[:11], line, ROWS[0]])).result.row_problems
    assert problem.message == f"the row's size {size[:40]!r} is not a possible size; left out"


@pytest.mark.parametrize(("count", "kept"), [("1" * 16, True), ("1" * 17, False)])
def test_a_count_of_more_than_16_digits_leaves_the_row_out(count: str, kept: bool) -> None:
    line = f"1048576 {count} float sum -1 339.61 3.09 3.09 0 335.85 3.12 3.12 0"
    result = parse_nccl_tests("\n".join([*LINES[:11], line, ROWS[1]])).result
    assert [r.size_bytes for r in result.groups[0].rows] == ([1048576, 2097152] if kept else [2097152])


def test_an_impossible_count_is_named_as_the_count_not_the_size() -> None:
    """Before: "the row's size '1048576' is not a possible size" for a row whose size was fine."""
    count = "9" * 45
    line = f"1048576 {count} float sum -1 339.61 3.09 3.09 0 335.85 3.12 3.12 0"
    (problem,) = parse_nccl_tests("\n".join([*LINES[:11], line])).result.row_problems
    message = f"the row for 1048576 bytes has the element count {count[:40]!r}, not a possible count; left out"
    assert problem == RowProblem("impossible", 1048576, message, LogLine(12, line))


# --- the rank count from rows alone ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("busbw", "note"),
    [
        ("187.50", "16 ranks, from the rows' busbw/algbw (the rank lines were not pasted)"),
        (
            "188.24",
            "17 ranks, from the rows' busbw/algbw (the rank lines were not pasted): a run across nodes, as no node "
            "holds more than 16 GPUs",
        ),
    ],
)
def test_a_rank_count_above_16_from_the_rows_is_a_run_across_nodes(busbw: str, note: str) -> None:
    line = f"1048576 262144 float sum -1 10.00 100.00 {busbw} 0 10.00 100.00 {busbw} 0"
    result = parse_nccl_tests("\n".join([*TABLE, line])).result
    assert result.notes[-1] == note and result.world_size == int(note.split()[0])


def test_rows_that_name_no_rank_count_leave_the_world_size_at_zero() -> None:
    line = "1048576 262144 float sum -1 10.00 100.00 155.55 0 10.00 100.00 155.55 0"
    result = parse_nccl_tests("\n".join([*TABLE, line])).result
    assert result.world_size == 0 and len(result.notes) == 1


@pytest.mark.parametrize(
    ("rows", "ranks"),
    [
        ([_row(1.0, 1.0)], 2),
        ([_row(1.925, 1.1)], 8),
        ([_row(0.56, 0.33), _row(175.0, 100.0)], 8),
        ([_row(3.9, 100.0)], None),
        ([_row(1.0, 0.0)], None),
    ],
)
def test_rows_at_the_edge_of_the_printed_precision(rows: list[BenchRow], ranks: int | None) -> None:
    assert ranks_from_rows(rows, "all_reduce") == ranks


def test_the_algorithm_of_a_run_without_rows_is_read_from_its_tuning_lines() -> None:
    text = "\n".join([RANK_LINE, "NCCL INFO 0 Bytes -> Algo 1 proto 2 time 1"])
    assert parse_nccl_tests(text).result.environment["nccl_algorithm"] == "ring"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("NCCL INFO AllGather: 16 Bytes -> Algo 0 proto 2 time 1\nNCCL INFO 16 Bytes -> Algo 1 proto 2 time 1", 2),
        ("NCCL INFO 16 Bytes -> Algo 1 proto 2 time 1\nNCCL INFO 16 Bytes -> Algo 9 proto 2 time 1", 1),
    ],
)
def test_tuning_lines_of_other_collectives_or_unknown_algorithms_are_passed_over(text: str, line: int) -> None:
    assert algorithm_in(text, 16) == ("ring", f"line {line}: {text.splitlines()[line - 1]}")


@pytest.mark.parametrize(
    "line",
    [
        "NCCL INFO 16 Bytes -> Algo 1 proto 2 time 1 " + "z" * 250,
        "NCCL INFO NCCL_ALGO set by environment to Ring " + "z" * 250,
        "NCCL_ALGO=Ring ./build/all_reduce_perf " + "z" * 250,
    ],
)
def test_the_algorithm_s_evidence_is_cut_to_200_characters(line: str) -> None:
    assert algorithm_in(line, 16) == ("ring", f"line 1: {line[:200]}")


# --- JSON details ------------------------------------------------------------------------------------------------


def test_json_with_leading_blank_lines_is_json() -> None:
    assert parse_nccl_tests("\n\n" + _json()).format == "json"


def test_json_in_place_cpu_time_and_missing_figures() -> None:
    """A figure the JSON lacks is never read as 0 GB/s: the row is left out and said, an in-place gap is a reason."""
    doc = {
        "results": [
            {"size": 8, "out_of_place": {"time": 2, "bus_bw": 1}},
            {"size": 16, "out_of_place": {"time": 2, "alg_bw": 1, "bus_bw": 1}, "in_place": {"cpu_time": 3.5}},
        ],
        "out_of_bounds": {},
        "devices": [{"hostname": "h"}],
    }
    parsed = parse_nccl_tests(json.dumps(doc))
    result = parsed.result
    (row,) = result.groups[0].rows
    assert (row.size_bytes, row.time_us, row.algbw_gbps, row.inplace_time_us) == (16, 2.0, 1.0, 3.5)
    assert row.inplace_busbw_gbps == Unsupported("nccl-tests", "the in-place half has no number for bus_bw")
    message = "results[0] (8 bytes) has no number for alg_bw; left out of the figures"
    assert result.row_problems == (RowProblem("missing", 8, message, LogLine(0, "results[0]")),)
    assert ParseIssue(0, "recovered", message) in parsed.issues
    assert result.out_of_bounds == 0 and result.ranks[0].gpu_index == 0


def test_json_without_any_bus_bandwidth_is_refused_not_read_as_zero() -> None:
    doc = {"results": [{"size": 8, "out_of_place": {"time": 2, "alg_bw": 1}}]}
    with pytest.raises(NcclTestsParseError, match="no result rows"):
        parse_nccl_tests(json.dumps(doc))


def test_json_impossible_row_with_an_unreadable_size_is_said_at_size_zero() -> None:
    doc = {
        "results": [
            {"size": "big", "out_of_place": {"time": 0, "alg_bw": 1, "bus_bw": 1}},
            {"size": 8, "out_of_place": {"time": 1, "alg_bw": 1, "bus_bw": 1}},
        ]
    }
    (problem,) = parse_nccl_tests(json.dumps(doc)).result.row_problems
    assert problem.size_bytes == 0 and problem.message.startswith("results[0] (big bytes) has a time of 0")


def test_json_args_name_the_collective() -> None:
    figures = {"time": 1, "alg_bw": 1, "bus_bw": 1}
    doc = {"args": ["./build/all_gather_perf", "-b", "8"], "results": [{"size": 8, "out_of_place": figures}]}
    assert parse_nccl_tests(json.dumps(doc), name="alltoall.json").result.collective == "all_gather"
    doc.pop("args")
    assert parse_nccl_tests(json.dumps(doc)).result.collective == "all_reduce"
    assert parse_nccl_tests(json.dumps(doc)).result.backend == "nccl"


@pytest.mark.parametrize(("code", "version"), [(100000, "10.0.0"), (2001, "2.0.1"), (1000, "1.0.0"), (2100, "2.1.0")])
def test_nccl_version_codes_at_their_edges(code: int, version: str) -> None:
    assert parse_nccl_tests(_json(nccl_version=code)).result.nccl_version == version


def test_nccl_1s_rank_lines_name_the_devices_of_a_run_that_printed_no_row() -> None:
    """Before: refused. NCCL 1's tests print "#   Rank  0 uses device  0 [0x02] Tesla P100-PCIE-16GB" (no host)."""
    text = (
        "# Using devices\n"
        "#   Rank  0 uses device  0 [0x02] Tesla P100-PCIE-16GB\n"
        "#   Rank  1 uses device  1 [0x03] Tesla P100-PCIE-16GB\n"
        "\n"
        "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n"
    )
    result = parse_nccl_tests(text).result
    assert [(r.rank, r.gpu_index, r.host, r.name) for r in result.ranks] == [
        (0, 0, "unknown", "Tesla P100-PCIE-16GB"),
        (1, 1, "unknown", "Tesla P100-PCIE-16GB"),
    ]


def test_comment_lines_whose_hash_a_markdown_render_took_are_still_read() -> None:
    """NVIDIA/nccl#104 as the page shows it: '# Using devices' rendered as a heading lost its '#'."""
    text = (
        "Using devices\n"
        "   Rank  0 uses device  0 [0x05] Tesla M40 24GB\n"
        "   Rank  1 uses device  1 [0x08] Tesla M40 24GB\n"
        "\n"
        "     bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n"
    )
    assert looks_like_nccl_tests(text)
    result = parse_nccl_tests(text).result
    assert [(r.rank, r.name) for r in result.ranks] == [(0, "Tesla M40 24GB"), (1, "Tesla M40 24GB")]


# --- MSCCL++'s mscclpp-test: nccl-tests' table without type and redop, one half a row ------------------------------

MSCCLPP = (
    Path(__file__).parents[1] / "fixtures" / "real" / "pastes" / "mscclpp-117-reducescatter-1n8p.txt"
).read_text()


def test_mscclpp_test_rows_are_read_as_one_half_of_int32_elements() -> None:
    parsed = parse_nccl_tests(MSCCLPP)
    assert parsed.flavour == "mscclpp-test" and parsed.result.backend == "mscclpp"
    rows = parsed.result.groups[0].rows
    assert [(r.size_bytes, r.count, r.dtype, r.busbw_gbps, r.wrong) for r in rows] == [
        (6291456, 1572864, "int32", 144.46, 0),
        (12582912, 3145728, "int32", 159.12, 0),
        (25165824, 6291456, "int32", 162.23, 0),
    ]
    assert not [i for i in parsed.issues if "trimmed" in i.message]  # one half a row is how it prints, not damage


def test_an_mscclpp_test_row_of_the_out_of_place_half_and_its_wrong_elements_are_read() -> None:
    header = MSCCLPP.splitlines()[3:6]
    row = "     1048576        262144" + " " * 33 + "    25.10   41.77   73.10     12"
    parsed = parse_nccl_tests("\n".join([*header, row]))
    (only,) = parsed.result.groups[0].rows
    assert (only.size_bytes, only.time_us, only.busbw_gbps, only.wrong) == (1048576, 25.10, 73.10, 12)


def test_the_mscclpp_test_header_alone_is_recognised() -> None:
    assert looks_like_nccl_tests("\n".join(MSCCLPP.splitlines()[3:6]))


# --- the old format's max error, held to nccl-tests' own bound ----------------------------------------------------

OLD_HEADER = (
    "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
    "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
)


@pytest.mark.parametrize(
    ("dtype", "errors", "failed"),
    [
        ("float", ("0e+00", "1e+00"), True),  # NVIDIA/nccl#831: LL128 over sockets returned wrong sums
        ("float", ("2e-06", "1e-06"), False),  # rounding of a float sum: within 1e-5
        ("half", ("3e-02", "0e+00"), False),  # within half's 5e-2
        ("half", ("1e-01", "0e+00"), True),
        ("int32", ("0e+00", "1e+00"), True),  # integers must match exactly
    ],
)
def test_a_max_error_above_nccl_tests_bound_for_its_type_is_a_failed_data_check(
    dtype: str, errors: tuple[str, str], failed: bool
) -> None:
    row = f"  8388608  2097152  {dtype:>8}  sum  5729.5  1.46  1.46  {errors[0]}  5477.3  1.53  1.53  {errors[1]}"
    result = parse_nccl_tests(OLD_HEADER + row).result
    checks = [f for f in result.failures if f.kind == "data-check"]
    assert bool(checks) is failed and result.status != "failed"  # wrong data is the data check's, not a crash
    if failed:
        assert checks[0].evidence.line == 3 and "above nccl-tests' bound" in checks[0].message


ALL_REDUCE_BENCH = """\
The average bandwidth of all_reduce over 32 ranks (5 warmups / 20 trials, up to 10 queued calls per trial):

| payload |    busbw   |    algbw   |
| ------: | ---------: | ---------: |
|   32KiB |   0.65GBps |   0.33GBps |
|    1MiB |  12.47GBps |   6.44GBps |
|    1GiB | 365.99GBps | 188.90GBps |
|   16GiB | 376.71GBps | 194.43GBps |
"""
"""ml-engineering's all_reduce_bench.py on 4 nodes of 8 B200 (its benchmarks page), cut to four sizes."""


def test_ml_engineerings_all_reduce_bench_table_is_read_as_a_sweep() -> None:
    """Before: no reader read it. The title names the collective and the ranks; each row's size
    and figures are read, with no data check to report (the tool prints none) and no rank lines."""
    parsed = parse_nccl_tests(ALL_REDUCE_BENCH)
    result = parsed.result
    assert (parsed.flavour, result.collective, result.world_size) == ("all_reduce_bench", "all_reduce", 32)
    rows = result.groups[0].rows
    assert [r.size_bytes for r in rows] == [32 << 10, 1 << 20, 1 << 30, 16 << 30]
    assert (rows[-1].busbw_gbps, rows[-1].algbw_gbps) == (376.71, 194.43)
    assert isinstance(rows[-1].wrong, Unsupported) and "no data check" in rows[-1].wrong.reason
    assert not [i for i in parsed.issues if i.action == "recovered"]
    untitled = parse_nccl_tests(ALL_REDUCE_BENCH.split("\n", 2)[2])  # the table alone: ranks from busbw/algbw
    assert untitled.result.world_size == 32 and untitled.result.collective == "all_reduce"
