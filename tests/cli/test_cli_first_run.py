"""What a new user meets first: the option to add when the paste does not name its GPUs, a mistyped command,
a bundle directory or a truncated report given where a capture is expected, and how to get the bench's
PyTorch for the way this copy was installed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from topoaudit.examples import examples

Run = Callable[..., tuple[int, str, str]]  # the `run` fixture of tests/conftest.py

FIXTURES = Path(__file__).parent.parent / "fixtures" / "cli"
NVL_PAIRS = FIXTURES / "topo-8xh100nvl-nv12-pairs-2nic-sglang-1.txt"  # real capture, model not in the paste
REPO = Path(__file__).resolve().parent.parent.parent
GPU_MODEL_LINE = re.compile(r'add --gpu-model "NAME" \(the name `nvidia-smi -L` prints\) to `topoaudit analyze`')


@pytest.fixture
def split_paste(tmp_path: Path) -> Path:
    """The bundled H200 NVL split box as a user pastes it: `nvidia-smi topo -m` text, no model anywhere."""
    paste = tmp_path / "topo.txt"
    paste.write_text(examples()["h200-nvl-split"].text())
    return paste


# --- the GPU model the paste leaves out ----------------------------------------------------------------


@pytest.mark.parametrize("capture", ["split", "nvl-pairs"])
def test_a_split_paste_of_unknown_model_names_the_option_to_add_on_the_console(
    run: Run, split_paste: Path, capture: str
) -> None:
    path = split_paste if capture == "split" else NVL_PAIRS
    code, out, _ = run("analyze", str(path), "--no-color")
    assert code == 0
    assert "nvlink-split-domain" in out and "model-unknown" in out
    lines = [line for line in out.splitlines() if GPU_MODEL_LINE.search(line)]
    assert len(lines) == 1, out  # said once, on one line of a 120-column terminal
    assert lines[0].startswith("GPU model unknown: add --gpu-model")


def test_a_saved_report_re_rendered_names_the_command_that_takes_the_option(
    run: Run, split_paste: Path, tmp_path: Path
) -> None:
    saved = tmp_path / "report.json"
    run("analyze", str(split_paste), "--format", "json", "-o", str(saved))
    code, out, _ = run("report", str(saved), "--no-color")
    assert code == 0 and GPU_MODEL_LINE.search(out)  # `report` takes no --gpu-model; `analyze` reads the report
    code, out, _ = run("analyze", str(saved), "--gpu-model", "NVIDIA H200 NVL", "--no-color")
    assert code == 0 and "By design for NVIDIA H200 NVL" in out and not GPU_MODEL_LINE.search(out)


def test_the_option_to_add_is_gone_once_the_model_is_given(run: Run, split_paste: Path) -> None:
    code, out, _ = run("analyze", str(split_paste), "--no-color", "--gpu-model", "NVIDIA H200 NVL")
    assert code == 0
    assert "--gpu-model" not in out and "By design for NVIDIA H200 NVL" in out


def test_a_model_outside_the_catalog_is_not_told_to_pass_the_option_it_passed(run: Run, split_paste: Path) -> None:
    code, out, _ = run("analyze", str(split_paste), "--no-color", "--gpu-model", "Acme X1")
    assert code == 0
    assert "not in the catalog" in out and not GPU_MODEL_LINE.search(out)


# --- mistyped commands ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("analyse", "analyze"),
        ("Analyze", "analyze"),
        ("reprot", "report"),
        ("nccltopo", "nccl-topo"),
        ("flet", "fleet"),
    ],
)
def test_a_mistyped_command_names_the_one_meant(run: Run, typed: str, meant: str) -> None:
    code, _, err = run(typed, "topo.txt")
    assert code == 2
    assert f"No such command '{typed}'. Did you mean '{meant}'?" in err


def test_a_command_like_no_other_gets_no_guess(run: Run) -> None:
    code, _, err = run("xyzzy")
    assert code == 2
    assert "No such command 'xyzzy'." in err and "Did you mean" not in err


# --- a bundle directory where a file is expected -------------------------------------------------------


def test_analyze_and_report_read_the_report_of_a_bundle_directory(run: Run, split_paste: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    code, _, _ = run("analyze", str(split_paste), "--tp", "8", "--out", str(bundle), "--format", "json")
    assert code == 1 and (bundle / "report.json").is_file()
    saved = json.loads((bundle / "report.json").read_text())
    code, out, _ = run("report", str(bundle), "--format", "json")
    assert code == 1 and json.loads(out)["gate"] == saved["gate"]
    code, out, _ = run("analyze", str(bundle), "--tp", "8", "--format", "json")
    again = json.loads(out)
    assert code == 1 and again["gate"]["verdict"] == "fail"
    assert again["source"]["name"] == str(bundle / "report.json")
    code, out, _ = run("plan", "--weights-gb", "500", "--gpu", "H200", "--from", str(bundle), "--format", "json")
    plan = json.loads(out)["plan"]  # 625 GB on 139 GB cards: 5 cards, TP8, wider than the box's 4-GPU domains
    assert code == 1 and plan["verdict"] == "crosses-domain" and plan["machine"]["domain_sizes"] == [4, 4]


def test_a_directory_without_a_report_says_so(run: Run, tmp_path: Path) -> None:
    for command in ("analyze", "report"):
        code, _, err = run(command, str(tmp_path))
        assert code == 4
        assert f"{tmp_path}: a directory without report.json" in err and "Traceback" not in err
        assert "fleet" not in err


def test_a_directory_of_node_captures_points_to_fleet(run: Run, split_paste: Path) -> None:
    code, _, err = run("analyze", str(split_paste.parent))
    assert code == 4
    assert f"`topoaudit fleet {split_paste.parent}` judges a directory of node reports" in err


# --- a report cut short --------------------------------------------------------------------------------


def test_a_truncated_report_is_invalid_json_at_the_line_and_column_where_it_breaks(
    run: Run, split_paste: Path, tmp_path: Path
) -> None:
    whole = tmp_path / "report.json"
    run("analyze", str(split_paste), "--format", "json", "-o", str(whole))
    text = whole.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(json.JSONDecodeError) as broken:
        json.loads(cut.read_text())
    code, _, err = run("analyze", str(cut))
    assert code == 4
    assert f"invalid JSON, it breaks at line {broken.value.lineno}, column {broken.value.colno}" in err
    assert "not a format topoaudit reads" not in err


def test_json_that_is_whole_but_no_report_is_still_not_a_format(run: Run, tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}\n')
    code, _, err = run("analyze", str(other))
    assert code == 4 and "not a format topoaudit reads" in err and "invalid JSON" not in err


# --- PyTorch for the bench, installed the way this copy was --------------------------------------------


class _Dist:
    """An installed distribution as importlib.metadata shows it."""

    def __init__(self, direct_url: dict[str, object] | None) -> None:
        self.direct_url = direct_url
        self.requires = ["rich>=13.0", 'torch>=2.1; extra == "bench"', 'pytest>=7.4; extra == "test"']

    def read_text(self, name: str) -> str | None:
        return json.dumps(self.direct_url) if name == "direct_url.json" and self.direct_url is not None else None


@pytest.mark.parametrize(
    ("direct_url", "expected"),
    [
        (None, "pip install 'topoaudit[bench]'"),  # from an index: the index has the extra
        (
            {"url": "file:///opt/src/topoaudit", "dir_info": {"editable": True}},
            "pip install -e '/opt/src/topoaudit[bench]'",
        ),
        ({"url": "file:///opt/src/topoaudit", "dir_info": {}}, "pip install '/opt/src/topoaudit[bench]'"),
        ({"url": "file:///tmp/topoaudit-0.1.0-py3-none-any.whl", "archive_info": {}}, "pip install 'torch>=2.1'"),
        ({"url": "https://github.com/o/topoaudit", "vcs_info": {"vcs": "git"}}, "pip install 'torch>=2.1'"),
        ({"url": "file:///gone/topoaudit", "dir_info": {}}, "pip install 'torch>=2.1'"),  # the directory is gone
    ],
)
def test_the_bench_install_command_follows_how_topoaudit_was_installed(
    monkeypatch: pytest.MonkeyPatch, direct_url: dict[str, object] | None, expected: str
) -> None:
    from importlib import metadata

    from topoaudit.app import install

    real_is_dir = Path.is_dir
    monkeypatch.setattr(install, "source_tree", lambda: None)
    monkeypatch.setattr(metadata, "distribution", lambda name: _Dist(direct_url))
    monkeypatch.setattr(Path, "is_dir", lambda p: str(p) == "/opt/src/topoaudit" or real_is_dir(p))
    assert install.extra_install_command("bench") == expected


def test_bench_without_torch_in_a_clone_names_the_editable_install_of_that_clone() -> None:
    code = "import sys; sys.modules['torch'] = None; from topoaudit.cli import main; main(['bench'])"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False, cwd="/"
    )
    assert done.returncode == 4 and "Traceback" not in done.stderr
    assert "the bench needs PyTorch" in done.stderr
    assert f"pip install -e '{REPO}[bench]'" in done.stderr
    assert "'topoaudit[bench]'" not in done.stderr  # no such distribution on the index
