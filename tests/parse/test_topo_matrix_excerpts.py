"""``topo -m`` as people paste it: without its header line, cut after some rows, or from vLLM's collect_env."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dev_pastes import dev_paste

from topoaudit.model.values import Unsupported
from topoaudit.parse.topo_matrix import TopoParseError, looks_like_topo_matrix, parse_topo_matrix

TOPO = Path(__file__).parent.parent / "fixtures" / "topo"


def read(name: str) -> str:
    return (TOPO / name).read_text()


def without_header(text: str) -> str:
    lines = text.split("\n")
    header = next(i for i, line in enumerate(lines) if "GPU0" in line and "GPU1" in line)
    return "\n".join(lines[:header] + lines[header + 1 :])


def links(text: str, *, partial: bool = False) -> set[tuple[str, str, str]]:
    return {(lk.a, lk.b, lk.code) for lk in parse_topo_matrix(text, partial=partial).machine.links}


# --- a matrix pasted without its header row ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "columns"),
    [
        ("topo-h100-8gpu-stas-ht-1.txt", "GPU0-GPU7"),
        ("topo-8xa100sxm4-80g-8nic-roce-deepep-1.txt", "GPU0-GPU7, NIC0-NIC7"),
        ("topo-dgx1-v100-hybridcubemesh-oneflow-1.txt", "GPU0-GPU7, mlx5_0"),  # old drivers name the NIC column
        ("topo-h800-8gpu-9nic-bond-nicnames-sglang-1.txt", "GPU0-GPU7, NIC0-NIC8"),
    ],
)
def test_matrix_without_its_header_reads_as_the_whole_paste(name: str, columns: str) -> None:
    text = read(name)
    bare = without_header(text)
    assert looks_like_topo_matrix(bare)
    parsed, whole = parse_topo_matrix(bare), parse_topo_matrix(text)
    assert links(bare) == links(text)
    assert [(g.cpu_affinity, g.numa_nodes) for g in parsed.machine.gpus] == [
        (g.cpu_affinity, g.numa_nodes) for g in whole.machine.gpus
    ]
    assert parsed.header_inferred and not whole.header_inferred
    first = parsed.issues[0]
    assert first.action == "excerpt"  # nothing is lost: the rows name their columns
    assert first.message.startswith(f"no header line: the columns are named from the rows ({columns},")


def test_headerless_8x_h100_keeps_every_nv18_pair() -> None:
    parsed = parse_topo_matrix(without_header(read("topo-h100-8gpu-stas-ht-1.txt")))
    assert len(parsed.machine.gpus) == 8
    assert {lk.code for lk in parsed.machine.links if lk.a.startswith("GPU") and lk.b.startswith("GPU")} == {"NV18"}
    assert parsed.missing_rows == () and parsed.unknown_links == () and parsed.coverage() == ""


def test_headerless_matrix_whose_nic_rows_are_cut_reads_the_extra_columns_only_on_a_switch_board() -> None:
    """Columns after the GPUs with no row and no NVLink cell could be GPUs or NICs. NV12 reaching GPU7 is an 8-GPU
    NVSwitch baseboard (HGX A100), so they are its NICs; with no NVLink to say so they are not guessed."""
    text = without_header(read("topo-8xa100sxm4-80g-8nic-roce-deepep-1.txt"))
    kept = [line for line in text.split("\n") if not line.startswith("NIC")]
    bare = "\n".join(kept)
    assert looks_like_topo_matrix(bare)
    machine = parse_topo_matrix(bare).machine
    assert len(machine.gpus) == 8 and len(machine.nics) == 8
    pcie_only = "\n".join(line.replace("NV12", "SYS") for line in kept)
    assert not looks_like_topo_matrix(pcie_only)
    with pytest.raises(TopoParseError, match="GPUs or NICs cannot be told"):
        parse_topo_matrix(pcie_only)


def test_a_single_row_does_not_make_a_matrix() -> None:
    """One row (an evidence line quoted in a thread) cannot say whether its other column is a GPU or a NIC."""
    assert not looks_like_topo_matrix("GPU0     X      PHB     0-23    0               N/A\n")


def test_the_header_alone_is_recognised_and_judges_nothing() -> None:
    """vllm-project/vllm#32090's collect_env cut after the matrix's header: topo -m's, with nothing to judge in it
    (not refused as text nothing recognises); a header with other text under it is not one."""
    header = "GPU Topology:\n  \tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    assert looks_like_topo_matrix(header)
    with pytest.raises(TopoParseError, match="the header of an nvidia-smi topo -m matrix without its rows"):
        parse_topo_matrix(header)
    assert not looks_like_topo_matrix(header + "some other text\n")
    flattened = "$ nvidia-smi topo -m GPU0 GPU1 GPU2 GPU3 GPU0 X PHB NV4 PHB GPU1 PHB X PHB NV4\n"  # a page's one line
    assert not looks_like_topo_matrix(flattened)


# --- a matrix cut after some rows --------------------------------------------------------------------------


def dgx2(rows: int | None = None) -> str:
    """A DGX-2 ``topo -m`` (16 V100 behind NVSwitches, NV6 between every pair, eight mlx5 columns), cut after
    ``rows`` rows when given: the shape of the matrices pasted in NVIDIA/nccl-tests#78."""
    cols = [f"GPU{i}" for i in range(16)] + [f"mlx5_{i}" for i in range(8)]

    def slot(label: str) -> int:
        return int(label[3:]) if label.startswith("GPU") else int(label[5:]) * 2

    def cell(a: str, b: str) -> str:
        if a == b:
            return "X"
        if a.startswith("GPU") and b.startswith("GPU"):
            return "NV6"
        sa, sb = slot(a), slot(b)
        return "PIX" if sa // 2 == sb // 2 else "PXB" if sa // 4 == sb // 4 else "NODE" if sa // 8 == sb // 8 else "SYS"

    out = ["        " + "".join(f"{c:<8}" for c in cols) + "CPU Affinity"]
    for r in cols[: rows if rows is not None else len(cols)]:
        affinity = ("0-23,48-71" if int(r[3:]) < 8 else "24-47,72-95") if r.startswith("GPU") else ""
        out.append(f"{r:<8}" + "".join(f"{cell(r, c):<8}" for c in cols) + affinity)
    return "\n".join(out) + "\n"


def test_dgx2_matrix_cut_after_five_rows_is_read_as_far_as_it_goes() -> None:
    parsed = parse_topo_matrix(dgx2(5), partial=True)
    whole = links(dgx2())
    got = {(lk.a, lk.b, lk.code) for lk in parsed.machine.links}
    assert got < whole  # every link read is the whole matrix's link
    assert ("GPU4", "GPU15", "NV6") in got and ("GPU0", "mlx5_7", "SYS") in got  # rows present, every column
    assert not any(a == "GPU5" and b == "GPU6" for a, b, _ in got)
    assert parsed.missing_rows == (*(f"GPU{i}" for i in range(5, 16)), *(f"mlx5_{i}" for i in range(8)))
    assert len(parsed.unknown_gpu_pairs()) == 11 * 10 // 2
    assert parsed.coverage() == "rows for 5 of 16 GPUs; 55 GPU pair(s) unknown"
    assert parsed.machine.gpus[4].cpu_affinity == (*range(24), *range(48, 72))
    assert "GPU5 row missing" in str(parsed.machine.gpus[5].cpu_affinity)
    truncation = next(i for i in parsed.issues if "rows for 5 of 16" in i.message)
    assert truncation.line == 6 and truncation.action == "partial"  # cut, not damaged: strict still exits 3
    assert "GPU5-GPU15 have no row" in truncation.message


def test_cut_matrix_is_refused_by_default_with_what_it_shows() -> None:
    """A judge that took a missing pair for a missing NVLink would be wrong: unless the caller reads it as a
    partial matrix, the refusal says what the paste shows, and keeps the reading."""
    with pytest.raises(TopoParseError) as err:
        parse_topo_matrix(dgx2(5))
    assert "the paste shows rows for 5 of 16 GPUs (GPU5-GPU15 have no row), so 55 GPU pair(s) have no cell" in str(
        err.value
    )
    assert err.value.partial is not None and err.value.partial.coverage().startswith("rows for 5 of 16 GPUs")


def test_one_missing_row_still_comes_from_the_mirror() -> None:
    text = dgx2()
    cut = "\n".join(line for line in text.split("\n") if not line.startswith("GPU9 "))
    parsed = parse_topo_matrix(cut)
    assert links(cut) == links(text)
    assert parsed.missing_rows == ("GPU9",) and parsed.unknown_links == () and parsed.coverage() == ""


# --- vLLM's collect_env `GPU Topology:` section ------------------------------------------------------------


def test_collect_env_blank_affinity_columns_are_blank_not_cut() -> None:
    """collect_env in a container prints blank CPU and NUMA Affinity columns: ``N/A`` is the GPU NUMA ID."""
    parsed = parse_topo_matrix(dev_paste("vllm-19607-topo-2gpu-nv12-8nic"))
    g0 = parsed.machine.gpus[0]
    assert isinstance(g0.cpu_affinity, Unsupported)
    assert "CPU Affinity is blank in the GPU0 row" in g0.cpu_affinity.reason
    assert isinstance(g0.numa_nodes, Unsupported) and "blank" in g0.numa_nodes.reason
    assert isinstance(g0.gpu_numa_id, Unsupported) and "N/A" in g0.gpu_numa_id.reason
    assert parsed.machine.link("GPU0", "GPU1").code == "NV12"  # type: ignore[union-attr]
    assert not [i for i in parsed.issues if "cut short" in i.message]


TABBED_BLANK_CPU = (
    "\tGPU0\tGPU1\tGPU2\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV12\tNV12\tPXB\t0-39\t0\t\tN/A\n"
    "GPU1\tNV12\t X \tNV12\tPXB\t0-39\t0\t\tN/A\n"
    "GPU2\tNV12\tNV12\t X \tSYS\t\t1\t\tN/A\n"
    "NIC0\tPXB\tPXB\tSYS\t X \t\t\t\t\n"
)


def test_a_tabbed_row_with_a_blank_cpu_affinity_is_placed_by_its_tab_stops() -> None:
    """A check_env's topo -m whose last GPU reads ``SYS\t\t1\t\tN/A``: a blank CPU Affinity where the others read
    ``0-39\t0\t\tN/A`` (sgl-project/sglang#5077, 4x A100 SXM4); before, it was taken for a row cut short (a
    warning). A row cut at its end still is one."""
    parsed = parse_topo_matrix(TABBED_BLANK_CPU)
    g2 = parsed.machine.gpus[2]
    assert (
        isinstance(g2.cpu_affinity, Unsupported) and "CPU Affinity is blank in the GPU2 row" in g2.cpu_affinity.reason
    )
    assert g2.numa_nodes == (1,) and parsed.machine.gpus[0].cpu_affinity == tuple(range(40))
    assert not [i for i in parsed.issues if "cut short" in i.message]
    cut = TABBED_BLANK_CPU.replace("SYS\t\t1\t\tN/A", "SYS\t\t1")
    assert [i for i in parse_topo_matrix(cut).issues if "cut short" in i.message]


def test_collect_env_with_every_column_filled_reads_in_order() -> None:
    parsed = parse_topo_matrix(dev_paste("vllm-22085-topo-4xl20-pcie-node-pix"))
    assert [g.numa_nodes for g in parsed.machine.gpus] == [(0,)] * 4
    assert parsed.machine.gpus[3].cpu_affinity == tuple(range(128))
    assert parsed.machine.link("GPU1", "GPU2").code == "PIX"  # type: ignore[union-attr]
    assert parsed.issues == ()


def test_a_matrix_cut_before_its_last_gpu_row_keeps_every_gpu_pair_and_is_an_excerpt() -> None:
    """NVIDIA/nccl#1435 pasted an 8x A100 matrix that stops after GPU6's row: GPU7's pairs are all in its column, so
    only GPU7's paths to the NICs are unknown. That is the shape of a paste, not damage (info, not a warning)."""
    parsed = parse_topo_matrix(dgx2(15), partial=True)
    assert not parsed.unknown_gpu_pairs()
    (cut,) = [i for i in parsed.issues if "have no cell" in i.message]
    assert cut.action == "excerpt" and "every GPU pair is known, only paths from GPUs to NICs are not" in cut.message


def test_a_matrix_rendered_as_a_markdown_table_reads_like_the_console_one() -> None:
    """Pages and comments show ``topo -m`` as an HTML table, and copying it gives Markdown's pipes and its rule
    line: the same links as the console's tab-separated matrix."""
    console = read("topo-h100-8gpu-stas-ht-1.txt")
    header = next(line for line in console.splitlines() if "GPU0" in line and "GPU1" in line)
    rows = [line for line in console.splitlines() if line.startswith("GPU")]
    columns = re.split(r"\s{2,}", header.strip())
    markdown = ["| | " + " | ".join(columns) + " |", "|" + "---|" * (len(columns) + 1)]
    markdown += ["| " + " | ".join(re.split(r"\s{2,}", row.strip())) + " |" for row in rows]
    assert looks_like_topo_matrix("\n".join(markdown))
    assert links("\n".join(markdown)) == links(console)


FOUR_NV6 = """\
        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity
GPU0     X      NV6     NV6     NV6     0-15    0
GPU1    NV6      X      NV6     NV6     0-15    0
GPU2    NV6     NV6      X      NV6     0-15    0
GPU3    NV6     NV6     NV6      X      0-15    0
"""


@pytest.mark.parametrize(
    ("paste", "said"),
    [
        ("\n".join(FOUR_NV6.splitlines()[:4]) + "\n", "GPU3 row not in the paste, which stops before it"),
        ("\n".join(FOUR_NV6.splitlines()[2:]) + "\n", "GPU0 row not in the paste, which starts after it"),
    ],
    ids=["stops-before-the-last-row", "headerless-from-the-second-row"],
)
def test_a_gpu_row_the_copy_left_out_at_an_end_is_an_excerpt_not_damage(paste: str, said: str) -> None:
    """vllm-project/vllm#50557's matrix cut after GPU2, or copied from GPU1 on: every pair is in another row's cell,
    only that GPU's affinity is unknown; the paste's shape, not damage (a row missing in the middle still is)."""
    parsed = parse_topo_matrix(paste)
    assert links(paste) == links(FOUR_NV6)
    (issue,) = [i for i in parsed.issues if "row not in the paste" in i.message]
    assert issue.action == "excerpt" and said in issue.message and "its affinity is unknown" in issue.message
    middle = "".join(line + "\n" for line in FOUR_NV6.splitlines() if not line.startswith("GPU1 "))
    assert [i.action for i in parse_topo_matrix(middle).issues if "GPU1 row" in i.message] == ["recovered"]
