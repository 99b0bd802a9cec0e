"""The RAS rule's findings whole, as a report prints them: which communicator, how many ranks of how many, on
which hosts, the rank, GPU and process behind each, and what the monitor saw die or stop answering."""

from __future__ import annotations

from topoaudit.model.values import Unsupported
from topoaudit.parse.nccl_ras import NOT_IN_DUMP
from topoaudit.parse.nccl_ras import RasCommunicator as Comm
from topoaudit.parse.nccl_ras import RasDump as Dump
from topoaudit.parse.nccl_ras import RasEvent as Event
from topoaudit.parse.nccl_ras import RasProcess as Process
from topoaudit.parse.nccl_ras import RasRank as Rank
from topoaudit.rules.ras_rules import judge_ras

NOT_IN_TEXT = Unsupported("nccl-ras", "the text form names no host for a missing rank")


def _judged(*communicators: Comm, **dump: object) -> list[tuple[str, str, str, dict[str, object]]]:
    found = judge_ras(Dump("json", "2.24.3", communicators, **dump))  # type: ignore[arg-type]
    return [(f.code, f.severity.value, f.message, f.evidence) for f in found]


def test_missing_ranks_are_named_with_their_gpu_process_and_host() -> None:
    missing = (Rank(3, "node1", 4242, 3, "missing"), Rank(5, "node2", NOT_IN_DUMP, 5, "unresponsive"))
    assert _judged(Comm("c1", 8, (), missing, 2)) == [
        (
            "nccl-ras-ranks-missing",
            "fail",
            "NCCL communicator c1: 2 of 8 rank(s) missing on node1, node2: rank 3 (GPU 3, process 4242 on node1), "
            "rank 5 (GPU 5 on node2) unresponsive",
            {
                "communicator": "c1",
                "missing_ranks_count": 2,
                "size_ranks": 8,
                "hosts": ["node1", "node2"],
                "missing_ranks": [
                    {"rank": 3, "host": "node1", "pid": 4242, "gpu": 3, "problem": "missing"},
                    {"rank": 5, "host": "node2", "pid": "not in the RAS output", "gpu": 5, "problem": "unresponsive"},
                ],
                "processes": [],
            },
        )
    ]


def test_a_missing_rank_without_a_problem_reads_like_one_that_is_missing() -> None:
    """A saved report may leave ``problem`` out; the ranks still read 'rank 3 (…), rank 4', no stray space."""
    missing = (Rank(3, "node1", 7, 0), Rank(4, "node1", 8, 1))
    ((_, _, message, _),) = _judged(Comm("c1", 8, (), missing, 2))
    assert message.endswith(": rank 3 (GPU 0, process 7 on node1), rank 4 (GPU 1, process 8 on node1)")


def test_the_text_form_s_missing_ranks_take_their_hosts_from_the_missing_processes() -> None:
    missing = (Rank(3, NOT_IN_TEXT, problem="missing"), Rank(4, NOT_IN_TEXT, problem="missing"))
    processes = (Process("missing", "nodeB", 11, "3"), Process("dead", "nodeA", 12, "4"))
    assert _judged(Comm("#0-0", NOT_IN_DUMP, (), missing, 2), processes=processes) == [
        (
            "nccl-ras-ranks-missing",
            "fail",
            "NCCL communicator #0-0: 2 rank(s) missing on nodeA, nodeB: rank 3, rank 4; 1 process(es) RAS considers "
            "dead",
            {
                "communicator": "#0-0",
                "missing_ranks_count": 2,
                "size_ranks": "not in the RAS output",
                "hosts": ["nodeA", "nodeB"],
                "missing_ranks": [
                    {
                        "rank": r,
                        "host": NOT_IN_TEXT.reason,
                        "pid": "not in the RAS output",
                        "gpu": "not in the RAS output",
                        "problem": "missing",
                    }
                    for r in (3, 4)
                ],
                "processes": [
                    {"state": "missing", "host": "nodeB", "pid": 11, "gpus": "3"},
                    {"state": "dead", "host": "nodeA", "pid": 12, "gpus": "4"},
                ],
            },
        )
    ]


def test_a_missing_rank_with_its_host_keeps_it_even_beside_other_processes() -> None:
    missing = (Rank(3, "node1", 7, 0, "missing"), Rank(4, NOT_IN_TEXT, problem="missing"))
    ((_, _, message, evidence),) = _judged(
        Comm("c", 8, (), missing, 2), processes=(Process("missing", "nodeZ", 1, ""),)
    )
    assert evidence["hosts"] == ["node1"] and " missing on node1: " in message


def test_ranks_counted_missing_but_not_listed_still_fail() -> None:
    assert _judged(Comm("c2", 8, (), (), 3)) == [
        (
            "nccl-ras-ranks-missing",
            "fail",
            "NCCL communicator c2: 3 of 8 rank(s) missing: ranks not listed by RAS",
            {
                "communicator": "c2",
                "missing_ranks_count": 3,
                "size_ranks": 8,
                "hosts": [],
                "missing_ranks": [],
                "processes": [],
            },
        )
    ]


def test_a_communicator_the_table_marks_incomplete_fails_without_a_count() -> None:
    ((code, severity, _, evidence),) = _judged(Comm("c3", 8, (), (), 0, flags=("INCOMPLETE",)))
    assert (code, severity, evidence["missing_ranks_count"]) == ("nccl-ras-ranks-missing", "fail", 0)


def test_rank_errors_name_the_first_four_ranks_their_hosts_and_how_many_more() -> None:
    ranks = (
        Rank(0, "n0", 1, 0),
        Rank(1, "n1", 2, 1, "async error 6 (Remote process error)"),
        Rank(2, "n1", 3, 2, "abort flag set"),
        Rank(4, "n0", 5, 4, "init error 2 (System error)"),
        Rank(5, NOT_IN_DUMP, 6, 5, "abort flag set"),
        Rank(6, "n0", 7, 6, "abort flag set"),
    )
    assert _judged(Comm("c4", 8, ranks, (), 0)) == [
        (
            "nccl-ras-rank-error",
            "fail",
            "NCCL communicator c4: ranks report errors on n0, n1: rank 1 (GPU 1, process 2 on n1): async error 6 "
            "(Remote process error), rank 2 (GPU 2, process 3 on n1): abort flag set, rank 4 (GPU 4, process 5 on "
            "n0): init error 2 (System error), rank 5 (GPU 5, process 6): abort flag set and 1 more",
            {
                "communicator": "c4",
                "hosts": ["n0", "n1"],
                "ranks": [
                    {"rank": 1, "host": "n1", "pid": 2, "gpu": 1, "problem": "async error 6 (Remote process error)"},
                    {"rank": 2, "host": "n1", "pid": 3, "gpu": 2, "problem": "abort flag set"},
                    {"rank": 4, "host": "n0", "pid": 5, "gpu": 4, "problem": "init error 2 (System error)"},
                    {"rank": 5, "host": "not in the RAS output", "pid": 6, "gpu": 5, "problem": "abort flag set"},
                    {"rank": 6, "host": "n0", "pid": 7, "gpu": 6, "problem": "abort flag set"},
                ],
                "errors": [],
            },
        )
    ]


def test_error_lines_of_the_text_form_are_quoted_when_no_rank_is_listed() -> None:
    errors = ("Asynchronous error on 1 rank", "Init error on 2 ranks")
    assert _judged(Comm("c5", 8, (), (), 0, errors=errors)) == [
        (
            "nccl-ras-rank-error",
            "fail",
            "NCCL communicator c5: ranks report errors: Asynchronous error on 1 rank; Init error on 2 ranks",
            {"communicator": "c5", "hosts": [], "ranks": [], "errors": list(errors)},
        )
    ]


def test_a_communicator_the_table_marks_error_fails_and_says_to_list_its_ranks() -> None:
    ((code, _, message, _),) = _judged(Comm("c6", 8, (), (), 0, flags=("ERROR",)))
    assert code == "nccl-ras-rank-error"
    assert message == (
        "NCCL communicator c6: ranks report errors: the communicator table marks it ERROR; its ranks are not listed "
        "(rerun `ncclras -v`)"
    )


def test_healthy_communicators_raise_nothing_and_a_mismatch_alone_warns() -> None:
    """RAS lists a MISMATCH under its Warnings: a snapshot of running collectives, or a job stuck on some ranks."""
    healthy = Comm("ok", 2, (Rank(0, "n0", 1, 0), Rank(1, "n0", 2, 1)), (), 0)
    assert _judged(healthy) == []
    lines = ("Communicator ranks have different AllReduce operation counts", "7 ranks have launched up to operation 9")
    ((code, severity, message, _),) = _judged(healthy, Comm("c7", 8, (), (), 0, flags=("MISMATCH",), mismatches=lines))
    assert (code, severity) == ("nccl-ras-mismatch", "warn")
    assert message.startswith(
        "NCCL RAS lists communicator c7 under Warnings as MISMATCH: Communicator ranks have different AllReduce "
        "operation counts; 7 ranks have launched up to operation 9."
    )


def test_a_communicator_both_missing_ranks_and_erring_gets_both_findings_in_that_order() -> None:
    both = Comm("c8", 4, (Rank(0, "n0", 1, 0, "abort flag set"),), (Rank(1, "n1", 2, 1, "missing"),), 1)
    assert [code for code, _, _, _ in _judged(both)] == ["nccl-ras-ranks-missing", "nccl-ras-rank-error"]


def test_the_monitor_s_dead_peers_fail_and_its_unanswering_peers_warn() -> None:
    events = (
        Event("t1", "PEER_UNRESPONSIVE", "nodeA", 10, "0,1", ""),
        Event("t2", "PEER_DEAD", "nodeB", 11, "", ""),
        Event("t3", "PEER_UNRESPONSIVE", Unsupported("nccl-ras", "10.0.0.3:28028"), 12, "2", ""),
        Event("t4", "PEER_UNRESPONSIVE", "nodeC", Unsupported("nccl-ras", "no process"), "", ""),
    )
    assert _judged(events=events) == [
        (
            "nccl-ras-ranks-missing",
            "fail",
            "NCCL RAS monitor: 1 peer process(es) declared dead: process 11 on nodeB (PEER_DEAD at t2)",
            {
                "hosts": ["nodeB"],
                "processes": [
                    {"state": "dead", "host": "nodeB", "pid": 11, "gpus": "", "event": "PEER_DEAD", "timestamp": "t2"}
                ],
            },
        ),
        (
            "nccl-ras-ranks-missing",
            "warn",
            "NCCL RAS monitor: 3 peer process(es) stopped answering and had not recovered when the capture ended: "
            "process 10 on nodeA managing GPU 0,1 (PEER_UNRESPONSIVE at t1), process 12 on an unknown node managing "
            "GPU 2 (PEER_UNRESPONSIVE at t3), a process on nodeC (PEER_UNRESPONSIVE at t4)",
            {
                "hosts": ["nodeA", "nodeC"],
                "processes": [
                    {"state": "unresponsive", "host": "nodeA", "pid": 10, "gpus": "0,1", "event": "PEER_UNRESPONSIVE",
                     "timestamp": "t1"},
                    {"state": "unresponsive", "host": "10.0.0.3:28028", "pid": 12, "gpus": "2",
                     "event": "PEER_UNRESPONSIVE", "timestamp": "t3"},
                    {"state": "unresponsive", "host": "nodeC", "pid": "no process", "gpus": "",
                     "event": "PEER_UNRESPONSIVE", "timestamp": "t4"},
                ],
            },
        ),
    ]  # fmt: skip


def test_only_unanswering_peers_warn_alone() -> None:
    events = (Event("t1", "PEER_UNRESPONSIVE", "nodeA", 10, "", ""),)
    assert [(c, s) for c, s, _, _ in _judged(events=events)] == [("nccl-ras-ranks-missing", "warn")]


def test_past_four_missing_ranks_or_peers_the_message_says_how_many_more() -> None:
    missing = tuple(Rank(r, "node1", 100 + r, r, "missing") for r in range(5))
    ((_, _, message, _),) = _judged(Comm("c9", 8, (), missing, 5))
    assert message.endswith("rank 3 (GPU 3, process 103 on node1) and 1 more")
    events = tuple(Event(f"t{k}", "PEER_DEAD", f"node{k}", k, "", "") for k in range(5))
    ((_, _, message, _),) = _judged(events=events)
    assert message.endswith("process 3 on node3 (PEER_DEAD at t3) and 1 more")
