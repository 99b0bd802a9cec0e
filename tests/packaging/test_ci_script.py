"""`.ci/run` stops at the first failing step: one command per line under `set -euo pipefail` (inside an
`a && b && c` chain `set -e` does not stop, and a failed install then let CI go green with no test run)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).parents[2]
CI_RUN = ROOT / ".ci" / "run"

# A stand-in for python3: `python3 -m venv DIR` makes a venv whose tools all succeed and log their call,
# except pip when PIP_FAILS is set -- an old .venv with a broken install, as CI would meet it.
FAKE_PYTHON = """#!/usr/bin/env bash
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin"
  for tool in python ruff mypy lint-imports topoaudit; do
    printf '#!/usr/bin/env bash\\necho "%s $*" >> "$CALLS"\\n' "$tool" > "$3/bin/$tool"
    chmod +x "$3/bin/$tool"
  done
  cat > "$3/bin/pip" <<'PIP'
#!/usr/bin/env bash
echo "pip $*" >> "$CALLS"
if [ "$1" = "wheel" ]; then touch "${@: -2:1}/topoaudit-0-py3-none-any.whl"; fi
[ -z "$PIP_FAILS" ]
PIP
  chmod +x "$3/bin/pip"
fi
"""


def _run_ci(tmp_path: Path, *, pip_fails: bool) -> tuple[int, list[str]]:
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(CI_RUN, repo / ".ci" / "run")
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    for name, body in (("python3", FAKE_PYTHON), ("chromium", "#!/bin/sh\n")):
        (fake_bin / name).write_text(body)
        (fake_bin / name).chmod(0o755)
    calls = tmp_path / "calls.log"
    calls.touch()
    env = dict(
        os.environ, PATH=f"{fake_bin}:{os.environ['PATH']}", CALLS=str(calls), PIP_FAILS="1" if pip_fails else ""
    )
    proc = subprocess.run(["bash", str(repo / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60)
    return proc.returncode, calls.read_text().splitlines()


def test_a_failed_install_stops_ci_before_anything_else_runs(tmp_path: Path) -> None:
    code, calls = _run_ci(tmp_path, pip_fails=True)
    assert code != 0
    assert calls == ["pip install -q -e .[test,bench]"]  # no pytest, no lint: nothing that could look green


def test_every_step_runs_in_order_when_each_succeeds(tmp_path: Path) -> None:
    code, calls = _run_ci(tmp_path, pip_fails=False)
    assert code == 0, calls
    tools = [call.split()[0] for call in calls]
    assert tools[:6] == ["pip", "python", "ruff", "ruff", "mypy", "lint-imports"]
    assert calls[1].startswith("python -m pytest --cov=topoaudit")
    assert calls[3] == "ruff format --check ."
    wheel_run = [call for call in calls if call.startswith("topoaudit ")]
    assert "topoaudit audit --demo" in wheel_run
    assert any("--policy builtin:" in call for call in wheel_run)
    assert any(call.endswith("--example list") for call in wheel_run)


def test_no_step_is_chained() -> None:
    for number, line in enumerate(CI_RUN.read_text().splitlines(), 1):
        code = line.split("#", 1)[0]
        assert "&&" not in code and "||" not in code, f".ci/run:{number} chains commands: {line}"
    assert "set -euo pipefail" in CI_RUN.read_text().splitlines()[:5]


def test_the_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    command = next(
        line for line in readme.splitlines() if line.startswith("python3 -m venv .venv") and "pytest" in line
    )
    ci_lines = [line.strip() for line in CI_RUN.read_text().splitlines()]
    for step in command.split(" && "):
        assert any(line == step or line.startswith(step + " ") for line in ci_lines), step


def test_the_import_contracts_lint_imports_reads_exist() -> None:
    assert (ROOT / ".importlinter").is_file()
