"""Captured command output as text: the bytes a user hands over, and the captures that hold only a failure.

Reading is bounded the same way whatever the bytes come from: a file or standard input larger than
:data:`MAX_INPUT_BYTES` is refused after reading one byte more than that, never read whole; a path that
cannot be read (a symbolic link that loops, a folder, a device) is named in one sentence.

Windows PowerShell's ``>`` and ``Out-File`` write UTF-16 with a byte-order mark, so a capture copied off a
jump host is often UTF-16; read as UTF-8 it looks like binary data. And a capture taken where nvidia-smi
cannot work holds its error message instead of a matrix; that deserves its own sentence, not "not a format
topoaudit reads".
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
import unicodedata
from typing import BinaryIO

from topoaudit.errors import InputError

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""The largest capture topoaudit reads, from a file or from standard input alike."""

# Longest BOM first: the UTF-32 LE mark begins with the UTF-16 LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_SNIFF_BYTES = 4096


def decode_capture(data: bytes) -> str:
    """Text of a capture: UTF-8, or UTF-16/32 with a byte-order mark, or UTF-16 without one.

    Undecodable bytes become U+FFFD rather than an exception: the parsers then report the damaged line.
    Binary data stays recognisable by its NUL characters.
    """
    mark, encoding = _encoding(data)
    return data[mark:].decode(encoding, errors="replace")


def exact_capture_text(data: bytes) -> str | None:
    """Text of a capture decoded without loss, in the encodings :func:`decode_capture` reads; None for data
    that is not text (undecodable, or holding NUL characters), which redaction cannot check.

    Redaction must see the very text the analysis read: a UTF-16 capture read as UTF-8 interleaves NULs
    with every hostname, and no hostname would be found in it.
    """
    mark, encoding = _encoding(data)
    try:
        text = data[mark:].decode(encoding)
    except UnicodeDecodeError:
        return None
    if "\x00" in text:
        return None
    if encoding != "utf-8" and sum(c.isascii() for c in text) < 0.9 * len(text):
        return None  # a capture is ASCII text; binary data behind a BOM decodes to anything but
    return text


def _encoding(data: bytes) -> tuple[int, str]:
    """The length of the capture's byte-order mark (0 without one) and the encoding its text is in."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return len(bom), encoding
    return 0, _bomless_utf16(data[:_SNIFF_BYTES]) or "utf-8"


def _bomless_utf16(head: bytes) -> str | None:
    """``utf-16-le``/``-be`` when ASCII text alternates with NUL bytes (UTF-16 written without a BOM)."""
    if len(head) < 8:
        return None
    even, odd = head[0::2], head[1::2]
    if odd.count(0) >= 0.9 * len(odd) and even.count(0) <= 0.1 * len(even):
        return "utf-16-le"
    if even.count(0) >= 0.9 * len(even) and odd.count(0) <= 0.1 * len(odd):
        return "utf-16-be"
    return None


# What nvidia-smi prints instead of its output when it cannot work, and why that happens.
_FAILURES = (
    (
        re.compile(r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"),
        "nvidia-smi could not communicate with the NVIDIA driver (the driver is not loaded, or it does not "
        "match the running kernel)",
    ),
    (
        re.compile(r"Failed to initialize NVML: Driver/library version mismatch"),
        "the NVIDIA driver library does not match the loaded kernel module (a driver upgrade without a reboot)",
    ),
    (
        re.compile(r"Failed to initialize NVML: ?(?P<detail>[^\r\n]*)"),
        "nvidia-smi could not initialise NVML",
    ),
    (
        re.compile(r"Unable to determine the device handle for GPU\s*(?P<detail>[^\r\n]*)"),
        "nvidia-smi could not reach a GPU (it may have fallen off the bus)",
    ),
    (re.compile(r"^\s*No devices were found\s*$", re.M), "nvidia-smi found no NVIDIA GPU"),
    (
        re.compile(r"nvidia-smi: (?:command )?not found|'nvidia-smi' is not recognized"),
        "nvidia-smi is not installed where the capture was taken",
    ),
)


def capture_failure(text: str) -> str | None:
    """The sentence for a capture that holds nvidia-smi's failure message; None for any other text."""
    for pattern, why in _FAILURES:
        m = pattern.search(text)
        if m is not None:
            line = text.count("\n", 0, m.start()) + 1
            printed = text[text.rfind("\n", 0, m.start()) + 1 :].split("\n", 1)[0].strip()
            return (
                f"the capture failed: {why}; line {line} reads {printed[:200]!r}, and there is no topology in it. "
                "Fix nvidia-smi on that machine and capture `nvidia-smi topo -m` again"
            )
    return None


# --- reading, bounded -------------------------------------------------------------------------------------


def read_capped(stream: BinaryIO, name: str, cap: int = MAX_INPUT_BYTES) -> bytes:
    """Every byte of ``stream`` (standard input), reading at most ``cap`` + 1 of them; InputError past ``cap``.

    A 200 MB log piped in is refused after 64 MiB, as a file of that size is, not read whole into memory.
    """
    data = stream.read(cap + 1)
    if len(data) > cap:
        raise InputError(f"{name}: larger than {_mib(cap)}; not a capture topoaudit reads")
    return data


def read_capture_file(path: str, cap: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the capture at ``path``, at most ``cap``; InputError naming the file for anything else.

    Every way a path can fail to be a readable file is a sentence: no such file, a folder, a symbolic link
    that loops or leads nowhere, no permission, a device or pipe that never ends.
    """
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"{path}: is a directory, not a capture file")
        if stat.S_ISREG(info.st_mode) and info.st_size > cap:
            raise InputError(f"{path}: larger than {_mib(cap)}; not a capture topoaudit reads")
        with open(path, "rb") as handle:
            data = handle.read(cap + 1)
    except OSError as exc:
        raise InputError(f"{path}: {unreadable(exc)}") from None
    if len(data) > cap:  # a file that grew, or a device that never ends
        raise InputError(f"{path}: larger than {_mib(cap)}; not a capture topoaudit reads")
    return data


def unreadable(exc: OSError) -> str:
    """Why a path cannot be read, as the end of a sentence that begins with the path."""
    if isinstance(exc, FileNotFoundError):
        return "no such file (or a symbolic link to a file that does not exist)"
    if isinstance(exc, IsADirectoryError):
        return "is a directory, not a capture file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    if exc.errno == errno.ELOOP:
        return "a symbolic link that loops back on itself (too many levels of symbolic links)"
    return f"cannot read it ({exc.strerror or type(exc).__name__})"


def _mib(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 else f"{n} bytes"


# --- quoting input in a sentence -------------------------------------------------------------------------

_ASCII_PRINTABLE = re.compile(r"[\x20-\x7e]*")


def printable(text: str, limit: int = 200) -> str:
    """``text`` fit to quote in an error sentence on a terminal: control, format and line-separator characters
    (C0, C1, DEL, ESC sequences, U+2028/2029, bidirectional overrides) become U+FFFD; cut to ``limit``.

    A sentence that quotes a file's line would otherwise carry the file's escape sequences to the terminal.
    """
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    if _ASCII_PRINTABLE.fullmatch(text):  # the common case: nothing to replace
        return text
    return "".join("\ufffd" if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs") else ch for ch in text)
