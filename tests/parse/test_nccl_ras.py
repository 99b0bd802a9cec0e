"""NCCL RAS status output (`ncclras`, text and `-f json`): read like any capture, missing ranks and rank errors fail."""

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


def test_every_fixture_has_provenance_and_is_recognised() -> None:
    rows = {line.split("\t")[0] for line in (RAS / "PROVENANCE.tsv").read_text().splitlines()[1:]}
    assert rows == {p.name for p in ALL}
    for p in ALL:
        assert looks_like_nccl_ras(p.read_text()), p.name
        assert load_path(str(p)).source.kind == "nccl-ras", p.name


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


def test_nccl_docs_mismatch_sample_is_not_a_failure(run: Run) -> None:
    # ranks at different operation counts while collectives run: the docs call it no cause for concern
    dump = parse_nccl_ras((RAS / "doc-mismatch.txt").read_text())
    assert [(c.ident, c.size, c.missing_count) for c in dump.communicators] == [("#0-0 (27a079b828ff1a75)", 32, 0)]
    assert [(r.rank, r.host, r.problem) for r in dump.communicators[0].ranks][:2] == [
        (0, "172.16.64.210", ""),
        (2, "172.16.64.210", ""),
    ]
    code, out, _ = run("analyze", str(RAS / "doc-mismatch.txt"), "--format", "json")
    assert code == 0 and not [c for c in _codes(out) if c.startswith("nccl-ras-")]


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
