"""A 576-GPU box: the HTML summarises the matrix no one reads cell by cell, the JSON keeps every link."""

from __future__ import annotations

import itertools
import json
import re

import pytest

from topoaudit.model.machine import Gpu, Link, Machine, level_from_code
from topoaudit.model.report import Report, SourceInfo
from topoaudit.pipeline import analyze
from topoaudit.render import RenderOptions, render

GPUS, DOMAIN = 576, 72
DEGRADED = ("GPU5", "GPU9")  # one pair inside domain 0 with fewer links than its peers


@pytest.fixture(scope="module")
def big() -> Report:
    gpus = tuple(Gpu(index=i, name="NVIDIA GB200") for i in range(GPUS))
    links = []
    for i, j in itertools.combinations(range(GPUS), 2):
        code = "NV18" if i // DOMAIN == j // DOMAIN else "SYS"
        if (f"GPU{i}", f"GPU{j}") == DEGRADED:
            code = "NV12"
        level, count = level_from_code(code)
        links.append(Link(f"GPU{i}", f"GPU{j}", code, level, count))
    return analyze(Machine("synthetic", gpus, (), tuple(links)), source=SourceInfo("synthetic", "576"))


def test_html_is_small_and_summarises_the_matrix(big: Report) -> None:
    html = render(big, "html")
    assert len(html.encode()) < 5_000_000
    matrix = re.search(
        r'<h2 id="matrix">(.*?)</h2>.*?<table class="matrix">(.*?)</table>(.*?)<p class="legend">', html, re.S
    )
    assert matrix is not None
    assert matrix.group(1) == "Link matrix (summary)"
    rows = re.findall(r"<tr>(.*?)</tr>", matrix.group(2), re.S)
    assert len(rows) == 1 + GPUS // DOMAIN  # the header and one row per domain
    assert "domain 0 {0-71}" in rows[1] and ">NV12/NV18<" in rows[1] and ">SYS<" in rows[1]
    assert "GPU5-GPU9: NV12 (its domain&#39;s usual link is NV18)" in matrix.group(3)  # the exception, named
    assert "links" in matrix.group(3) and "report.json" in matrix.group(3)


def test_json_keeps_every_link(big: Report) -> None:
    data = json.loads(render(big, "json"))
    assert len(data["links"]) == GPUS * (GPUS - 1) // 2
    assert {"a": "GPU5", "b": "GPU9", "code": "NV12", "level": "NVLINK", "nvlinks": 12} in data["links"]


def test_console_and_markdown_show_the_same_summary(big: Report) -> None:
    text = render(big, "console", RenderOptions(width=120))
    assert "Link matrix (summary)" in text and "GPU5-GPU9: NV12" in text
    md = render(big, "markdown")
    assert "## Link matrix (summary)" in md and "GPU5-GPU9: NV12" in md
    assert len(md.encode()) < 1_000_000
