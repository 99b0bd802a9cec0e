"""The wheel a user installs works on its own: built from the source tree, installed outside the repository,
it runs the README's main command, a built-in policy, the example list and an HTML report (package data:
examples, catalog, policies, templates). The rest of the suite tests an editable install, which would not
notice a data file left out of the wheel."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel's files installed into a plain directory (no editable install, no repository on the path)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", "*_cache"),
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(work), "."],
        cwd=source, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    wheel = next(work.glob("topoaudit-*.whl"))
    site = work / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site


def _run(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m topoaudit`` with only the wheel and the dependencies on the path (no site .pth files)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), sysconfig.get_paths()["purelib"]]))
    return subprocess.run(
        [sys.executable, "-S", "-m", "topoaudit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_wheel_carries_its_data_files(installed: Path) -> None:
    package = installed / "topoaudit"
    assert sorted(p.name for p in (package / "policies").glob("*.toml")), "no built-in policies in the wheel"
    assert (package / "catalog" / "gpus.toml").is_file()
    assert (package / "catalog" / "signatures.toml").is_file()
    assert (package / "examples" / "index.toml").is_file()
    assert (package / "py.typed").is_file()


def test_the_installed_wheel_runs_outside_the_repository(installed: Path, tmp_path: Path) -> None:
    where = _run(installed, tmp_path, "--version")
    assert where.returncode == 0, where.stderr

    demo = _run(installed, tmp_path, "audit", "--demo")
    assert demo.returncode == 0, demo.stderr
    assert "DEMO" in demo.stdout

    policy = _run(installed, tmp_path, "analyze", "--example", "hgx-h100", "--policy", "builtin:hgx-8gpu")
    assert policy.returncode == 0, policy.stderr
    assert "hgx-8gpu" in policy.stdout

    listing = _run(installed, tmp_path, "analyze", "--example", "list")
    assert listing.returncode == 0, listing.stderr
    assert "h200-nvl-split" in listing.stdout and "hgx-h100" in listing.stdout

    html = _run(installed, tmp_path, "analyze", "--example", "hgx-h100", "--format", "html", "-o", "r.html")
    assert html.returncode == 0, html.stderr
    assert (tmp_path / "r.html").read_text().lstrip().lower().startswith("<!doctype html>")


def test_the_module_comes_from_the_wheel_not_the_repository(installed: Path, tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(installed), sysconfig.get_paths()["purelib"]]))
    proc = subprocess.run(
        [sys.executable, "-S", "-c", "import topoaudit; print(topoaudit.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert Path(proc.stdout.strip()).is_relative_to(installed)
