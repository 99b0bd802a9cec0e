"""`--expect-nodes` host lists from anyone: each either expands or is a usage error in one sentence, and no list
can make the fleet build billions of names."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topoaudit.errors import InputError, UsageError
from topoaudit.fleet.inputs import MAX_HOSTS, expand_hostlist, expected_hosts


@pytest.mark.parametrize("spec", ["gpu[01-1000000000]", "a[0-999][0-999][0-999]", "a[0-999999],b[0-9]"])
def test_a_host_list_naming_more_hosts_than_any_fleet_is_refused_at_once(spec: str) -> None:
    started = time.perf_counter()
    with pytest.raises(UsageError, match=rf"names more than {MAX_HOSTS:,} hosts$"):
        expand_hostlist(spec)
    assert time.perf_counter() - started < 1


def test_a_file_of_host_lists_is_bounded_as_a_whole(tmp_path: Path) -> None:
    path = tmp_path / "nodes.txt"
    path.write_text("a[0-999999]\nb[0-9]\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"names more than 1,000,000 hosts$"):
        expected_hosts(str(path))


def test_an_unreadable_file_of_host_lists_is_named(tmp_path: Path) -> None:
    path = tmp_path / "nodes.txt"
    path.write_bytes(b"\xff\xfe\xfa")
    with pytest.raises(InputError, match=r"nodes\.txt: cannot read the expected nodes \(UnicodeDecodeError\)$"):
        expected_hosts(str(path))


def test_a_long_host_list_is_quoted_short() -> None:
    with pytest.raises(UsageError) as refused:
        expand_hostlist("gpu[" + "x" * 5000 + "]")
    assert len(str(refused.value)) < 200


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="gpu0123456789[]-,x", max_size=24))
def test_any_host_list_expands_or_is_a_usage_error(spec: str) -> None:
    try:
        hosts = expand_hostlist(spec)
    except UsageError:
        return
    assert len(hosts) <= MAX_HOSTS and all("[" not in h and "]" not in h for h in hosts)
