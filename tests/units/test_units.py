"""One size grammar, one size formatter and one bus-id form, used alike by policies, the bench, the catalog,
the probe and the nccl-tests reader."""

from __future__ import annotations

import pytest

from topoaudit.judge.policy import parse_policy
from topoaudit.units import format_size, normalize_bus_id, parse_bus_id, parse_size


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("16M", 16 << 20),
        ("16MB", 16 << 20),
        ("16MiB", 16 << 20),
        ("16mib", 16 << 20),
        ("16 MiB", 16 << 20),
        ("1G", 1 << 30),
        ("8GiB", 8 << 30),
        ("1T", 1 << 40),
        ("1.5K", 1536),
        ("4096", 4096),
        ("512B", 512),
        (1024, 1024),
    ],
)
def test_sizes_read_with_binary_multiples(text: str | int, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(("text", "words"), [("lots", "not a size"), ("16Mx", "not a size"), ("", "not a size"),
                                             ("-1", "not a size"), ("0", "at least 1 byte"),
                                             ("1.5", "whole number of bytes"), (True, "not a size")])  # fmt: skip
def test_what_is_not_a_size_is_refused_with_an_example(text: str | bool, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_size(text)


def test_a_policy_reads_sizes_as_the_bench_does() -> None:
    policy = parse_policy("[[expect.busbw]]\ngroup = 'all'\nsize = '16MB'\nmin_gbps = 1\n", "p.toml")
    assert policy.busbw[0].size_bytes == parse_size("16M") == 16 << 20


@pytest.mark.parametrize(
    ("size", "text"), [(8, "8 B"), (1536, "1536 B"), (64 << 10, "64 KiB"), (16 << 20, "16 MiB"), (3 << 30, "3 GiB")]
)
def test_sizes_are_written_in_the_largest_unit_that_divides_them(size: int, text: str) -> None:
    assert format_size(size) == text and parse_size(text.replace(" ", "")) == size


@pytest.mark.parametrize(
    ("raw", "bus_id"),
    [
        ("00000000:07:00.0", "0000:07:00.0"),  # NVML
        ("0000:07:00.0", "0000:07:00.0"),  # sysfs, torch
        ("07:00.0", "0000:07:00.0"),
        ("0000:07:00", "0000:07:00.0"),  # nccl-tests' "busId" in some versions
        (" 0000:C1:00.1 ", "0000:c1:00.1"),
        ("FFFFFFFF:FF:FF.0", "ffffffff:ff:ff.0"),  # an NVSwitch that is not a PCI device
    ],
)
def test_bus_ids_take_one_form(raw: str, bus_id: str) -> None:
    assert parse_bus_id(raw) == normalize_bus_id(raw) == bus_id


def test_text_that_is_not_a_bus_id_is_kept_comparable() -> None:
    assert parse_bus_id("1b000") is None and normalize_bus_id(" GPU0 ") == "gpu0"
