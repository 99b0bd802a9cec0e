"""Damage seen in real pastes, applied to real pastes: what is recovered, what is refused, and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from topoaudit.catalog import all_gpus
from topoaudit.cli import main
from topoaudit.exitcodes import ExitCode
from topoaudit.model.machine import Machine
from topoaudit.model.topology import nvlink_domains
from topoaudit.model.values import Failed, Unsupported
from topoaudit.parse.topo_matrix import (
    MAX_NVLINKS,
    TopoParse,
    TopoParseError,
    looks_like_topo_matrix,
    parse_topo_matrix,
)

TOPO = Path(__file__).parent.parent / "fixtures" / "topo"
A100 = "topo-8xa100sxm4-80g-8nic-roce-deepep-1.txt"  # 8x NV12 over NVSwitch, 8 NICs, no trailing blank issues
H800_4 = "topo-4xh800sxm-nv8-trailingspaces-forum-1.txt"  # 4x NV8, no affinity columns, no legend
L4 = "topo-8xl4-pcie-phb-sys-2socket-1.txt"  # CPU Affinity 0-23,48-71 / 24-47,72-95, NUMA 0 / 1, GPU NUMA ID N/A


def read(name: str) -> str:
    return (TOPO / name).read_text()


def replace_in_line(text: str, line_no: int, old: str, new: str) -> str:
    """``text`` with the first ``old`` on 1-based line ``line_no`` replaced."""
    lines = text.split("\n")
    assert old in lines[line_no - 1], lines[line_no - 1]
    lines[line_no - 1] = lines[line_no - 1].replace(old, new, 1)
    return "\n".join(lines)


def drop_line(text: str, line_no: int, starts: str) -> str:
    lines = text.split("\n")
    assert lines[line_no - 1].startswith(starts), lines[line_no - 1]
    del lines[line_no - 1]
    return "\n".join(lines)


def links(machine: Machine) -> dict[tuple[str, str], str]:
    return {(lk.a, lk.b): lk.code for lk in machine.links}


def domains(machine: Machine) -> list[tuple[tuple[int, ...], int]]:
    return [(d.gpus, d.max_links) for d in nvlink_domains(machine) if d.size > 1]


def issue_lines(parsed: TopoParse) -> list[tuple[int, str]]:
    return [(i.line, i.action) for i in parsed.issues]


# --- impossible link counts ---------------------------------------------------------------------------------


def test_max_nvlinks_is_the_catalog_maximum() -> None:
    assert MAX_NVLINKS == max(max(s.nvlinks_per_gpu, s.nvlinks_total) for s in all_gpus()) == 18


@pytest.mark.parametrize("bad", ["NV99", "NV48", "NV0", "NV19", "NV012"])
def test_impossible_count_in_one_cell_is_read_from_its_mirror(bad: str) -> None:
    text = read(A100)
    damaged = replace_in_line(text, 4, "NV12", bad)  # GPU2 row, its GPU0 cell
    parsed = parse_topo_matrix(damaged)
    assert links(parsed.machine) == links(parse_topo_matrix(text).machine)
    assert domains(parsed.machine) == [((0, 1, 2, 3, 4, 5, 6, 7), 12)]
    assert issue_lines(parsed) == [(4, "recovered")]
    assert bad in parsed.issues[0].message and "not a possible NVLink count" in parsed.issues[0].message


@pytest.mark.parametrize("bad", ["NV99", "NV48", "NV0"])
def test_impossible_count_everywhere_is_refused_with_its_line(bad: str) -> None:
    damaged = read(A100).replace("NV12", bad)
    with pytest.raises(TopoParseError) as err:
        parse_topo_matrix(damaged)
    assert err.value.exit_code == ExitCode.UNUSABLE
    assert "line 2" in str(err.value) and bad in str(err.value) and "not a possible NVLink count" in str(err.value)


def test_impossible_count_in_a_cell_and_its_mirror_is_refused() -> None:
    damaged = replace_in_line(read(A100), 2, "NV12", "NV99")  # GPU0-GPU1
    damaged = replace_in_line(damaged, 3, "NV12", "NV0")  # GPU1-GPU0
    with pytest.raises(TopoParseError, match="GPU0-GPU1"):
        parse_topo_matrix(damaged)


def test_largest_real_count_is_kept() -> None:
    parsed = parse_topo_matrix(read("topo-8xh20-3e-nv18-2nic-gpu0only-sglang-1.txt"))
    assert domains(parsed.machine) == [((0, 1, 2, 3, 4, 5, 6, 7), 18)]


# --- a paste cut inside its last cell ---------------------------------------------------------------------


def test_cut_inside_the_last_cell_is_unknown_and_read_from_the_mirror() -> None:
    text = read(H800_4)
    cut = text[: text.rindex("NV8") + 1]  # "GPU3    NV8     NV8     N"
    assert cut.endswith("NV8     N")
    parsed = parse_topo_matrix(cut)
    assert links(parsed.machine) == links(parse_topo_matrix(text).machine)
    assert domains(parsed.machine) == [((0, 1, 2, 3), 8)]
    (issue,) = parsed.issues
    assert issue.line == 5 and issue.action == "recovered" and "ends inside the cell 'N'" in issue.message


def test_cut_inside_a_nic_cell_is_read_from_the_mirror() -> None:
    text = read(A100)
    nic7 = text.index("NIC7    SYS")
    cut = text[: text.index("PXB", nic7) + 2]  # "... NODE    NODE    PX"
    parsed = parse_topo_matrix(cut)
    assert links(parsed.machine) == links(parse_topo_matrix(text).machine)
    assert issue_lines(parsed) == [(17, "recovered")]
    assert "'PX'" in parsed.issues[0].message


def test_cut_inside_a_cell_then_a_line_break_is_still_a_cut() -> None:
    text = read(A100)
    nic7 = text.index("NIC7    SYS")
    cut = text[: text.index("NODE", nic7) + 3] + "\n"  # "... SYS     NOD" and the editor's line break
    parsed = parse_topo_matrix(cut)
    assert links(parsed.machine) == links(parse_topo_matrix(text).machine)
    assert issue_lines(parsed) == [(17, "recovered")] and "'NOD'" in parsed.issues[0].message


def test_cut_cell_without_a_mirror_is_refused() -> None:
    text = read(H800_4)
    cut = text[: text.index("NV8") + 1]  # only the GPU0 row, cut inside its GPU1 cell
    with pytest.raises(TopoParseError, match="ends inside the cell 'N'"):
        parse_topo_matrix(cut)


def test_complete_last_line_without_line_break_is_not_a_cut() -> None:
    text = read(H800_4).rstrip()
    parsed = parse_topo_matrix(text)
    assert parsed.issues == () and domains(parsed.machine) == [((0, 1, 2, 3), 8)]


# --- missing rows -----------------------------------------------------------------------------------------


def test_missing_gpu0_row_is_recovered_like_any_other() -> None:
    text = read(A100)
    damaged = drop_line(text, 2, "GPU0 ")
    assert looks_like_topo_matrix(damaged)
    parsed = parse_topo_matrix(damaged)
    assert links(parsed.machine) == links(parse_topo_matrix(text).machine)
    assert issue_lines(parsed) == [(2, "recovered")] and "GPU0 row missing" in parsed.issues[0].message


@pytest.mark.parametrize(("line", "label"), [(10, "NIC0"), (17, "NIC7")])
def test_nic_row_recovered_from_the_mirror_is_an_input_issue(line: int, label: str) -> None:
    text = read(A100)
    damaged = drop_line(text, line, label)
    parsed = parse_topo_matrix(damaged)
    assert links(parsed.machine) == links(parse_topo_matrix(text).machine)
    assert issue_lines(parsed) == [(line, "recovered")] and f"{label} row missing" in parsed.issues[0].message


def test_nic_rows_a_paste_stops_before_are_an_excerpt_not_damage() -> None:
    """vllm-project/vllm#45670's collect_env matrix stops after NIC2's row: NIC3's row is not damage but where the
    paste ends, and its links are read from the other rows all the same."""
    text = read(A100)
    matrix = text.split("\n\nLegend")[0].rstrip("\n")
    lines = matrix.split("\n")
    cut = "\n".join(line for line in lines if not line.startswith("NIC7")) + "\n"
    parsed = parse_topo_matrix(cut)
    assert links(parsed.machine) == links(parse_topo_matrix(text).machine)
    assert [(i.action, "NIC7 row not in the paste" in i.message) for i in parsed.issues] == [("excerpt", True)]


# --- re-formatted matrices --------------------------------------------------------------------------------

H100_HT = "topo-h100-8gpu-stas-ht-1.txt"  # 8x NV18, CPU Affinity and NUMA Affinity, legend


def matrix_only(text: str) -> list[str]:
    """The header and rows of a paste, without its legend."""
    return [line for line in text.split("\n\nLegend")[0].split("\n") if line.strip()]


def test_indented_rows_without_legend() -> None:
    text = read(H100_HT)
    retyped = "\n".join("   " + line.strip() for line in matrix_only(text)) + "\n"
    parsed = parse_topo_matrix(retyped)
    assert parsed.issues == ()
    assert links(parsed.machine) == links(parse_topo_matrix(text).machine)
    assert parsed.machine.gpus[7].cpu_affinity == (*range(52, 104), *range(156, 208))


def test_custom_trailing_column_instead_of_the_affinity_columns_is_kept_as_text() -> None:
    text = read(H100_HT)
    lines = matrix_only(text)
    lines[0] = lines[0].replace("CPU Affinity    NUMA Affinity", "NUMA")
    lines[1:] = ["    ".join([*line.split()[:9], line.split()[-1]]) for line in lines[1:]]  # drop the CPU lists
    retyped = "\n".join(lines) + "\n"
    assert looks_like_topo_matrix(retyped)
    parsed = parse_topo_matrix(retyped)
    assert links(parsed.machine) == links(parse_topo_matrix(text).machine)
    assert domains(parsed.machine) == [((0, 1, 2, 3, 4, 5, 6, 7), 18)]
    (column,) = parsed.text_columns
    assert column.title == "NUMA" and column.values[0] == ("GPU0", "0") and column.values[7] == ("GPU7", "1")
    (issue,) = parsed.issues
    assert issue.line == 1 and issue.action == "ignored" and "'NUMA'" in issue.message and "GPU7 '1'" in issue.message
    g = parsed.machine.gpus[0]  # not guessed from a column topo -m does not print
    assert "no CPU Affinity column" in str(g.cpu_affinity) and "no NUMA Affinity column" in str(g.numa_nodes)


def test_custom_column_is_kept_as_text_in_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = matrix_only(read(H100_HT))
    lines[0] = lines[0].replace("CPU Affinity    NUMA Affinity", "NUMA")
    lines[1:] = ["    ".join([*line.split()[:9], line.split()[-1]]) for line in lines[1:]]
    (tmp_path / "retyped.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(SystemExit) as stop:
        main(["analyze", str(tmp_path / "retyped.txt"), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert stop.value.code in (0, 1)
    assert report["extras"]["text_columns"]["NUMA"]["GPU7"] == "1"
    assert [d["gpus"] for d in report["domains"]] == [[0, 1, 2, 3, 4, 5, 6, 7]]


def test_custom_column_after_the_known_ones_keeps_them() -> None:
    lines = matrix_only(read("topo-8xl4-pcie-phb-sys-2socket-1.txt"))
    lines[0] += "    Rack slot"
    lines[1:] = [line + f"     U{i}" for i, line in enumerate(lines[1:])]
    parsed = parse_topo_matrix("\n".join(lines) + "\n")
    assert parsed.machine.gpus[4].cpu_affinity == (*range(24, 48), *range(72, 96))
    assert parsed.machine.gpus[4].numa_nodes == (1,)
    assert [c.title for c in parsed.text_columns] == ["Rack slot"]
    assert parsed.text_columns[0].values[4] == ("GPU4", "U4")


def test_note_after_the_known_columns_does_not_reject_the_header() -> None:
    lines = matrix_only(read(L4))
    lines[0] += "    (captured on node-17)"
    parsed = parse_topo_matrix("\n".join(lines) + "\n")
    assert parsed.machine.gpus[4].numa_nodes == (1,) and len(parsed.machine.gpus) == 8
    assert [(i.line, i.action) for i in parsed.issues] == [(1, "ignored")]
    assert "(captured on node-17)" in parsed.issues[0].message


def test_sentence_mentioning_gpu0_is_not_a_header() -> None:
    text = "GPU0 is the one that fails\n" + read(H800_4)
    parsed = parse_topo_matrix(text)
    assert domains(parsed.machine) == [((0, 1, 2, 3), 8)] and parsed.issues == ()


# --- a CPU list glued to the NUMA value after it ---------------------------------------------------------


def test_glued_cpu_list_and_numa_are_split() -> None:
    damaged = replace_in_line(read(L4), 2, "0-23,48-71      0", "0-23,48-710")
    parsed = parse_topo_matrix(damaged)
    g0 = parsed.machine.gpus[0]
    assert g0.cpu_affinity == (*range(0, 24), *range(48, 72)) and g0.numa_nodes == (0,)
    assert isinstance(g0.gpu_numa_id, Unsupported) and "N/A" in g0.gpu_numa_id.reason
    assert parsed.machine.gpus[1].cpu_affinity == g0.cpu_affinity  # the whole rows are not voided
    (issue,) = parsed.issues
    assert issue.line == 2 and issue.action == "affinity" and "'0-23,48-710'" in issue.message


def test_glued_rows_of_one_socket_are_split_against_the_other_socket() -> None:
    damaged = read(L4).replace("0-23,48-71      0", "0-23,48-710")  # every socket-0 row lost the separator
    parsed = parse_topo_matrix(damaged)
    assert [g.numa_nodes for g in parsed.machine.gpus] == [(0,)] * 4 + [(1,)] * 4
    assert parsed.machine.gpus[3].cpu_affinity == (*range(0, 24), *range(48, 72))
    assert [(i.line, i.action) for i in parsed.issues] == [(n, "affinity") for n in (2, 3, 4, 5)]


def test_glue_that_cannot_be_split_fails_the_row_affinity_with_the_reason() -> None:
    damaged = replace_in_line(read(L4), 2, "0-23,48-71      0", "0-23,48-7100")
    parsed = parse_topo_matrix(damaged)
    g0 = parsed.machine.gpus[0]
    assert isinstance(g0.cpu_affinity, Failed) and "glued" in g0.cpu_affinity.reason
    assert "7100" in g0.cpu_affinity.reason and "stop at 95" in g0.cpu_affinity.reason
    assert isinstance(g0.numa_nodes, Failed) and isinstance(g0.gpu_numa_id, Failed)
    assert parsed.machine.gpus[1].cpu_affinity == (*range(0, 24), *range(48, 72))
    assert [(i.line, i.action) for i in parsed.issues] == [(2, "affinity")]


def test_row_cut_at_its_end_is_not_taken_for_glue() -> None:
    damaged = replace_in_line(read(L4), 9, "1               N/A", "1")  # GPU7 lost its GPU NUMA ID
    parsed = parse_topo_matrix(damaged)
    g7 = parsed.machine.gpus[7]
    assert g7.cpu_affinity == (*range(24, 48), *range(72, 96))
    assert isinstance(g7.numa_nodes, Failed) and isinstance(g7.gpu_numa_id, Failed)  # the last value may be cut
    assert [(i.line, i.action) for i in parsed.issues] == [(9, "ignored")] and "cut short" in parsed.issues[0].message
    assert parsed.issues[0].message.endswith("its links are read whole")  # the affinity is lost, not a link
