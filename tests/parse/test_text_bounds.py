"""Reading a capture is bounded whatever the bytes come from, and a sentence that quotes input cannot drive the
terminal it is printed on."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest

from topoaudit.errors import InputError
from topoaudit.parse.text import MAX_INPUT_BYTES, printable, read_capped, read_capture_file


class Endless(io.RawIOBase):
    """A pipe that never ends (a 200 MB log piped in is the same for the first 64 MiB): counts what it serves."""

    def __init__(self) -> None:
        self.served = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        line = b"host:1:2 [0] NCCL INFO Ring 00 : 0 1 2 3 4 5 6 7\n"
        size = len(buffer)
        chunk = (line * (size // len(line) + 1))[:size]
        buffer[:size] = chunk
        self.served += size
        return size


def test_standard_input_past_64_mib_is_refused_after_reading_64_mib_not_all_of_it() -> None:
    pipe = Endless()
    started = time.perf_counter()
    with pytest.raises(InputError, match=r"^<stdin>: larger than 64 MiB; not a capture topoaudit reads$"):
        read_capped(io.BufferedReader(pipe, buffer_size=1 << 20), "<stdin>")
    assert pipe.served <= MAX_INPUT_BYTES + (1 << 20)
    assert time.perf_counter() - started < 10


def test_standard_input_up_to_the_cap_is_read_whole() -> None:
    assert read_capped(io.BytesIO(b"x" * 100), "<stdin>", cap=100) == b"x" * 100
    with pytest.raises(InputError, match=r"larger than 100 bytes"):
        read_capped(io.BytesIO(b"x" * 101), "<stdin>", cap=100)


def test_a_file_larger_than_the_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)  # sparse: no disk used
    with pytest.raises(InputError, match=r"big\.log: larger than 64 MiB; not a capture topoaudit reads$"):
        read_capture_file(str(big))


def test_a_device_that_never_ends_is_refused_at_the_cap() -> None:
    with pytest.raises(InputError, match=r"^/dev/zero: larger than 1024 bytes"):
        read_capture_file("/dev/zero", cap=1024)


NOWHERE = "no such file (or a symbolic link to a file that does not exist)"
LOOP = "a symbolic link that loops back on itself (too many levels of symbolic links)"


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: None, NOWHERE),
        (lambda p: p.mkdir(), "is a directory, not a capture file"),
        (lambda p: os.symlink(p.name, p), LOOP),
        (lambda p: os.symlink("gone.txt", p), NOWHERE),
    ],
    ids=["missing", "folder", "loop", "dangling"],
)
def test_every_way_a_path_is_not_a_readable_file_is_one_sentence(tmp_path: Path, make, said: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "capture.txt"
    make(path)
    with pytest.raises(InputError) as refused:
        read_capture_file(str(path))
    assert str(refused.value) == f"{path}: {said}"


def test_a_readable_capture_is_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "topo.txt"
    path.write_bytes(b"\tGPU0\tGPU1\n")
    assert read_capture_file(str(path)) == b"\tGPU0\tGPU1\n"


@pytest.mark.parametrize(
    "hostile",
    ["\x1b[2J\x1b]0;owned\x07", "\x9b31m", "a\rb", "\u202eevil", "line\u2028break", "\u200fmark", "\x7f", "\x00"],
)
def test_quoted_input_carries_no_control_format_or_separator_character(hostile: str) -> None:
    quoted = printable(f"line 3 reads {hostile!s}")
    assert quoted.startswith("line 3 reads ")
    assert all(ch.isprintable() or ch == " " for ch in quoted), repr(quoted)


def test_plain_text_is_quoted_as_it_is_and_long_text_is_cut() -> None:
    assert printable("0000:18:00.0 NV18 é 中") == "0000:18:00.0 NV18 é 中"
    assert printable("x" * 500, limit=10) == "x" * 9 + "…"
