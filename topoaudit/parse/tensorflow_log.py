"""The lines of TensorFlow's GPU start-up log that carry its peer-access matrix.

TensorFlow prints which GPU pairs it enabled peer access between, behind its log prefix
(``... gpu_device.cc:1243] 0:   Y Y N N``): a title, a line of column numbers (``DMA: 0 1 2 3`` in 1.x), then one
Y/N row per GPU. Shared by the paste splitter (which part a line belongs to) and the P2P reader (what it says).
"""

from __future__ import annotations

import re

MARKS = ("edge matrix:", "] DMA:")
"""Text one of the matrix's title or column lines holds: a cheap test before any pattern is tried."""
LINE = re.compile(r"(?:gpu_device|gpu_init)\.cc:\d+\] (?P<body>.*)$")
"""A line of TensorFlow's GPU start-up log; its body is what the line says."""
TITLE = re.compile(r"^(?:Device peer to peer matrix|Device interconnect StreamExecutor with strength 1 edge matrix:)")
COLUMNS = re.compile(r"^(?:DMA:)?((?:\s*\d{1,4})+)\s*$")
ROW = re.compile(r"^(\d{1,4}):\s+((?:[YN]\s*)+)$")


def body(line: str) -> str:
    """What a TensorFlow start-up log line says after its prefix; "" for any other line."""
    m = LINE.search(line)
    return m["body"].strip() if m else ""


def is_matrix_line(line: str) -> bool:
    """Whether the line is one of the peer-access matrix's: its title, its column numbers or a Y/N row."""
    said = body(line)
    return bool(said) and bool(TITLE.match(said) or COLUMNS.match(said) or ROW.match(said))
