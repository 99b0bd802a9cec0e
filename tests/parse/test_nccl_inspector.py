"""NCCL Inspector's per-collective JSON: NVIDIA's README samples read, a slow host named, damage skipped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli_runner import Run
from topoaudit.parse.nccl_inspector import LARGE_MESSAGE_BYTES, looks_like_inspector, parse_inspector, summarize

FIXTURES = Path(__file__).parents[1] / "fixtures" / "inspector"
README = FIXTURES / "readme-sample.json"
VERBOSE = FIXTURES / "readme-sample-verbose.json"
TWO_HOSTS = FIXTURES / "constructed-two-hosts-one-slow.jsonl"
CODE = "nccl-inspector-busbw-low"


def _report(run: Run, *args: str) -> dict:
    code, out, err = run("analyze", *args, "--format", "json")
    assert code == 0, err
    assert "Traceback" not in err
    return json.loads(out)


def _low(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["code"] == CODE]


def test_readme_sample_parses_to_its_communicator_and_busbw() -> None:
    text = README.read_text()
    assert looks_like_inspector(text)
    log = parse_inspector(text)
    assert log.notes == ()
    assert log.format_versions == ("v4.0",)
    (r,) = log.records
    assert (r.host, r.comm_id, r.rank, r.n_ranks, r.nnodes) == ("example-hostname", "0x7f8c496ae9f661", 2, 8, 1)
    assert (r.coll, r.coll_sn, r.msg_size_bytes, r.exec_time_us) == ("AllReduce", 1407, 17179869184, 61974)
    assert (r.algobw_gbps, r.busbw_gbps) == (277.210914, 485.119099)
    assert r.comm_name == "unknown"  # the README's sample predates the comm_name key


def test_verbose_readme_sample_and_json_lines_read_together() -> None:
    compact = json.dumps(json.loads(README.read_text()))  # one object a line, as the plugin writes it
    log = parse_inspector(VERBOSE.read_text() + "\n" + compact + "\n")
    assert log.notes == ()
    assert [(r.comm_id, r.coll, r.busbw_gbps) for r in log.records] == [
        ("0xe62dedaa97644a", "ReduceScatter", 366.134533),
        ("0x7f8c496ae9f661", "AllReduce", 485.119099),
    ]
    rows = {row["comm_id"]: row for row in summarize(log)["communicators"]}
    assert rows["0x7f8c496ae9f661"]["large_median_busbw_gbps"] == 485.119
    assert rows["0xe62dedaa97644a"]["largest_msg_size_bytes"] == 2147483648


def test_readme_sample_through_the_cli_is_summarized_and_not_flagged(run: Run) -> None:
    report = _report(run, str(README))
    assert report["source"]["kind"] == "nccl-inspector"
    (row,) = report["extras"]["nccl_inspector"]["communicators"]
    assert (row["host"], row["comm_id"], row["large_median_busbw_gbps"]) == (
        "example-hostname",
        "0x7f8c496ae9f661",
        485.119,
    )
    assert _low(report) == []  # one host, no model: nothing to compare it with


def test_slow_host_is_named_when_hosts_are_compared(run: Run) -> None:
    code, out, err = run("analyze", str(TWO_HOSTS))
    assert code == 0, err
    assert CODE in out and "gpu-node-b" in out
    (low,) = _low(_report(run, str(TWO_HOSTS)))
    assert low["severity"] == "warn"
    assert low["evidence"]["host"] == "gpu-node-b"
    assert low["evidence"]["comm_ids"] == ["0x9e7d00d1e5c3f4"]
    assert low["evidence"]["busbw_gbps"] < 0.7 * low["evidence"]["others_median_busbw_gbps"]
    rows = {r["host"]: r for r in _report(run, str(TWO_HOSTS))["extras"]["nccl_inspector"]["communicators"]}
    sweep = rows["gpu-node-b"]["by_size"]
    assert [s["msg_size_bytes"] for s in sweep] == [8192, 1 << 20, 64 << 20, 256 << 20, 1 << 30, 4 << 30]
    assert all(s["collectives"] == 16 for s in sweep)  # 8 ranks, two passes
    assert rows["gpu-node-a"]["by_size"][-1]["median_busbw_gbps"] > 2 * sweep[-1]["median_busbw_gbps"]
    assert "gpu-node-a" not in low["message"]


def test_a_host_at_0_6x_of_the_only_other_host_is_named(run: Run, tmp_path: Path) -> None:
    """Compared with the other hosts only: counting itself, a slow host pulls the median down to hide under it."""
    records = []
    for line in TWO_HOSTS.read_text().splitlines():
        record = json.loads(line)
        if record["metadata"]["hostname"] != "gpu-node-a":
            continue
        records.append(line)
        record["metadata"]["hostname"], record["header"]["id"] = "gpu-node-b", "0x9e7d00d1e5c3f4"
        record["coll_perf"]["coll_busbw_gbs"] = round(record["coll_perf"]["coll_busbw_gbs"] * 0.6, 6)
        records.append(json.dumps(record, separators=(",", ":")))
    path = tmp_path / "inspector.log"
    path.write_text("\n".join(records) + "\n")
    (low,) = _low(_report(run, str(path)))
    assert low["evidence"]["host"] == "gpu-node-b"
    rows = {r["host"]: r for r in _report(run, str(path))["extras"]["nccl_inspector"]["communicators"]}
    assert low["evidence"]["others_median_busbw_gbps"] == rows["gpu-node-a"]["large_median_busbw_gbps"]
    assert low["evidence"]["busbw_gbps"] / low["evidence"]["others_median_busbw_gbps"] == pytest.approx(0.6, abs=1e-3)
    assert "under 0.7x the other hosts' median" in low["message"] and "(1 other host(s))" in low["message"]


def test_slow_host_is_held_to_the_oracle_when_the_model_is_named(run: Run) -> None:
    (low,) = _low(_report(run, str(TWO_HOSTS), "--gpu-model", "H100 80GB HBM3"))
    assert low["evidence"]["host"] == "gpu-node-b"
    assert low["evidence"]["comm_id"] == "0x9e7d00d1e5c3f4"
    assert low["evidence"]["busbw_gbps"] < 0.7 * low["evidence"]["expected_busbw_gbps"]
    assert low["evidence"]["oracle_kind"] in ("measured", "gate", "derived")


def test_healthy_host_alone_is_not_flagged(run: Run, tmp_path: Path) -> None:
    healthy = [line for line in TWO_HOSTS.read_text().splitlines() if '"gpu-node-a"' in line]
    path = tmp_path / "inspector.log"
    path.write_text("\n".join(healthy) + "\n")
    assert _low(_report(run, str(path), "--gpu-model", "H100 80GB HBM3")) == []
    assert _low(_report(run, str(path))) == []


def test_garbled_lines_are_reported_and_skipped(run: Run, tmp_path: Path) -> None:
    lines = TWO_HOSTS.read_text().splitlines()
    cut = lines[5][: len(lines[5]) // 2]  # a line cut short (a job killed mid-write)
    no_perf = json.dumps({"header": {"id": "0x1", "rank": 0, "n_ranks": 8, "nnodes": 1}, "metadata": {}})
    bad_bw = lines[7].replace('"coll_busbw_gbs":', '"coll_busbw_gbs":"fast","x":')
    garbled = [*lines[:5], cut, "not json at all", no_perf, bad_bw, *lines[8:]]
    path = tmp_path / "inspector.log"
    path.write_text("\n".join(garbled) + "\n")

    log = parse_inspector(path.read_text())
    assert [line for line, _ in log.notes] == [6, 8, 9]
    assert log.notes[0][1].startswith("lines 6 to 7: not a JSON object")  # the cut line and the stray text
    assert "coll_perf" in log.notes[1][1] and "coll_busbw_gbs" in log.notes[2][1]
    assert len(log.records) == len(lines) - 3  # lines 6 and 8 of the original lost, the rest read

    report = _report(run, str(path))
    assert [i["line"] for i in report["input_issues"]] == [6, 8, 9]
    assert [f["evidence"]["host"] for f in _low(report)] == ["gpu-node-b"]


def test_small_messages_alone_are_not_judged() -> None:
    lines = [line for line in TWO_HOSTS.read_text().splitlines() if '"coll_msg_size_bytes":8192,' in line]
    rows = summarize(parse_inspector("\n".join(lines)))["communicators"]
    assert rows and all("large_median_busbw_gbps" not in r for r in rows)
    assert all(str(LARGE_MESSAGE_BYTES // (1024 * 1024)) in r["large_median_busbw_reason"] for r in rows)


def test_messages_of_exactly_256_mib_are_large(run: Run, tmp_path: Path) -> None:
    """A job whose largest all-reduce is 256 MiB is judged on it: the slow host is still named."""
    assert LARGE_MESSAGE_BYTES == 256 << 20
    kept = [
        line
        for line in TWO_HOSTS.read_text().splitlines()
        if json.loads(line)["coll_perf"]["coll_msg_size_bytes"] <= 256 << 20
    ]
    path = tmp_path / "inspector.log"
    path.write_text("\n".join(kept) + "\n")
    report = _report(run, str(path))
    rows = {r["host"]: r for r in report["extras"]["nccl_inspector"]["communicators"]}
    assert rows["gpu-node-a"]["largest_msg_size_bytes"] == 256 << 20
    assert rows["gpu-node-a"]["large_collectives"] == 16
    assert rows["gpu-node-a"]["large_median_busbw_gbps"] == rows["gpu-node-a"]["by_size"][-1]["median_busbw_gbps"]
    (low,) = _low(report)
    assert low["evidence"]["host"] == "gpu-node-b" and low["evidence"]["busbw_gbps"] == 181.002


def test_a_file_cut_before_its_first_record_ends_is_one_sentence(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "inspector.log"
    path.write_text(README.read_text()[:300])
    code, _out, err = run("analyze", str(path))
    assert code == 4
    assert "no complete collective record" in err and "line 1" in err
    assert "Traceback" not in err


def test_junit_counts_the_code_judged_only_where_an_all_reduce_was_large_enough(run: Run, tmp_path: Path) -> None:
    def case(*args: str) -> str:
        code, out, err = run("analyze", *args, "--format", "junit")
        assert code == 0, err
        start = out.index(f'name="{CODE}"')
        tag_end = out.index(">", start)
        return "" if out[tag_end - 1] == "/" else out[tag_end : out.index("</testcase>", start)]

    assert "<system-out>[warn] Host gpu-node-b" in case(str(TWO_HOSTS))
    assert "judged from NCCL Inspector output; this report has none" in case("--example", "hgx-h100")
    assert "no all-reduce of 256 MiB or more" in case(str(VERBOSE))  # one ReduceScatter only


def test_a_saved_report_is_judged_again_with_the_model_named_later(run: Run, tmp_path: Path) -> None:
    code, out, err = run("analyze", str(TWO_HOSTS), "--format", "json")
    assert code == 0, err
    saved = tmp_path / "report.json"
    saved.write_text(out)
    (low,) = _low(_report(run, str(saved), "--gpu-model", "H100 80GB HBM3"))
    assert low["evidence"]["host"] == "gpu-node-b"
    assert "expected_busbw_gbps" in low["evidence"]  # held to the oracle now, not to the other host


# --- NCCL 2.29-2.30: the Prometheus textfile, coll_timing_source --------------------------------------------
PROM_README = FIXTURES / "readme-prom-v2.30.prom"
PROM_229 = FIXTURES / "constructed-prom-v2.29-per-collective.prom"
PROM_230 = FIXTURES / "constructed-prom-v2.30-buckets.prom"
CPU_MIXED = FIXTURES / "constructed-cpu-timed-mixed.jsonl"


def test_every_fixture_has_provenance() -> None:
    rows = {line.split("\t")[0] for line in (FIXTURES / "PROVENANCE.tsv").read_text().splitlines()[1:]}
    assert rows == {p.name for p in FIXTURES.iterdir() if p.name != "PROVENANCE.tsv"}


def test_the_readme_prometheus_sample_of_2_30_reads_its_bucket_and_algorithm() -> None:
    text = PROM_README.read_text()
    assert looks_like_inspector(text)
    log = parse_inspector(text)
    assert log.notes == () and log.p2p_count == 1 and log.format_versions == ("prometheus v5.1",)
    (r,) = log.records
    assert (r.host, r.comm_name, r.n_ranks, r.nnodes, r.coll) == ("nvl72004-T01", "DP Group 0", 4, 1, "AllReduce")
    assert (r.msg_size_bytes, r.busbw_gbps, r.exec_time_us, r.algorithm) == (4 << 30, 678.263, 9498, "ring")


def test_a_message_size_label_too_large_for_a_number_is_no_size_not_a_crash() -> None:
    """Random damage found it: 400 nines before "GB" is infinity as a float; the sample is set aside as unreadable."""
    text = re.sub(r'message_size="[^"]*"', 'message_size="' + "9" * 400 + 'GB"', PROM_README.read_text())
    log = parse_inspector(text)
    assert log.records == () and "message_size" in str(log.notes)


def test_the_per_collective_prometheus_lines_of_2_29_read_host_rank_and_size() -> None:
    log = parse_inspector(PROM_229.read_text())
    assert len(log.records) == 16 and log.notes == ()
    first = log.records[0]
    assert (first.host, first.comm_id, first.rank, first.coll_sn, first.msg_size_bytes) == (
        "h100-node-07",
        "0x7e5a11c0de2b3f",
        0,
        101,
        4 << 30,
    )
    assert first.busbw_gbps == 300.0 and first.algobw_gbps == 171.429  # the file's own %.6g figure
    (row,) = summarize(log)["communicators"]
    assert row["ranks"] == list(range(8)) and "algorithm" not in row


def test_gpu_and_cpu_timed_collectives_are_never_summarized_together() -> None:
    rows = summarize(parse_inspector(CPU_MIXED.read_text()))["communicators"]
    by_timing = {r["timing_source"]: r for r in rows}
    assert set(by_timing) == {"kernel_gpu", "collective_cpu"}
    assert (
        by_timing["kernel_gpu"]["large_median_busbw_gbps"]
        > 470
        > 160
        > by_timing["collective_cpu"]["large_median_busbw_gbps"]
    )
    assert summarize(parse_inspector(CPU_MIXED.read_text()))["cpu_timed_records"] == 16


@pytest.mark.parametrize("path", [PROM_README, PROM_229, PROM_230], ids=lambda p: p.name)
def test_the_prometheus_textfile_loads_as_inspector_output(path: Path) -> None:
    from topoaudit.readers import load_path

    assert load_path(str(path)).source.kind == "nccl-inspector"


@pytest.mark.parametrize("figure", ["1e308", "9" * 400, "1e999"])
def test_a_bandwidth_no_link_carries_is_skipped_and_said(run: Run, tmp_path: Path, figure: str) -> None:
    """A 400-digit busbw used to crash the reader (exit 5); 1e308 was read as a measurement and could not be slow."""
    lines = TWO_HOSTS.read_text().splitlines()
    line = lines[7]
    start = line.index('"coll_busbw_gbs":') + len('"coll_busbw_gbs":')
    end = min(k for k in (line.find(",", start), line.find("}", start)) if k >= 0)
    lines[7] = line[:start] + figure + line[end:]
    path = tmp_path / "inspector.log"
    path.write_text("\n".join(lines) + "\n")
    assert parse_inspector(path.read_text()).notes == ((8, "coll_perf.coll_busbw_gbs is not a bandwidth; skipped"),)
    report = _report(run, str(path))
    assert [(i["line"], i["action"], i["message"]) for i in report["input_issues"]] == [
        (8, "recovered", "coll_perf.coll_busbw_gbs is not a bandwidth; skipped")
    ]
    assert "input-recovered" in {f["code"] for f in report["findings"]}  # a collective not judged: incomplete
