"""nvbandwidth runs that did not print every matrix: the pattern check, waived tests, a run cut short."""

from __future__ import annotations

from pathlib import Path

import pytest
from dev_pastes import dev_paste

from topoaudit.errors import InputError
from topoaudit.model.values import Unsupported
from topoaudit.parse.nvbandwidth import NvbandwidthFailed, looks_like_nvbandwidth, parse_nvbandwidth

CAPTURES = Path(__file__).parents[1] / "fixtures" / "captures"
D2D = (CAPTURES / "nvbandwidth-8gpu-d2d-ce-readme-example-1.txt").read_text()  # one 8x8 matrix, no banner


def test_pattern_check_with_the_hosts_assert_is_one_data_failure_in_its_test() -> None:
    text = dev_paste("nvbw-34-pattern-assert-8xa100")  # v0.7: device printf, then ASSERT h_errorFlag == 0
    assert looks_like_nvbandwidth(text)
    parsed = parse_nvbandwidth(text, "x", partial=True)
    (failure,) = parsed.failures
    assert failure.kind == "data-check" and failure.testcase == "device_to_device_memcpy_read_ce"
    assert failure.message.startswith("Invalid value when checking the pattern") and failure.detail == "offset 11136"
    assert failure.line == 18 and len(parsed.gpus) == 8 and parsed.matrices == ()


def test_pattern_check_of_v0_4_with_its_offset() -> None:
    parsed = parse_nvbandwidth(dev_paste("nvbw-19-l40s-one-to-all-read-sm-pattern"), "x", partial=True)
    (failure,) = parsed.failures
    assert (failure.kind, failure.testcase, failure.detail) == (
        "data-check",
        "one_to_all_read_sm",
        "offset 58496/66306048",
    )


def test_a_failed_run_is_refused_by_default_naming_the_failure() -> None:
    """Read as a run of matrices only, a run that found wrong data would pass in silence."""
    with pytest.raises(NvbandwidthFailed) as err:
        parse_nvbandwidth(dev_paste("nvbw-34-pattern-assert-8xa100"), "run.txt")
    assert "nvbandwidth stopped in device_to_device_memcpy_read_ce: a copy returned wrong data" in str(err.value)
    assert err.value.partial.failures[0].kind == "data-check"


def test_the_assert_alone_is_a_data_failure_too() -> None:
    text = (
        "Running device_to_device_memcpy_write_ce.\n"
        "ASSERT in expression h_errorFlag == 0 in void memcmpPatternHelper(CUstream, CUdeviceptr, unsigned long long,"
        " unsigned int, CompareKernelFunc, std::shared_ptr<NodeHelper>)() : /src/nvbandwidth/memcpy.cpp:165\n"
    )
    (failure,) = parse_nvbandwidth(text, "x", partial=True).failures
    assert failure.kind == "data-check" and failure.detail == "h_errorFlag == 0 (/src/nvbandwidth/memcpy.cpp:165)"


def test_a_cuda_error_names_its_number() -> None:
    text = (
        "nvbandwidth Version: v0.8\n"
        "[CUDA_ERROR_SYSTEM_NOT_READY] system not yet initialized in expression cuInit(0) in int main(int, char**)()"
        " : /src/nvbandwidth/nvbandwidth.cpp:196\n"
    )
    (failure,) = parse_nvbandwidth(text, "x", partial=True).failures
    assert (failure.kind, failure.detail, failure.cuda_error) == ("cuda", "CUDA_ERROR_SYSTEM_NOT_READY", 802)
    assert isinstance(failure.testcase, Unsupported)


def test_waived_tests_are_recorded_in_both_forms() -> None:
    old = parse_nvbandwidth(dev_paste("nvbw-13-2x2080ti-write-ce-waived"), "x", partial=True)
    assert [(w.testcase, w.line) for w in old.waived] == [("device_to_device_memcpy_write_ce", 15)]
    with pytest.raises(NvbandwidthFailed, match="it waived device_to_device_memcpy_write_ce"):
        parse_nvbandwidth(dev_paste("nvbw-13-2x2080ti-write-ce-waived"), "x")
    new = "$ ./nvbandwidth -t device_to_device_memcpy_read_ce device_to_device_memcpy_write_ce\n" + D2D.replace(
        "Running device_to_device_memcpy_write_ce.", "Waived: \nRunning device_to_device_memcpy_write_ce."
    )
    parsed = parse_nvbandwidth(new, "x")
    assert [w.testcase for w in parsed.waived] == ["device_to_device_memcpy_read_ce"]
    assert [m.test for m in parsed.matrices] == ["device_to_device_memcpy_write_ce"]
    unnamed = parse_nvbandwidth(D2D + "Waived: \n", "x")
    assert isinstance(unnamed.waived[0].testcase, Unsupported)


def test_a_run_cut_inside_a_matrix_keeps_the_rows_it_printed() -> None:
    cut = "\n".join(D2D.split("\n")[:6]) + "\n"  # the title, the columns and rows 0-2
    parsed = parse_nvbandwidth(cut, "x")
    (matrix,) = parsed.matrices
    assert matrix.rows == ("GPU0", "GPU1", "GPU2") and matrix.values_gbps[1][0] == 276.19
    assert matrix.rows_missing == tuple(f"GPU{i}" for i in range(3, 8))


def test_a_run_that_stops_after_starting_a_test() -> None:
    text = D2D + "Running device_to_device_memcpy_read_ce.\n"
    parsed = parse_nvbandwidth(text, "x")
    assert parsed.tests_run == ("device_to_device_memcpy_write_ce", "device_to_device_memcpy_read_ce")
    assert parsed.stopped_in == "device_to_device_memcpy_read_ce"
    assert any("stops before its matrix" in note for _line, note in parsed.notes)
    assert isinstance(parse_nvbandwidth(D2D, "x").stopped_in, Unsupported)


def test_banner_alone_is_refused() -> None:
    with pytest.raises(InputError, match="without a bandwidth matrix or a test outcome"):
        parse_nvbandwidth("nvbandwidth Version: v0.8\nDevice 0: NVIDIA H100\n", "x")


def test_a_superscript_digit_in_a_matrix_header_is_no_column_and_no_crash() -> None:
    """``'²'.isdigit()`` is True and ``int('²')`` raises: a header cell the readers take for a number must be a decimal
    one (found by the damaged-capture property test: exit 5 before)."""
    text = D2D + "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n           0         1²\n 0     55.1      55.2\n"
    parse_nvbandwidth(text, "x", partial=True)  # read or refused, never a ValueError
