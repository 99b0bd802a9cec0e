"""reports/examples/ is what the generator produces today: a rule, catalog or renderer change that alters
an example report fails here until `python tools/regen_examples.py` is run and committed."""

from __future__ import annotations

from pathlib import Path

from report_samples import BUNDLED, DEFAULT_DIR, expected_files, stale

from topoaudit.examples import examples
from topoaudit.outputs.bundle import verify_bundle
from topoaudit.render import FORMATS

ROOT = Path(__file__).parents[1] / "reports" / "examples"


def test_committed_examples_are_fresh() -> None:
    assert DEFAULT_DIR == ROOT
    problems = stale(ROOT)
    assert not problems, (
        "reports/examples/ is stale; regenerate with `.venv/bin/python tools/regen_examples.py` "
        "and commit it:\n" + "\n".join(problems[:20])
    )


def test_every_example_in_every_format() -> None:
    files = expected_files()
    for name in examples():
        for fmt in FORMATS:
            assert f"{name}/{BUNDLED.get(fmt, fmt + '.txt')}" in files, (name, fmt)
        assert f"{name}/topology.svg" in files
        # each example is a bundle plus the renderings the bundle does not carry (console, prometheus, ...)
        beside = [f"{fmt}.txt: not listed in SHA256SUMS" for fmt in sorted(FORMATS) if fmt not in BUNDLED]
        assert verify_bundle(ROOT / name) == beside


def test_generation_is_deterministic() -> None:
    assert expected_files() == expected_files()
