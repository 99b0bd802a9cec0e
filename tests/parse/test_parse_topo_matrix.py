"""``nvidia-smi topo -m`` pastes -> Machine: what a careful human reads from each real paste, and damage."""

from __future__ import annotations

from pathlib import Path

import pytest

from topoaudit.exitcodes import ExitCode
from topoaudit.model.machine import Machine, PathLevel
from topoaudit.model.topology import nvlink_domains as model_domains
from topoaudit.model.values import Failed, Unsupported
from topoaudit.parse.cpulist import parse_cpu_list
from topoaudit.parse.topo_matrix import TopoParseError, looks_like_topo_matrix, parse_topo_matrix

FIXTURES = Path(__file__).parent.parent / "fixtures" / "topo"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def nvlink_domains(machine: Machine) -> list[list[int]]:
    """GPU sets joined by NVLink (singletons dropped), sorted, as the model computes them."""
    return sorted(list(d.gpus) for d in model_domains(machine) if d.size > 1)


def numa_of(machine: Machine) -> tuple[object, ...]:
    """Per GPU: its single NUMA node, the tuple when several, None when the paste does not say."""
    out: list[object] = []
    for g in machine.gpus:
        nodes = g.numa_nodes
        out.append(None if not isinstance(nodes, tuple) else nodes[0] if len(nodes) == 1 else nodes)
    return tuple(out)


ALL8 = [[0, 1, 2, 3, 4, 5, 6, 7]]
HALVES = (0, 0, 0, 0, 1, 1, 1, 1)
GB200_A = (0, *range(3, 10), *range(11, 18))
GB200_B = (1, *range(19, 26), *range(27, 34))

# file, GPUs, NICs, NVLink domains, NUMA node per GPU, clean (no issue expected)
TABLE = [
    ("topo-2gpu-nv2-stas-mlengineering-1.txt", 2, 0, [[0, 1]], (None, None), True),
    ("topo-2gpu-nv3-partial-bridge-tabs-slowtopo-1.txt", 2, 0, [[0, 1]], (None, None), True),
    ("topo-2gpu-phb-stas-mlengineering-1.txt", 2, 0, [], (None, None), True),
    ("topo-2x3090-nv4-bridge-clubrig-1.txt", 2, 0, [[0, 1]], (0, 0), True),
    ("topo-2x5090-phb-1.txt", 2, 0, [], (0, 0), True),
    ("topo-2xl4-crossnuma-sys-tabs-p2p-works-1.txt", 2, 0, [], (0, 2), True),
    ("topo-2xrtx6000ada-puget-wrx90-1.txt", 2, 2, [], (0, 0), True),
    ("topo-4gpu-nv4-alltoall-slingshot-reversednuma-1.txt", 4, 0, [[0, 1, 2, 3]], (3, 2, 1, 0), True),
    ("topo-4xa10-vm-all-sys-single-numa-1.txt", 4, 2, [], (0, 0, 0, 0), True),
    ("topo-4xa100pcie-nv12-pairs-azure-nc96ads-1.txt", 4, 0, [[0, 1], [2, 3]], (0, 1, 2, 3), True),
    ("topo-4xa100sxm4-nv4-alltoall-2nic-nolegendheader-1.txt", 4, 2, [[0, 1, 2, 3]], (2, 2, 6, 6), True),
    ("topo-4xh100-vm-halfnode-all-phb-8nic-1.txt", 4, 8, [[0, 1, 2, 3]], (0, 0, 0, 0), True),
    ("topo-4xh800sxm-nv8-trailingspaces-forum-1.txt", 4, 0, [[0, 1, 2, 3]], (None,) * 4, True),
    ("topo-4xrtx6000ada-asus-esc8000a-e12-1.txt", 4, 4, [], (0, 0, 1, 1), True),
    ("topo-8gpu-nv18-8nic-collectenv-indented-header-tabs-1.txt", 8, 8, ALL8, HALVES, False),
    ("topo-8x4090-pcie-node-sys-noNIC-legendcut-1.txt", 8, 0, [], HALVES, True),
    ("topo-8x4090-pcie-sys-nics-1.txt", 8, 2, [], HALVES, True),
    ("topo-8x5090-pcie-dual-epyc-2nic-sglang-1.txt", 8, 2, [], HALVES, True),
    ("topo-8xa100sxm4-80g-8nic-roce-deepep-1.txt", 8, 8, ALL8, HALVES, True),
    ("topo-8xh100nvl-nv12-pairs-2nic-sglang-1.txt", 8, 2, [[0, 1], [2, 3], [4, 5], [6, 7]], HALVES, True),
    ("topo-8xh20-3e-nv18-2nic-gpu0only-sglang-1.txt", 8, 2, ALL8, HALVES, True),
    ("topo-8xl4-pcie-phb-sys-2socket-1.txt", 8, 0, [], HALVES, True),
    ("topo-a100-8gpu-17nic-single-numa-0-103-bond-1.txt", 8, 17, ALL8, (0,) * 8, True),
    ("topo-a100-8gpu-18nic-oci-numa-nps4-1.txt", 8, 18, ALL8, (3, 3, 1, 1, 7, 7, 5, 5), True),
    ("topo-a100-8gpu-4numa-3nic-fastdeploy-1.txt", 8, 3, ALL8, (0, 0, 1, 1, 2, 2, 3, 3), True),
    ("topo-a100-8gpu-stas-compressed-spaces-1.txt", 8, 0, ALL8, HALVES, True),
    ("topo-dgx-h100-talos-nicrows-truncated-1.txt", 8, 12, ALL8, HALVES, False),
    ("topo-dgx1-v100-hybridcubemesh-oneflow-1.txt", 8, 1, ALL8, (None,) * 8, True),
    ("topo-gb200-4gpu-hand-reformatted-compact-1.txt", 4, 0, [[0, 1, 2, 3]], (GB200_A,) * 2 + (GB200_B,) * 2, True),
    ("topo-h100-8gpu-12nic-numaoff-2.txt", 8, 12, ALL8, (0,) * 8, True),
    ("topo-h100-8gpu-stas-compressed-spaces-1.txt", 8, 0, ALL8, HALVES, True),
    ("topo-h100-8gpu-stas-ht-1.txt", 8, 0, ALL8, HALVES, True),
    ("topo-h800-8gpu-9nic-bond-nicnames-sglang-1.txt", 8, 9, ALL8, HALVES, True),
    ("topo-h800-8gpu-nv8-terminal-truncated-cols-1.txt", 8, 4, ALL8, HALVES, False),
    ("topo-hgx-h100-sxm-10nic-tabs-nicrows-truncated-1.txt", 8, 10, ALL8, HALVES, False),
    # MetaX clone: 'HT' (MarsLink) is not NVLink, so no NVLink domain; 'Node Affinity' comes first.
    ("topo-nonnvidia-metax-8gpu-marslink-ht-1.txt", 8, 0, [], (2, 2, 3, 3, 6, 6, 7, 7), False),
    ("topo-nv8-8gpu-4nic-driver525-centos-1.txt", 8, 4, ALL8, HALVES, True),
    ("topo-v100-sxm2-8gpu-hybridcubemesh-modern-lmdeploy-1.txt", 8, 0, ALL8, HALVES, True),
]


def test_table_covers_every_topo_fixture() -> None:
    on_disk = sorted(p.name for p in FIXTURES.glob("topo-*.txt"))
    assert sorted(row[0] for row in TABLE) == on_disk
    provenance = (FIXTURES / "PROVENANCE.tsv").read_text().splitlines()
    assert sorted(line.split("\t")[0] for line in provenance[1:]) == on_disk


@pytest.mark.parametrize(("name", "gpus", "nics", "domains", "numa", "clean"), TABLE, ids=[r[0] for r in TABLE])
def test_real_paste(
    name: str, gpus: int, nics: int, domains: list[list[int]], numa: tuple[object, ...], clean: bool
) -> None:
    text = read(name)
    assert looks_like_topo_matrix(text)
    parsed = parse_topo_matrix(text)
    m = parsed.machine
    assert m.source == "topo-matrix"
    assert [g.index for g in m.gpus] == list(range(gpus))
    assert len(m.nics) == nics
    assert nvlink_domains(m) == domains
    assert numa_of(m) == numa
    assert (parsed.issues == ()) == clean, parsed.issues
    if clean:  # every pair of devices has exactly one link
        n = gpus + nics
        assert len(m.links) == n * (n - 1) // 2
        assert len({(lk.a, lk.b) for lk in m.links}) == len(m.links)


# --- what a reader checks on particular pastes ----------------------------------------------------------------


def test_hyperthread_cpu_lists_and_na_gpu_numa_id() -> None:
    m = parse_topo_matrix(read("topo-h100-8gpu-stas-ht-1.txt")).machine
    assert m.gpus[0].cpu_affinity == (*range(0, 52), *range(104, 156))
    assert m.gpus[7].cpu_affinity == (*range(52, 104), *range(156, 208))
    assert isinstance(m.gpus[0].gpu_numa_id, Unsupported)  # no column in this older format
    m2 = parse_topo_matrix(read("topo-2x5090-phb-1.txt")).machine
    assert isinstance(m2.gpus[0].gpu_numa_id, Unsupported) and "N/A" in m2.gpus[0].gpu_numa_id.reason


def test_na_numa_affinity_is_unsupported_with_reason() -> None:
    g = parse_topo_matrix(read("topo-2gpu-nv2-stas-mlengineering-1.txt")).machine.gpus[0]
    assert isinstance(g.numa_nodes, Unsupported) and "N/A" in g.numa_nodes.reason
    assert g.cpu_affinity == tuple(range(24))


def test_overflowing_cpu_and_numa_columns_split_on_single_space() -> None:
    m = parse_topo_matrix(read("topo-a100-8gpu-18nic-oci-numa-nps4-1.txt")).machine
    assert m.gpus[4].cpu_affinity == tuple(range(112, 128)) and m.gpus[4].numa_nodes == (7,)
    m2 = parse_topo_matrix(read("topo-8x5090-pcie-dual-epyc-2nic-sglang-1.txt")).machine
    assert m2.gpus[4].cpu_affinity == (*range(128, 256), *range(384, 512)) and m2.gpus[4].numa_nodes == (1,)


def test_gpu_numa_id_numbers() -> None:
    m = parse_topo_matrix(read("topo-gb200-4gpu-hand-reformatted-compact-1.txt")).machine
    assert [g.gpu_numa_id for g in m.gpus] == [2, 10, 18, 26]


def test_nic_legend_gives_device_names_not_indices() -> None:
    m = parse_topo_matrix(read("topo-h800-8gpu-9nic-bond-nicnames-sglang-1.txt")).machine
    assert [(n.label, n.device) for n in m.nics][:2] == [("NIC0", "mlx5_0"), ("NIC1", "mlx5_3")]
    assert m.nics[8].device == "mlx5_bond_0"
    assert m.link("GPU0", "NIC8").code == "NODE"  # type: ignore[union-attr]
    m2 = parse_topo_matrix(read("topo-4xa100sxm4-nv4-alltoall-2nic-nolegendheader-1.txt")).machine
    assert [n.device for n in m2.nics] == ["mlx5_0", "mlx5_1"]


def test_nic_legend_out_of_order() -> None:
    legend = "  NIC0: mlx5_0\n  NIC1: mlx5_1"
    text = read("topo-2xrtx6000ada-puget-wrx90-1.txt").replace(legend, "  NIC1: mlx5_7\n  NIC0: mlx5_4")
    m = parse_topo_matrix(text).machine
    assert [(n.label, n.device) for n in m.nics] == [("NIC0", "mlx5_4"), ("NIC1", "mlx5_7")]


def test_old_mlx5_columns_name_the_device() -> None:
    m = parse_topo_matrix(read("topo-dgx1-v100-hybridcubemesh-oneflow-1.txt")).machine
    assert [(n.label, n.device) for n in m.nics] == [("mlx5_0", "mlx5_0")]
    assert m.link("GPU2", "mlx5_0").code == "PIX"  # type: ignore[union-attr]
    # the cube mesh is connected but not all-pairs: GPU0-GPU5 goes over SYS
    assert m.link("GPU0", "GPU5").level == PathLevel.SYS  # type: ignore[union-attr]
    assert m.link("GPU0", "GPU3").nvlinks == 2  # type: ignore[union-attr]


def test_truncated_nic_rows_recover_what_is_there() -> None:
    """The NIC rows cut short: every GPU's path to every NIC is in the GPU rows, so only NIC-to-NIC cells are missing,
    which no rule reads: the paste is an excerpt (no input-recovered warning), not damage."""
    parsed = parse_topo_matrix(read("topo-dgx-h100-talos-nicrows-truncated-1.txt"))
    m = parsed.machine
    assert m.link("NIC1", "NIC2").code == "PIX"  # type: ignore[union-attr]
    assert m.link("NIC6", "NIC7") is None  # no cell says it: left out, not guessed
    assert m.link("GPU7", "NIC11").code == "PXB"  # type: ignore[union-attr]
    assert isinstance(m.nics[0].device, Unsupported)  # no NIC Legend in the paste
    (issue,) = parsed.issues
    assert issue.action == "excerpt" and issue.line == 15 and "NIC6" in issue.message
    assert issue.message.endswith("no GPU's link is among them")


def test_terminal_cut_cpu_affinity_is_failed_not_wrong() -> None:
    parsed = parse_topo_matrix(read("topo-h800-8gpu-nv8-terminal-truncated-cols-1.txt"))
    m = parsed.machine
    assert all(isinstance(g.cpu_affinity, Failed) for g in m.gpus)  # GPU7 '2-63,96-127' parses but is wrong
    assert numa_of(m) == HALVES
    assert m.link("GPU7", "NIC3").code == "PIX"  # type: ignore[union-attr]  # from the NIC rows
    assert m.link("NIC0", "NIC1") is None
    assert any("CPU Affinity" in i.message and i.line == 2 for i in parsed.issues)


def test_row_cut_inside_its_cpu_list_is_failed_not_wrong() -> None:
    text = read("topo-h100-8gpu-stas-ht-1.txt").replace("52-103,156-207  1\n", "52-103,156-2\n", 1)
    parsed = parse_topo_matrix(text)
    g4 = parsed.machine.gpus[4]  # '52-103,156-2' parses, but the row ends there: it may be cut
    assert isinstance(g4.cpu_affinity, Failed) and isinstance(g4.numa_nodes, Failed)
    assert parsed.machine.gpus[5].cpu_affinity == (*range(52, 104), *range(156, 208))
    assert [(i.line, i.action) for i in parsed.issues] == [(6, "ignored")]  # its affinity is lost, not a link


def test_cpu_list_that_is_a_fragment_of_another_voids_the_column() -> None:
    text = read("topo-h100-8gpu-stas-ht-1.txt").replace("   52-103,156-207  1\n", "   2-103,156-207  1\n", 1)
    parsed = parse_topo_matrix(text)
    assert all(isinstance(g.cpu_affinity, Failed) for g in parsed.machine.gpus)
    assert numa_of(parsed.machine) == HALVES
    assert [(i.line, i.action) for i in parsed.issues] == [(6, "affinity")]


def test_unknown_vendor_code_kept_verbatim() -> None:
    parsed = parse_topo_matrix(read("topo-nonnvidia-metax-8gpu-marslink-ht-1.txt"))
    lk = parsed.machine.link("GPU0", "GPU7")
    assert lk is not None and lk.code == "HT" and lk.level == PathLevel.UNKNOWN
    assert parsed.machine.gpus[0].cpu_affinity == tuple(range(32, 48))  # reversed column order honoured
    assert any("MarsLink" in i.message for i in parsed.issues)


# --- damaged variants of a real paste ---------------------------------------------------------------------------

BASE = "topo-v100-sxm2-8gpu-hybridcubemesh-modern-lmdeploy-1.txt"  # irregular cube mesh: alignment matters


def links_of(text: str) -> dict[tuple[str, str], str]:
    return {(lk.a, lk.b): lk.code for lk in parse_topo_matrix(text).machine.links}


def edit_line(text: str, line_no: int, old: str, new: str) -> str:
    lines = text.split("\n")
    assert old in lines[line_no - 1]
    lines[line_no - 1] = lines[line_no - 1].replace(old, new, 1)
    return "\n".join(lines)


def test_one_cell_missing_is_recovered_from_its_mirror() -> None:
    text = read(BASE)
    # GPU4 row (line 6): "NV2     SYS     SYS     SYS      X" -> drop the middle SYS (GPU4-GPU2)
    damaged = edit_line(text, 6, "NV2     SYS     SYS     SYS", "NV2     SYS     SYS")
    parsed = parse_topo_matrix(damaged)
    assert links_of(damaged) == links_of(text)
    assert [(i.line, i.action) for i in parsed.issues] == [(6, "recovered")]
    assert parsed.machine.gpus[4].cpu_affinity == (*range(20, 40), *range(60, 80))


def test_cell_and_its_mirror_missing_is_an_error() -> None:
    text = read(BASE)
    damaged = edit_line(text, 2, "NV2     SYS     SYS     SYS", "NV2     SYS     SYS")  # GPU0-GPU5 gone
    damaged = edit_line(damaged, 7, "SYS     NV2     SYS", "NV2     SYS")  # GPU5-GPU0 gone
    with pytest.raises(TopoParseError) as err:
        parse_topo_matrix(damaged)
    assert "line 2" in str(err.value) or "line 7" in str(err.value)
    assert err.value.exit_code == ExitCode.UNUSABLE == 4
    assert err.value.issues and err.value.issues[-1].action == "ambiguous"


def test_glued_cells_are_split_and_nothing_is_lost() -> None:
    """A paste that lost the tabs between two codes holds both: they are split, and the input is not damaged."""
    text = read(BASE)
    damaged = edit_line(text, 3, "NV2     NV1     SYS", "NV2NV1     SYS")
    parsed = parse_topo_matrix(damaged)
    assert links_of(damaged) == links_of(text)
    assert [(i.line, i.action) for i in parsed.issues] == [(3, "respaced")]
    assert "NV2NV1" in parsed.issues[0].message


def test_gpu_row_cut_short() -> None:
    text = read(BASE)
    lines = text.split("\n")
    assert lines[4].startswith("GPU3    NV2     NV1     NV2      X      SYS")
    lines[4] = "GPU3    NV2     NV1     NV2      X"  # the rest of the row never made it into the paste
    damaged = "\n".join(lines)
    parsed = parse_topo_matrix(damaged)
    assert links_of(damaged) == links_of(text)
    g3 = parsed.machine.gpus[3]
    assert isinstance(g3.cpu_affinity, Failed) and isinstance(g3.numa_nodes, Failed)
    assert any(i.line == 5 and i.action == "recovered" for i in parsed.issues)


def test_gpu_row_missing_is_recovered_from_the_columns() -> None:
    text = read(BASE)
    lines = text.split("\n")
    del lines[4]  # GPU3
    damaged = "\n".join(lines)
    parsed = parse_topo_matrix(damaged)
    assert links_of(damaged) == links_of(text)
    assert isinstance(parsed.machine.gpus[3].cpu_affinity, Failed)
    assert [(i.line, i.action) for i in parsed.issues] == [(5, "recovered")]
    assert "GPU3" in parsed.issues[0].message


def test_contradicting_mirror_cells_are_an_error() -> None:
    damaged = edit_line(read(BASE), 2, "X      NV1     NV1", "X      NV1     NV2")
    with pytest.raises(TopoParseError, match="GPU0-GPU2"):
        parse_topo_matrix(damaged)


def test_extra_gpu_row_means_inconsistent_counts() -> None:
    extra = "GPU2    NV4     NV4      X      0-5     0               N/A"
    text = read("topo-2x3090-nv4-bridge-clubrig-1.txt").replace("\n\nLegend", f"\n{extra}\n\nLegend")
    with pytest.raises(TopoParseError, match="line 4"):
        parse_topo_matrix(text)


def test_a_gpu_row_pasted_twice_with_different_cells_is_an_error() -> None:
    """Which copy is right cannot be told, so neither wins; an identical copy is only noted."""
    text = read("topo-2x3090-nv4-bridge-clubrig-1.txt")
    same = "GPU1    NV4      X      0-5     0               N/A"
    other = "GPU1    NV2      X      0-5     0               N/A"
    parsed = parse_topo_matrix(text.replace("\n\nLegend", f"\n{same}\n\nLegend"))
    assert [(i.line, i.action, i.message) for i in parsed.issues] == [
        (4, "ignored", "GPU1 row repeated (first at line 3)")
    ]
    with pytest.raises(TopoParseError, match=r"line 4: GPU1 row appears twice \(lines 3 and 4\) and differs") as err:
        parse_topo_matrix(text.replace("\n\nLegend", f"\n{other}\n\nLegend"))
    assert err.value.exit_code == ExitCode.UNUSABLE


def test_no_matrix_is_an_error() -> None:
    with pytest.raises(TopoParseError):
        parse_topo_matrix("nvidia-smi: command not found\n")
    assert not looks_like_topo_matrix("Legend:\n  X = Self\n")


def test_p2p_output_is_not_a_topology() -> None:
    p2p = " \tGPU0\tGPU1\t\n GPU0\tX\tGNS\t\n GPU1\tGNS\tX\t\n\nLegend:\n\n  X    = Self\n  OK   = Status Ok\n"
    assert not looks_like_topo_matrix(p2p)
    with pytest.raises(TopoParseError, match="p2p"):
        parse_topo_matrix(p2p)


# --- paste decorations ----------------------------------------------------------------------------------------


def test_crlf_no_trailing_newline_and_ansi() -> None:
    text = read(BASE)
    expected = links_of(text)
    assert links_of(text.replace("\n", "\r\n")) == expected
    assert links_of(text.rstrip("\n")) == expected
    coloured = text.replace("NV2 ", "\x1b[1;32mNV2\x1b[0m ").replace("GPU0    GPU1", "\x1b[1mGPU0\x1b[0m    GPU1")
    parsed = parse_topo_matrix(coloured)
    assert {(lk.a, lk.b): lk.code for lk in parsed.machine.links} == expected and parsed.issues == ()


def test_markdown_prompt_comments_blank_lines_and_notes() -> None:
    body = read("topo-4xa100pcie-nv12-pairs-azure-nc96ads-1.txt").split("\n")
    header, rows = body[0], body[1:5]
    text = "\n".join(
        [
            "<details><summary>topo</summary>",
            "",
            "```console",
            "$ nvidia-smi topo -m" + header,  # prompt glued to the header
            "# " + rows[0],
            "",
            rows[1] + "   <- bridged pair",
            "> " + rows[2],
            rows[3],
            "```",
            "</details>",
        ]
    )
    parsed = parse_topo_matrix(text)
    m = parsed.machine
    assert nvlink_domains(m) == [[0, 1], [2, 3]]
    assert numa_of(m) == (0, 1, 2, 3)
    assert [(i.line, i.action) for i in parsed.issues] == [(7, "ignored")]  # only the note after a row


def test_soc_old_legend_maps_to_sys() -> None:
    text = (
        "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tSOC\t0-7\nGPU1\tSOC\t X \t8-15\n"
        "\nLegend:\n  SOC  = Path traverses a socket-level link\n"
    )
    m = parse_topo_matrix(text).machine
    lk = m.link("GPU0", "GPU1")
    assert lk is not None and lk.code == "SOC" and lk.level == PathLevel.SYS
    assert isinstance(m.gpus[0].numa_nodes, Unsupported)


def test_single_gpu() -> None:
    m = parse_topo_matrix("        GPU0    CPU Affinity    NUMA Affinity\nGPU0     X      0-11            0\n").machine
    assert len(m.gpus) == 1 and m.links == () and m.gpus[0].numa_nodes == (0,)


def test_72_gpu_matrix() -> None:
    """The largest NVLink domain shipped in one rack (GB200 NVL72) reads whole; its speed is measured in
    benchmarks/, not here."""
    n, nics = 72, 18
    labels = [f"GPU{i}" for i in range(n)] + [f"NIC{i}" for i in range(nics)]
    lines = ["\t" + "\t".join(labels) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"]
    for i, a in enumerate(labels):
        cells = [" X " if a == b else ("NV18" if a[0] == b[0] == "G" else "SYS") for b in labels]
        tail = [f"{i * 2}-{i * 2 + 1}", str(i // 36), "N/A"] if a.startswith("GPU") else []
        lines.append("\t".join([a, *cells, *tail]))
    text = "\n".join(lines)
    m = parse_topo_matrix(text).machine
    assert len(m.links) == 90 * 89 // 2 and nvlink_domains(m) == [list(range(72))]
    assert m.gpus[71].cpu_affinity == (142, 143) and m.gpus[71].numa_nodes == (1,)


def test_parse_cpu_list() -> None:
    assert parse_cpu_list("0-3,8") == (0, 1, 2, 3, 8)
    assert parse_cpu_list("0-51,104-155") == (*range(52), *range(104, 156))
    assert parse_cpu_list("65535") == (65535,)
    # a CPU number no Linux has (text damage; expanding it would exhaust memory), digits that are not ASCII
    for bad in ("-31,64-95", "0-", "3-1", "N/A", "", "0-99999999999", "0-65536", "9" * 5000, "\u0660-\u0663"):
        with pytest.raises(ValueError):
            parse_cpu_list(bad)


def test_rows_without_their_header_on_an_nvswitch_board_take_the_columns_after_gpu7_as_nics() -> None:
    """Before: refused ("columns 9-20 ... cannot be told"). Six rows of an 8x B200 board with 12 NICs, pasted without
    the header (vllm-project/vllm#16336): NV18 reaching GPU7 closes the GPU columns of an 8-GPU NVSwitch baseboard."""
    nv = ["NV18"] * 8
    nics = ["PXB", "NODE", "NODE", "NODE", "SYS", "SYS", "SYS", "SYS", "NODE", "NODE", "SYS", "SYS"]
    rows = []
    for g in range(6):
        cells = ["X" if j == g else ("NODE" if 2 in (g, j) else nv[j]) for j in range(8)]
        rows.append(f"GPU{g}\t" + "\t".join(cells + nics) + "\t0-55\t0\t\tN/A")
    parsed = parse_topo_matrix("\n".join(rows) + "\n", partial=True)
    machine = parsed.machine
    assert [g.index for g in machine.gpus] == list(range(8)) and len(machine.nics) == 12
    from topoaudit.model.topology import nvlink_pairs

    on_nvlink = {gpu for a, b, _ in nvlink_pairs(machine) for gpu in (a, b)}
    assert on_nvlink == {0, 1, 3, 4, 5, 6, 7}  # GPU2, NODE to every peer, is off the fabric
    with pytest.raises(TopoParseError, match="cannot be told"):
        parse_topo_matrix("\n".join(r.replace("NV18", "SYS") for r in rows) + "\n", partial=True)


def test_words_typed_after_the_last_column_are_kept_as_text_not_read_as_links() -> None:
    """A forum's 8-GPU PCIe box with "NUMA 0" typed after each row and no header for it: before, refused with "GPU0
    row has more cells than the header"; the words are text after the last column, and the matrix is read."""
    header = "        GPU0  GPU1  GPU2\n"
    rows = [
        "GPU0     X    PIX   SYS     NUMA 0\n",
        "GPU1    PIX    X    SYS     NUMA 0\n",
        "GPU2    SYS   SYS    X      NUMA 1\n",
    ]
    parsed = parse_topo_matrix(header + "".join(rows))
    assert parsed.machine.link("GPU0", "GPU1").code == "PIX"  # type: ignore[union-attr]
    assert [i.message for i in parsed.issues][:1] == ["text after the last column: 'NUMA 0'"]
    extra_link = header + "GPU0     X    PIX   SYS   NV4\n" + "".join(rows[1:])
    with pytest.raises(TopoParseError, match="more cells than the header"):
        parse_topo_matrix(extra_link)  # a link code past the header is a matrix out of step, not a note


def test_two_header_labels_glued_by_a_copy_are_two_columns() -> None:
    """Summit's AC922 (rapidsai/ucx-py#616): 'mlx5_2mlx5_3' in the header, a tab lost between them. Before: the
    first row had more cells than the header's columns, and a window of the header and one row was refused."""
    text = (
        "        GPU0    GPU1    GPU2    mlx5_0  mlx5_1  mlx5_2mlx5_3   CPU Affinity\n"
        "GPU0     X      NV2     NV2     NODE    NODE    SYS   SYS      0-83\n"
        "GPU1    NV2      X      NV2     NODE    NODE    SYS   SYS      0-83\n"
        "GPU2    NV2     NV2      X      NODE    NODE    SYS   SYS      0-83\n"
    )
    parsed = parse_topo_matrix(text)
    assert [n.label for n in parsed.machine.nics] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    assert nvlink_domains(parsed.machine) == [[0, 1, 2]]


def test_glued_affinity_columns_of_both_sockets_are_split_by_what_the_rows_share() -> None:
    """vllm-project/vllm#17516, rows without the header: socket 0's rows end '0-55,112-167 0N/A' (NUMA node and
    GPU NUMA ID glued), socket 1's '56-111,168-2231   N/A' (the CPU list glued to NUMA node 1). Before: both read
    as unreadable and failed."""
    from parse.dev_pastes import dev_paste

    parsed = parse_topo_matrix(dev_paste("vllm-17516-nv18-topo-gpu-rows"))
    assert numa_of(parsed.machine)[:1] == (0,) and numa_of(parsed.machine)[4:7] == (1, 1, 1)
    gpu4 = parsed.machine.gpus[4].cpu_affinity
    assert isinstance(gpu4, tuple) and (min(gpu4), max(gpu4), len(gpu4)) == (56, 223, 112)
