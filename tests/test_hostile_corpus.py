"""No input in the hostile corpus (tests/hostile_corpus.py) ends in exit 5: each gets the exit code a user must
get, with the sentence or line that says why, in every format a report renders in."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import Run
from hostile_corpus import NEEDS_WIRING, Case, corpus_cases, write_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Case]]:
    folder = tmp_path_factory.mktemp("hostile")
    return folder, {case.name: case for case in write_corpus(folder)}


def _marked(name: str) -> object:
    if name in NEEDS_WIRING:
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=NEEDS_WIRING[name]))
    return name


@pytest.mark.parametrize("name", [_marked(case.name) for case in corpus_cases()])
def test_every_hostile_input_gets_its_exit_code_never_5(
    corpus: tuple[Path, dict[str, Case]], run: Run, name: str
) -> None:
    folder, cases = corpus
    case = cases[name]
    code, out, err = run(*(arg.replace("{dir}", str(folder)) for arg in case.args))
    assert code != 5, err
    assert code == case.exit_code, err[-500:]
    assert case.says in out + err
