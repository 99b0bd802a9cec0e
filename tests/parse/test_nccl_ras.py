"""NCCL RAS output (`ncclras`, text and `-f json`, and monitor mode `-m`): read like any capture, missing ranks,
rank errors and dead peers fail. The samples are NCCL's own (docs) or built from the format strings of
src/ras/client_support.cc at v2.29.2-1 to v2.30.7-1 (PROVENANCE.tsv)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import Run
from topoaudit.errors import InputError
from topoaudit.parse.nccl_ras import looks_like_nccl_ras, parse_nccl_ras, ras_from_dict, ras_to_dict
from topoaudit.readers import load_path, load_text
from topoaudit.rules.ras_rules import judge_ras

RAS = Path(__file__).parents[1] / "fixtures" / "ras"
ALL = sorted(p for p in RAS.iterdir() if p.suffix in (".txt", ".json"))


def _codes(out: str) -> list[str]:
    return [f["code"] for f in json.loads(out)["findings"]]


MONITOR = sorted(p for p in ALL if "monitor" in p.name)


def test_every_fixture_has_provenance_and_is_recognised() -> None:
    rows = {line.split("\t")[0] for line in (RAS / "PROVENANCE.tsv").read_text().splitlines()[1:]}
    assert rows == {p.name for p in ALL}
    for p in ALL:
        assert looks_like_nccl_ras(p.read_text()), p.name
        if p not in MONITOR:
            assert load_path(str(p)).source.kind == "nccl-ras", p.name


@pytest.mark.parametrize("path", MONITOR, ids=lambda p: p.name)
def test_monitor_output_loads_as_ras(path: Path) -> None:
    assert load_path(str(path)).source.kind == "nccl-ras"


# --- NCCL 2.29-2.30 text: combined Errors, ranks reporting errors alone, GPU lists, the version line ----------
def test_a_rank_in_system_error_fails_and_names_its_host() -> None:
    dump = parse_nccl_ras((RAS / "constructed-system-error-incomplete.txt").read_text())
    assert dump.nccl_version == "2.30.7+cuda13.0"
    big, *pair = dump.communicators
    assert (big.ident, big.status, big.flags) == ("#0-0 (3f1c9a0d5e7b2468)", "RUNNING", ("INCOMPLETE", "ERROR"))
    assert [c.flags for c in pair] == [(), ()] and len(pair) == 2
    assert [(r.rank, r.host, r.pid, r.gpu, r.problem) for r in big.ranks] == [
        (5, "10.1.0.11", 77015, 5, "asynchronous: System error")  # GPU 0 (NVML 5): the NVML index
    ]
    assert [(r.rank, r.host, r.gpu) for r in big.missing] == [(11, "10.1.0.12", 3)]
    assert [(p.host, p.gpus, p.nvml_gpus) for p in dump.processes] == [("10.1.0.12", "0 (NVML 3)", (3,))]
    codes = {f.code: f for f in judge_ras(dump)}
    error = codes["nccl-ras-rank-error"]
    assert error.severity.value == "fail" and error.evidence["hosts"] == ["10.1.0.11"]
    assert "rank 5 (GPU 5, process 77015 on 10.1.0.11): asynchronous: System error" in error.message
    assert codes["nccl-ras-ranks-missing"].evidence["hosts"] == ["10.1.0.12"]
    assert ras_from_dict(ras_to_dict(dump)) == dump


def test_a_rank_reporting_an_error_alone_names_its_host_for_fleet(run: Run, tmp_path: Path) -> None:
    """'Rank 5 reported System error -- GPU ... on node H': the finding names H (and so fleet's drain list)."""
    text = (RAS / "constructed-system-error-incomplete.txt").read_text()
    error_only = text.split("INCOMPLETE\n  Missing communicator data from 1 job process")[0] + (
        "#0-0 (3f1c9a0d5e7b2468) ERROR\n  Asynchronous error on 1 rank\n"
        "  Rank 5 reported System error -- GPU 0 (NVML 5) managed by process 77015 on node 10.1.0.11\n"
    )
    error_only = error_only.replace("INCOMPLETE,ERROR", "           ERROR")
    (tmp_path / "ras.txt").write_text(error_only)
    code, out, err = run("analyze", str(tmp_path / "ras.txt"), "--format", "json")
    assert code == 1, err
    (f,) = [f for f in json.loads(out)["findings"] if f["code"].startswith("nccl-ras-")]
    assert f["code"] == "nccl-ras-rank-error" and "10.1.0.11" in f["message"] and "System error" in f["message"]


def test_two_ranks_reporting_one_error_are_each_named_and_a_mismatch_alone_is_not_a_fault() -> None:
    dump = parse_nccl_ras((RAS / "constructed-error-mismatch.txt").read_text())
    (comm,) = dump.communicators
    assert comm.flags == ("ERROR", "MISMATCH")
    assert [(r.rank, r.host, r.problem) for r in comm.ranks] == [
        (4, "gpu-a07", "asynchronous: Remote process error"),
        (12, "gpu-a08", "asynchronous: Remote process error"),
    ]  # listed again under the MISMATCH warning: one entry each, with the error
    (f,) = judge_ras(dump)
    assert f.code == "nccl-ras-rank-error" and f.evidence["hosts"] == ["gpu-a07", "gpu-a08"]


def test_a_dead_process_driving_eight_gpus_names_every_gpu(run: Run) -> None:
    dump = parse_nccl_ras((RAS / "constructed-dead-eight-gpu-process.txt").read_text())
    (dead,) = dump.processes
    assert (dead.state, dead.host, dead.gpus, dead.nvml_gpus) == (
        "dead",
        "10.1.0.12",
        "0,1,2,3,4,5,6,7",
        tuple(range(8)),
    )
    code, out, _ = run("analyze", str(RAS / "constructed-dead-eight-gpu-process.txt"), "--format", "json")
    assert code == 1
    report = json.loads(out)
    (f,) = [f for f in report["findings"] if f["code"] == "nccl-ras-ranks-missing"]
    assert "8 of 16 rank(s) missing on 10.1.0.12" in f["message"] and "1 process(es) RAS considers dead" in f["message"]


def test_a_table_marking_error_with_no_rank_listed_still_fails() -> None:
    text = (RAS / "constructed-error-mismatch.txt").read_text().split("Errors\n======")[0]
    (f,) = judge_ras(parse_nccl_ras(text))
    assert f.code == "nccl-ras-rank-error" and "the communicator table marks it ERROR" in f.message


# --- monitor mode (ncclras -m), NCCL 2.29+ -----------------------------------------------------------------
@pytest.mark.parametrize("name", ["doc-monitor.txt", "doc-monitor.json"])
def test_the_docs_monitor_samples_name_the_dead_peer(name: str) -> None:
    dump = parse_nccl_ras((RAS / name).read_text())
    assert dump.format == ("monitor-json" if name.endswith("json") else "monitor-text")
    (event,) = dump.events
    assert (event.event, event.host, event.pid, event.gpus) == ("PEER_DEAD", "172.16.64.245", 1524345, "1")
    (f,) = judge_ras(dump)
    assert f.code == "nccl-ras-ranks-missing" and f.severity.value == "fail"
    assert f.evidence["hosts"] == ["172.16.64.245"]
    assert "process 1524345 on 172.16.64.245 managing GPU 1 (PEER_DEAD at 2025-12-19 13:07:07)" in f.message
    assert ras_from_dict(ras_to_dict(dump)).events == dump.events


def test_monitor_events_a_recovered_peer_passes_a_dead_one_fails_a_silent_one_warns() -> None:
    from topoaudit.parse.nccl_ras import machine_from_ras

    dump = parse_nccl_ras((RAS / "constructed-monitor-events.txt").read_text())
    assert len(dump.events) == 7
    found = judge_ras(dump)
    assert [(f.severity.value, f.evidence["hosts"]) for f in found] == [
        ("fail", ["10.2.0.23"]),
        ("warn", ["10.2.0.24"]),
    ]
    assert "GPU 5 (NVML 7)" in found[0].message and "10.2.0.22" not in " ".join(f.message for f in found)
    machine = machine_from_ras(dump)
    assert machine.host.hostname == "10.2.0.23" and [g.index for g in machine.gpus] == [7]


def test_nccl_docs_json_sample_reads_its_communicator_and_missing_rank() -> None:
    dump = parse_nccl_ras((RAS / "doc-missing-rank.json").read_text())
    assert dump.nccl_version == "2.29.1"
    (comm,) = dump.communicators
    assert comm.ident == "0xae94423cfbb2ef4a" and comm.size == 2
    assert [(r.rank, r.host, r.pid, r.gpu) for r in comm.ranks] == [(0, "172.16.64.245", 1524344, 0)]
    assert [(r.rank, r.host, r.pid, r.gpu, r.problem) for r in comm.missing] == [
        (1, "172.16.64.245", 1524345, 1, "unresponsive")
    ]
    assert ras_from_dict(ras_to_dict(dump)).communicators == dump.communicators


def test_nccl_docs_healthy_text_sample_reads_eight_communicators_and_no_finding() -> None:
    dump = parse_nccl_ras((RAS / "doc-healthy.txt").read_text())
    assert [c.ident for c in dump.communicators] == [f"#0-{k}" for k in range(8)]
    assert {c.size for c in dump.communicators} == {4}
    assert dump.nodes == 4 and dump.gpus_per_node == 8
    assert judge_ras(dump) == []


def test_nccl_docs_incomplete_text_sample_names_rank_host_and_timeouts() -> None:
    dump = parse_nccl_ras((RAS / "doc-incomplete.txt").read_text())
    (comm,) = dump.communicators
    assert comm.ident == "#0-0 (cf264af53edbe986)" and comm.size == 32 and comm.missing_count == 1
    assert [r.rank for r in comm.missing] == [21]
    assert [(p.state, p.host, p.pid, p.gpus) for p in dump.processes] == [("missing", "172.16.64.213", 3487984, "5")]
    assert dump.timeouts == 2
    (f,) = judge_ras(dump)
    assert f.code == "nccl-ras-ranks-missing" and "rank 21" in f.message and "172.16.64.213" in f.message


def test_missing_rank_text_dump_fails_naming_host_rank_and_communicator(run: Run) -> None:
    code, out, err = run("analyze", str(RAS / "constructed-missing-rank.txt"), "--format", "json")
    assert code == 1, err
    report = json.loads(out)
    (f,) = [f for f in report["findings"] if f["code"] == "nccl-ras-ranks-missing"]
    assert f["severity"] == "fail"
    assert "172.16.64.222" in f["message"] and "rank 12" in f["message"] and "#0-0 (cf264af53edbe986)" in f["message"]
    assert f["evidence"]["missing_ranks"] == [{"rank": 12, "host": "172.16.64.222", "pid": 2405071, "gpu": 4,
                                               "problem": "missing"}]  # fmt: skip
    assert report["source"]["kind"] == "nccl-ras"


def test_missing_rank_json_dump_fails_through_the_cli_markdown(run: Run) -> None:
    code, out, _ = run("analyze", str(RAS / "doc-missing-rank.json"), "--format", "markdown")
    assert code == 1
    assert "nccl-ras-ranks-missing" in out and "rank 1" in out and "172.16.64.245" in out


@pytest.mark.parametrize("name", ["constructed-healthy.json", "doc-healthy.txt"])
def test_all_healthy_dump_passes_with_no_ras_finding(run: Run, name: str) -> None:
    code, out, err = run("analyze", str(RAS / name), "--format", "json")
    assert code == 0, err
    assert not [c for c in _codes(out) if c.startswith("nccl-ras-")]


def test_rank_with_async_error_fails_with_rank_error() -> None:
    doc = json.loads((RAS / "constructed-healthy.json").read_text())
    doc["communicators"][0]["ranks"][1]["status"]["async_error"] = 6  # ncclRemoteError
    (f,) = judge_ras(parse_nccl_ras(json.dumps(doc)))
    assert f.code == "nccl-ras-rank-error" and f.severity.value == "fail"
    assert "rank 1" in f.message and "async error 6" in f.message and "172.16.64.245" in f.message


@pytest.mark.parametrize("field", ["init_state", "async_error"])
def test_a_rank_still_in_progress_is_no_error_but_other_codes_are(run: Run, tmp_path: Path, field: str) -> None:
    """ncclInProgress (7): a communicator still initialising (non-blocking) is healthy; ncclSystemError (2) is not."""
    doc = json.loads((RAS / "constructed-healthy.json").read_text())
    doc["communicators"][0]["ranks"][1]["status"][field] = 7
    (tmp_path / "in-progress.json").write_text(json.dumps(doc))
    code, out, err = run("analyze", str(tmp_path / "in-progress.json"), "--format", "json")
    assert code == 0, err
    assert not [c for c in _codes(out) if c.startswith("nccl-ras-")]
    doc["communicators"][0]["ranks"][1]["status"][field] = 2
    (f,) = judge_ras(parse_nccl_ras(json.dumps(doc)))
    assert f.code == "nccl-ras-rank-error" and f"{field.split('_')[0]} error 2" in f.message


def test_ranks_counted_missing_but_not_listed_fail(run: Run, tmp_path: Path) -> None:
    """RAS may count a missing rank it cannot describe: the count alone fails the communicator."""
    doc = json.loads((RAS / "doc-missing-rank.json").read_text())
    doc["communicators"][0]["missing_ranks"] = []
    (tmp_path / "unlisted.json").write_text(json.dumps(doc))
    code, out, _ = run("analyze", str(tmp_path / "unlisted.json"), "--format", "json")
    assert code == 1
    (f,) = [f for f in json.loads(out)["findings"] if f["code"] == "nccl-ras-ranks-missing"]
    assert f["severity"] == "fail"
    assert f["message"].startswith(
        "NCCL communicator 0xae94423cfbb2ef4a: 1 of 2 rank(s) missing: ranks not listed by RAS"
    )
    assert f["evidence"]["missing_ranks_count"] == 1 and f["evidence"]["missing_ranks"] == []


def test_text_rank_error_block_is_a_rank_error() -> None:
    text = (RAS / "constructed-missing-rank.txt").read_text()
    text = text.split("Errors\n======")[0].replace("INCOMPLETE", "ERROR") + (
        "Errors\n======\n\n#0-0 (cf264af53edbe986) ERROR\n  Asynchronous error on 1 rank\n"
    )
    codes = [f.code for f in judge_ras(parse_nccl_ras(text))]
    assert codes == ["nccl-ras-rank-error"]


@pytest.mark.parametrize(
    "text",
    [
        (RAS / "doc-missing-rank.json").read_text()[:400],  # cut short
        '{"nccl_version": "2.29.1", "communicators": [{"ranks_count": 1, "missing_ranks": [{"host": "h"}]}]}',
        '{"nccl_version": "2.29.1", "communicators": [{"ranks_count": 1, "ranks": 5}], "ras": {}}',
        "Job summary\n===========\n\n  Nodes  Processes\n garbled\n",  # no communicator table
    ],
)
def test_garbled_ras_output_is_an_input_error_not_a_traceback(run: Run, text: str, tmp_path: Path) -> None:
    with pytest.raises(InputError):
        load_text(text, "ras.txt")
    path = tmp_path / "ras.txt"
    path.write_text(text)
    code, out, err = run("analyze", str(path))
    assert code == 4
    assert "Traceback" not in out + err and "ras.txt" in err


def test_fleet_over_ras_dumps_fails_the_host_of_the_missing_rank(run: Run, tmp_path: Path) -> None:
    doc = json.loads((RAS / "constructed-healthy.json").read_text())
    comm = doc["communicators"][0]
    gone = comm["ranks"].pop()
    gone.update(host="172.16.64.246", status={"unresponsive": True, "considered_dead": True})
    comm.update(ranks_count=1, missing_ranks_count=1, missing_ranks=[gone])
    (tmp_path / "job-a.json").write_text(json.dumps(doc))
    (tmp_path / "job-b.json").write_text((RAS / "constructed-healthy.json").read_text())
    code, out, _ = run("fleet", str(tmp_path))
    assert code == 1
    assert "172.16.64.246 | FAIL: nccl-ras-ranks-missing" in out
    assert "172.16.64.245 | PASS" in out


def test_nccl_docs_dead_excerpt_fails_naming_the_dead_process_host(run: Run) -> None:
    code, out, _ = run("analyze", str(RAS / "doc-dead.txt"), "--format", "json")
    assert code == 1
    (f,) = [f for f in json.loads(out)["findings"] if f["code"] == "nccl-ras-ranks-missing"]
    assert "rank 21" in f["message"] and "172.16.64.213" in f["message"] and "dead" in f["message"]
    assert f["evidence"]["processes"] == [{"state": "dead", "host": "172.16.64.213", "pid": 3487984, "gpus": "5"}]


def test_nccl_docs_mismatch_sample_warns_to_query_again_and_is_no_failure(run: Run) -> None:
    # ranks at different operation counts: no concern if the counts grow across queries, stuck if they do not (the
    # docs); one query cannot tell, so it warns (RAS lists it under Warnings) and never fails
    dump = parse_nccl_ras((RAS / "doc-mismatch.txt").read_text())
    assert [(c.ident, c.size, c.missing_count) for c in dump.communicators] == [("#0-0 (27a079b828ff1a75)", 32, 0)]
    assert [(r.rank, r.host, r.problem) for r in dump.communicators[0].ranks][:2] == [
        (0, "172.16.64.210", ""),
        (2, "172.16.64.210", ""),
    ]
    code, out, _ = run("analyze", str(RAS / "doc-mismatch.txt"), "--format", "json")
    assert code == 0 and [c for c in _codes(out) if c.startswith("nccl-ras-")] == ["nccl-ras-mismatch"]
    (found,) = [f for f in json.loads(out)["findings"] if f["code"] == "nccl-ras-mismatch"]
    assert found["severity"] == "warn" and found["evidence"]["mismatches"] == [
        "Communicator ranks have different collective operation counts",
        "26 ranks have launched up to operation 6650",
        "6 ranks have launched up to operation 6649",
    ]
    assert "counts that stay put mean the communicator is stuck" in found["message"]


def test_junit_says_the_ras_codes_were_not_judged_on_a_report_without_ras_output(run: Run) -> None:
    def case(code_name: str, *args: str) -> str:
        code, out, err = run("analyze", *args, "--format", "junit")
        assert code in (0, 1), err
        start = out.index(f'name="{code_name}"')
        tag_end = out.index(">", start)
        return "" if out[tag_end - 1] == "/" else out[tag_end : out.index("</testcase>", start)]

    for code_name in ("nccl-ras-ranks-missing", "nccl-ras-rank-error"):
        assert "judged from NCCL RAS output" in case(code_name, "--example", "hgx-h100")
    assert "<failure" in case("nccl-ras-ranks-missing", str(RAS / "constructed-missing-rank.txt"))


def test_a_job_summary_cut_below_its_title_still_names_the_gpus_per_node() -> None:
    """An excerpt starting at the summary's column header (NVIDIA/nccl#1730 pasted this way): 32 nodes of 8 GPUs."""
    text = (
        "===========\n\n"
        "  Nodes  Processes         GPUs  Processes     GPUs\n"
        "(total)   per node  per process    (total)  (total)\n"
        "     32          8            1        256      256\n\n"
        "Communicators... (0.01s)\n=============\n\n"
        "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
        "    #  in group  per comm  per node  per comm  in group\n"
        "    0         1        32         8       256       256   RUNNING      OK\n"
    )
    dump = parse_nccl_ras(text)
    assert dump.gpus_per_node == 8
    assert len(load_text(text, "ras.txt").machine.gpus) == 8


def test_the_communicator_table_pasted_without_the_job_summary_gives_its_gpus_per_node() -> None:
    """The table alone (NVIDIA/nccl#1730 from its `Communicators...` line): one GPU per NCCL rank, so a group's ranks
    over its nodes are the GPUs per node it uses; judged as RAS output, not refused for having no GPU. A summary
    whose figures are damaged still refuses (the hostile corpus)."""
    table = (
        "Communicators... (0.01s)\n=============\n\n"
        "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
        "    #  in group  per comm  per node  per comm  in group\n"
        "    0         1        32         8       256       256   RUNNING      OK\n\nErrors\n======\n"
    )
    dump = parse_nccl_ras(table)
    assert (dump.nodes, dump.gpus_per_node) == (32, 8)
    assert len(load_text(table, "ras.txt").machine.gpus) == 8
    assert judge_ras(dump) == []
    eight_comms = (RAS / "doc-healthy.txt").read_text().split("Communicators", 1)[1]  # one rank per node in each
    assert parse_nccl_ras("Communicators" + eight_comms).gpus_per_node == 8
