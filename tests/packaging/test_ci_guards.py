"""CI cannot be green by accident: in CI a skipped browser, torch or namespace test fails the run; unknown
markers are errors; a hung test is stopped by the per-test timeout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parents[1]
ROOT = TESTS.parent

SKIPPING = """
import pytest

def test_browser():
    pytest.skip("Chromium not installed (apt-get install -y chromium)")

@pytest.mark.netns
def test_two_hosts():
    pytest.skip("needs root and iproute2")

def test_other_reason():
    pytest.skip("root writes into read-only directories")

@pytest.mark.gpu
def test_on_a_gpu():
    pytest.skip("no torch with CUDA here")
"""
TORCH_MODULE = 'import pytest\npytest.importorskip("torch_that_is_not_installed")\n\ndef test_x():\n    pass\n'


def _pytest(tmp_path: Path, ci: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    for helper in ("conftest.py", "cli_runner.py", "raised_codes.py"):
        shutil.copy(TESTS / helper, tmp_path / helper)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-c", str(ROOT / "pyproject.toml"),
         "--rootdir", str(tmp_path), "--no-cov", str(tmp_path), *args],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip


def test_outside_ci_the_skips_are_skips(tmp_path: Path) -> None:
    (tmp_path / "test_skips.py").write_text(SKIPPING)
    proc = _pytest(tmp_path, None)
    assert proc.returncode == 0, proc.stdout
    assert "4 skipped" in proc.stdout


def test_in_ci_a_skipped_browser_or_namespace_test_fails(tmp_path: Path) -> None:
    (tmp_path / "test_skips.py").write_text(SKIPPING)
    proc = _pytest(tmp_path, "true")
    assert proc.returncode == 1, proc.stdout
    assert "FAILED test_skips.py::test_browser" in proc.stdout
    assert "FAILED test_skips.py::test_two_hosts" in proc.stdout
    assert "must run here, but it was skipped: Chromium not installed" in proc.stdout
    assert "2 failed" in proc.stdout and "2 skipped" in proc.stdout  # other reasons and GPU tests still skip


def test_in_ci_a_module_skipped_for_want_of_torch_fails(tmp_path: Path) -> None:
    (tmp_path / "test_torch.py").write_text(TORCH_MODULE.replace("torch_that_is_not_installed", "torch.nope"))
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    pass\n")
    assert _pytest(tmp_path, None).returncode == 0
    proc = _pytest(tmp_path, "true")
    assert proc.returncode != 0, proc.stdout
    assert "must run here, but it was skipped: could not import 'torch.nope'" in proc.stdout


def test_an_unknown_marker_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "test_marker.py").write_text("import pytest\n\n@pytest.mark.sloow\ndef test_x():\n    pass\n")
    proc = _pytest(tmp_path, None)
    assert proc.returncode != 0
    assert "'sloow' not found in `markers` configuration option" in proc.stdout


@pytest.mark.parametrize("ci", ["false", "0", ""])
def test_ci_false_is_not_ci(tmp_path: Path, ci: str) -> None:
    (tmp_path / "test_skips.py").write_text(SKIPPING)
    assert _pytest(tmp_path, ci).returncode == 0


def test_the_suite_runs_with_strict_markers_and_a_per_test_timeout() -> None:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "--strict-markers" in options["addopts"].split()
    assert 0 < int(options["timeout"]) <= 600


def test_a_hung_test_is_stopped_by_the_timeout(tmp_path: Path) -> None:
    (tmp_path / "test_hang.py").write_text("import time\n\ndef test_hangs():\n    time.sleep(60)\n")
    proc = _pytest(tmp_path, None, "-o", "timeout=2")
    assert proc.returncode == 1 and "Timeout" in proc.stdout
