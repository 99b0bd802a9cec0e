"""nccl-tests output as people paste it: tails, runs that died or hung, failures, impossible and glued figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dev_pastes import dev_paste

from topoaudit.app.analyze import AnalyzeRequest, analyze_input
from topoaudit.app.common import MachineInput
from topoaudit.bench.judge import judge_bench
from topoaudit.model.bench import BenchResult
from topoaudit.model.nccl import LogLine
from topoaudit.parse.nccl_tests import NcclTestsParseError, looks_like_nccl_tests, parse_nccl_tests

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccltests"
GH200 = (FIXTURES / "nccltest-gh200-alps-2node-1gpu-each-slingshot-1.txt").read_text()  # 2 nodes, 8 sizes, footer
ROW_1M = next(line for line in GH200.split("\n") if line.lstrip().startswith("1048576 "))


def codes(result: BenchResult) -> list[str]:
    return [f.code for f in judge_bench(result)]


# --- excerpts of a run ------------------------------------------------------------------------------------


def test_tail_of_rows_and_footer_is_a_run() -> None:
    text = dev_paste("nccltests-119-tail-multinode-96gbs-healthy")
    assert looks_like_nccl_tests(text)
    result = parse_nccl_tests(text).result
    rows = result.groups[0].rows
    assert rows[0].size_bytes == 127926280 and len(rows) == 6
    assert result.groups[0].peak_busbw_gbps == 96.45 and result.avg_busbw_gbps == 84.8558
    assert result.status == "complete" and result.ranks == ()  # the rank lines were not pasted
    assert result.world_size == 24  # the rows' busbw/algbw: 2(n-1)/n = 1.9167
    assert result.notes[-1] == (
        "24 ranks, from the rows' busbw/algbw (the rank lines were not pasted): a run across nodes, as no node holds "
        "more than 16 GPUs"
    )
    assert result.last_output.line == 8  # type: ignore[union-attr]


def test_the_tables_header_over_one_row_is_a_run(tmp_path: Path) -> None:
    """Before: the part was named nccl-tests but no reader read it ("no reader could read it")."""
    text = dev_paste("vllm-17568-nccltests-2gpu-shm-direct")  # the header, NCCL's lines, then the 8-byte row
    assert looks_like_nccl_tests(text)
    (tmp_path / "run.txt").write_text(text)
    loaded = analyze_input(AnalyzeRequest(MachineInput(path=str(tmp_path / "run.txt")))).report
    assert [(p.kind, p.read_by) for p in loaded.source.parts] == [
        ("nccl-tests", "nccl-tests"),
        ("nccl-log", "nccl-log"),
    ]
    assert [r.size_bytes for r in loaded.bench.groups[0].rows] == [8]  # type: ignore[union-attr]


def test_footer_alone_is_read_and_its_failed_data_check_is_a_failure() -> None:
    text = dev_paste("nccl-1261-a100-4gpu-ll128-oob-failed")  # one line: '# Out of bounds values : 16 FAILED'
    assert looks_like_nccl_tests(text)
    result = parse_nccl_tests(text).result
    assert result.out_of_bounds == 16 and result.groups[0].rows == ()
    (failure,) = result.failures
    assert failure.kind == "data-check" and failure.message == "Out of bounds values : 16 FAILED"
    assert result.errors == ()  # a failure the run printed, not a rank error: rules.run_rules names it


def test_out_of_bounds_beside_wrong_rows_is_said_once_by_the_rows() -> None:
    result = parse_nccl_tests((FIXTURES / "derived-gh200-wrong-elements.txt").read_text()).result
    assert [f.kind for f in result.failures] == ["data-check"]
    assert codes(result) == ["bench-data-corruption"]


def test_header_and_device_lines_then_nothing_is_a_run_that_stopped() -> None:
    """The run hung or was killed before its first row: no figure, and the last line it printed."""
    lines = GH200.split("\n")
    hung = "\n".join(lines[:11]) + "\n"  # up to the column units, then nothing
    result = parse_nccl_tests(hung).result
    assert result.groups[0].rows == () and result.status == "partial" and result.world_size == 2
    assert result.hosts == ("nid007106", "nid007109")
    assert result.last_output.line == 11 and "(elements)" in result.last_output.text  # type: ignore[union-attr]
    assert isinstance(result.table_header, LogLine) and result.table_header.line == 10  # its column names
    assert result.nccl_version == "2.30.7"  # nccl-library=23007
    assert codes(result) == []  # how a pasted run ended is judged from what it printed (rules.run_rules)


def test_a_device_list_cut_short_is_an_excerpt_not_a_smaller_box(tmp_path: Path) -> None:
    """nGpus 8 in one process and six '#  Rank' lines: the paste stops in the list, so no GPU is missing."""
    text = dev_paste("nccltests-290-h100-single-node-header")
    (tmp_path / "run.txt").write_text(text)
    parsed = parse_nccl_tests(text)
    assert len(parsed.result.ranks) == 6
    assert any("drives 8 GPU(s)" in i.message and "lists 6" in i.message for i in parsed.issues)
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(tmp_path / "run.txt")))).report
    assert "gpus-short-of-node" not in {f.code for f in report.findings}
    whole = "\n".join(line for line in text.splitlines() if "nGpus" not in line)  # no parameters: nothing to count
    assert not any("drives" in i.message for i in parse_nccl_tests(whole).issues)


def test_a_paste_ending_on_a_device_line_does_not_show_how_many_gpus_ran(tmp_path: Path) -> None:
    """One GPU per process, three '#  Rank' lines of 4 nodes x 8 H200 and nothing after: the list is cut, not short."""
    text = dev_paste("dtcms-511132-h200-4node-allreduce-header")
    parsed = parse_nccl_tests(text)
    assert len(parsed.result.ranks) == 3
    assert any("ends in the run's device list" in i.message and "rank 2's" in i.message for i in parsed.issues)
    (tmp_path / "run.txt").write_text(text)
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(tmp_path / "run.txt")))).report
    assert "gpus-short-of-node" not in {f.code for f in report.findings}
    assert report.verdict == "not judged"
    followed = text + "#\n#" + " " * 62 + "out-of-place                       in-place\n"
    assert not any("device list" in i.message for i in parse_nccl_tests(followed).issues)


def test_zero_byte_rows_of_sizes_under_one_element_are_not_conflicting_figures() -> None:
    """reduce_scatter over 8 ranks prints a 0-byte row for every size under one element per rank."""
    parsed = parse_nccl_tests(dev_paste("nccltests-128-a100-reducescatter-zero-size-rows"))
    assert not [i for i in parsed.issues if i.action == "recovered"]
    assert [r.size_bytes for r in parsed.result.groups[0].rows] == [0, 128, 256]


def test_parameters_alone_are_a_run_that_stopped_at_its_last_line() -> None:
    """The command, the parameter line and '# Using devices', then nothing: the run hung before naming its GPUs."""
    text = dev_paste("nccltests-117-4090-hang-after-using-devices")
    assert looks_like_nccl_tests(text)
    result = parse_nccl_tests(text).result
    assert result.status == "partial" and result.groups[0].rows == () and result.ranks == ()
    assert result.last_output == LogLine(4, "# Using devices")
    assert not isinstance(result.table_header, LogLine)  # it stopped before its table
    assert result.command == "NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 1"


def test_no_parameter_line_and_no_row_is_refused_naming_the_last_line_printed() -> None:
    with pytest.raises(NcclTestsParseError, match=r"line 2: '# Using devices'"):
        parse_nccl_tests("$ ./build/all_reduce_perf -g 8\n# Using devices\n")


def test_two_footers_are_two_runs() -> None:
    parsed = parse_nccl_tests(dev_paste("nccltests-27-two-footers-not-mpi-build"))
    assert [r.avg_busbw_gbps for r in parsed.runs] == [3.94145, 3.94156]
    assert parsed.result is parsed.runs[0]
    assert any(
        i.line == 4 and "another nccl-tests run starts here (a second footer)" in i.message for i in parsed.issues
    )


# --- failures ----------------------------------------------------------------------------------------------


def test_cuda_failure_names_the_cuda_error() -> None:
    text = dev_paste("nccltests-338-h20-802-mpi-abort")
    assert looks_like_nccl_tests(text)
    result = parse_nccl_tests(text).result
    (failure,) = result.failures
    assert (failure.kind, failure.message, failure.source_location) == (
        "cuda",
        "system not yet initialized",
        "common.cu:1030",
    )
    assert failure.cuda_error == 802 and failure.host == "gpu" and failure.pid == 3018  # pid from the trace line
    assert result.status == "failed"


def test_nccl_failure_keeps_the_error_string_and_the_last_nccl_error() -> None:
    text = (
        "node3: Test NCCL failure common.cu:1097 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / "
        "Cuda failure 1 'invalid argument''\n"
    )
    (failure,) = parse_nccl_tests(text).result.failures
    assert failure.kind == "nccl" and failure.message == "unhandled cuda error (run with NCCL_DEBUG=INFO for details)"
    assert failure.detail == "Cuda failure 1 'invalid argument'" and failure.cuda_error == 1


def test_failure_after_the_device_lines_is_placed_on_its_rank() -> None:
    """The row the failure cut in two is no figure; the pid of the trace line names the rank."""
    result = parse_nccl_tests(dev_paste("nccltests-355-2x8h800-devapi-ima-midrow")).result
    (failure,) = result.failures
    assert failure.message == "an illegal memory access was encountered" and failure.cuda_error == 700
    assert failure.rank == 0 and failure.host == "node0" and failure.pid == 62767
    assert result.groups[0].rows == () and result.world_size == 16 and result.nccl_version == "2.28.7"
    assert result.errors == () and codes(result) == []  # rules.run_rules names it, with its rank


def test_failures_of_several_hosts_after_good_rows() -> None:
    result = parse_nccl_tests(dev_paste("nccltests-322-h100-1024rank-unhandled-at-32g")).result
    assert len(result.groups[0].rows) == 5 and result.groups[0].peak_busbw_gbps == 367.29
    assert [(f.host, f.pid) for f in result.failures] == [
        ("HCA-128", 757466),
        ("HCA-108", 2753866),
        ("HCA-107", 2750549),
        ("HCA-108", 2753874),
    ]
    assert {f.message for f in result.failures} == {"unhandled cuda error (run with NCCL_DEBUG=INFO for details)"}


def test_nccl_1_era_failure_and_rank_lines_without_pid() -> None:
    result = parse_nccl_tests(dev_paste("nccltests-5-p100-nccl1-unhandled-cuda")).result
    assert result.world_size == 8 and result.ranks[7].name == "Tesla P100-PCIE-16GB"
    assert [(f.kind, f.message, f.source_location) for f in result.failures] == [
        ("nccl", "unhandled cuda error", "all_reduce.cu:95")
    ]
    assert result.command == "./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8"


def test_one_failure_line_and_its_command() -> None:
    result = parse_nccl_tests(dev_paste("nccltests-6-unhandled-cuda-one-line")).result
    assert [f.source_location for f in result.failures] == ["common.cu:908"]
    assert result.command == "./build/all_reduce_perf -b 8 -e 128M -f 2 -g 4"


def test_command_line_settings_are_typed() -> None:
    text = (
        "$ NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 mpirun -np 16 -x NCCL_ALGO=Ring ./build/all_reduce_perf -b 8 -e 8G -f 2\n"
        + GH200
    )
    result = parse_nccl_tests(text).result
    assert [(s.name, s.value, s.origin, s.evidence.line) for s in result.settings] == [
        ("NCCL_DEBUG", "INFO", "command line", 1),
        ("NCCL_P2P_DISABLE", "1", "command line", 1),
        ("NCCL_ALGO", "Ring", "command line", 1),
    ]
    assert result.command == (
        "NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 mpirun -np 16 -x NCCL_ALGO=Ring ./build/all_reduce_perf -b 8 -e 8G -f 2"
    )
    assert len(result.groups[0].rows) == 8 and len(parse_nccl_tests(text).runs) == 1


def test_nccl_version_from_its_own_line() -> None:
    result = parse_nccl_tests(dev_paste("nccltests-124-b-3090-nvlink-stub-libcuda")).result
    assert result.nccl_version == "2.15.5"
    (failure,) = result.failures
    assert failure.message == "unhandled cuda error" and failure.detail == "" and failure.pid == 6482


# --- figures that cannot be judged ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("busbw", "why"),
    [
        ("nan", "busbw 'nan', not a number"),
        ("inf", "busbw 'inf', not a number"),
        ("1e308", "beyond any"),
        ("-3.09", "a negative busbw"),
    ],
)
def test_impossible_figures_are_input_issues_never_figures(busbw: str, why: str) -> None:
    damaged = GH200.replace(ROW_1M, ROW_1M.replace("    3.09    3.09 ", f"    3.09 {busbw:>7} ", 1))
    assert damaged != GH200
    parsed = parse_nccl_tests(damaged)
    rows = parsed.result.groups[0].rows
    assert [r.size_bytes for r in rows] == [1 << k for k in range(21, 28)]  # 1 MiB left out
    (problem,) = parsed.result.row_problems
    assert problem.kind == "impossible" and problem.size_bytes == 1048576 and why in problem.message
    assert problem.evidence.line == 12
    assert any(i.line == 12 and i.action == "recovered" for i in parsed.issues)  # the paste is damaged: said


def test_nan_wrong_count_is_unreadable_not_a_crash() -> None:
    damaged = GH200.replace(ROW_1M, ROW_1M.replace("3.09       0", "3.09     nan", 1))
    row = parse_nccl_tests(damaged).result.groups[0].rows[0]
    assert "unreadable #wrong 'nan'" in str(row.wrong)


def test_size_repeated_with_other_figures_judges_neither() -> None:
    lines = GH200.split("\n")
    slow = lines[17].replace("22.50   22.50", " 5.62    5.62")  # 64 MiB again, four times slower
    assert slow != lines[17]
    repeated = "\n".join([*lines[:18], slow, *lines[18:]])
    parsed = parse_nccl_tests(repeated)
    sizes = [r.size_bytes for r in parsed.result.groups[0].rows]
    assert 67108864 not in sizes and len(sizes) == 7 and len(parsed.runs) == 1
    (problem,) = parsed.result.row_problems
    assert problem.kind == "conflict" and "line 18: busbw 22.5 GB/s, line 19: 5.62 GB/s" in problem.message


def test_row_pasted_twice_is_one_row() -> None:
    lines = GH200.split("\n")
    parsed = parse_nccl_tests("\n".join([*lines[:19], lines[18], *lines[19:]]))
    assert len(parsed.result.groups[0].rows) == 8 and parsed.result.row_problems == ()


def test_two_runs_glued_by_a_second_header_are_read_apart() -> None:
    slow = GH200.replace("22.86   22.86", " 5.71    5.71")
    parsed = parse_nccl_tests(GH200 + slow)
    assert len(parsed.runs) == 2
    assert [r.groups[0].peak_busbw_gbps for r in parsed.runs] == [22.86, 22.50]
    assert [len(r.groups[0].rows) for r in parsed.runs] == [8, 8]
    assert parsed.runs[1].hosts == ("nid007106", "nid007109")
    assert any("another nccl-tests run starts here" in i.message for i in parsed.issues)


def test_two_runs_glued_by_the_size_column_restarting() -> None:
    lines = GH200.split("\n")
    rows = lines[11:19]
    parsed = parse_nccl_tests("\n".join([*lines[:19], *rows[:4]]) + "\n")
    assert [len(r.groups[0].rows) for r in parsed.runs] == [8, 4]
    assert "restarts at 1048576 bytes" in next(i.message for i in parsed.issues if "another" in i.message)


def test_multinode_device_lines_are_kept_per_rank() -> None:
    text = (FIXTURES / "nccltest-a3mega-h100-2node-16gpu-1.txt").read_text()
    result = parse_nccl_tests(text).result
    by_host: dict[str, list[int]] = {}
    for r in result.ranks:
        by_host.setdefault(r.host, []).append(r.rank)
    assert [len(v) for v in by_host.values()] == [8, 8] and len(result.hosts) == 2
    assert result.ranks[9].local_rank == 1 and result.ranks[9].host == result.hosts[1]


def test_json_output_with_an_impossible_figure_and_its_nccl_version() -> None:
    doc = json.loads((FIXTURES / "derived-gh200-json-J.json").read_text())
    doc["results"][0]["out_of_place"]["bus_bw"] = "nan"
    result = parse_nccl_tests(json.dumps(doc)).result
    assert len(result.groups[0].rows) == 7 and result.nccl_version == "2.30.7"
    (problem,) = result.row_problems
    assert problem.kind == "impossible" and "busbw 'nan'" in problem.message


def test_impossible_figures_make_the_report_say_the_input_was_damaged(tmp_path: Path) -> None:
    damaged = GH200.replace(ROW_1M, ROW_1M.replace("    3.09    3.09 ", "    3.09     nan ", 1))
    (tmp_path / "run.txt").write_text(damaged)
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(tmp_path / "run.txt")))).report
    assert report.gate.verdict == "warn"
    (finding,) = [f for f in report.findings if f.code == "input-recovered"]
    assert "line 12: the row for 1048576 bytes has busbw 'nan', not a number" in finding.message


OLD_ROWS_WITHOUT_REDOP = """\
     1048576        131072   float    47.38   11.06   11.06  0e+00    46.84   11.19   11.19  0e+00
     2097152        262144   float    70.44   14.89   14.89  0e+00    69.77   15.03   15.03  2e-06
    67108864       8388608   float   1568.3   21.40   21.40  0e+00   1560.9   21.50   21.50  0e+00
# Out of bounds values : 0 OK
"""
"""nccl-tests 1.x: no redop and no root column, and a maximum error where #wrong stands today."""


def test_rows_of_nccl_tests_1_without_a_redop_column_are_read() -> None:
    assert looks_like_nccl_tests(OLD_ROWS_WITHOUT_REDOP)
    result = parse_nccl_tests(OLD_ROWS_WITHOUT_REDOP).result
    rows = result.groups[0].rows
    assert [(r.size_bytes, r.busbw_gbps, r.wrong) for r in rows] == [
        (1 << 20, 11.06, 0), (2 << 20, 14.89, 0), (64 << 20, 21.4, 0)
    ]  # fmt: skip
    assert rows[1].inplace_wrong == 0  # a max error of 2e-06 is within float's bound: none wrong, as nccl-tests counts
    assert result.world_size == 2  # busbw equals algbw: two ranks of an all-reduce


def test_a_footer_whose_hash_a_page_took_still_ends_the_run() -> None:
    """NVIDIA/nccl-tests#37 as the page shows it: ' Out of bounds values : 2 FAILED' without its '#' (1.x rows)."""
    result = parse_nccl_tests(dev_paste("nccltests-37-allgather-oob-v100")).result
    assert result.out_of_bounds == 2 and result.avg_busbw_gbps == 128.942
    assert [r.size_bytes for r in result.groups[0].rows] == [4294967296]
    assert result.collective == "all_gather"  # named on the pasted command line
