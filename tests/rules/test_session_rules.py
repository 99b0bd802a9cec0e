"""Tensors a pasted Python session printed after copying them between GPUs: a copy that arrived with other values
is peer-copy-corruption (fail); copies that arrived intact are a PASS over what was shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import Run

from topoaudit.parse.python_session import looks_like_python_session, read_python_session

REAL = Path(__file__).parents[1] / "fixtures" / "real" / "pastes"


def judged(run: Run, tmp_path: Path, text: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    paste = tmp_path / "session.txt"
    paste.write_text(text, encoding="utf-8")
    code, out, err = run("analyze", str(paste), "--format", "json")
    assert code in (0, 1), err
    return code, json.loads(out)


def test_a_peer_copy_of_ones_printed_as_zeros_fails_and_names_the_host_copy(run: Run, tmp_path: Path) -> None:
    """pytorch/pytorch#13803: `t.to(cuda0)` printed zeros, `t.cpu().to(cuda0)` printed the ones."""
    code, report = judged(run, tmp_path, (REAL / "pytorch-13803-cross-gpu-zeros.txt").read_text(encoding="utf-8"))
    (found,) = report["findings"]
    assert code == 1 and report["verdict"] == "fail" and found["code"] == "peer-copy-corruption"
    assert found["message"].startswith(
        "A tensor copied from cuda:1 to cuda:0 arrived with other values: line 10 prints [0., 0., 0., 0., ...] "
        "where line 8 holds [1., 1., 1., 1., ...] (shown by line 9: `>>> t.to(cuda0)`); the copy through the host "
        "on line 12 arrived intact"
    )
    assert found["evidence"]["copies"] == [
        {"source_line": 8, "copy_line": 10, "from_device": "cuda:1", "to_device": "cuda:0",
         "shown_by": "line 9: `>>> t.to(cuda0)`"}
    ]  # fmt: skip
    assert report["gate"]["judged"][0] == "the tensors printed before and after 1 copy between GPUs"


def test_a_literal_copied_to_another_gpu_is_compared_with_what_was_written(run: Run, tmp_path: Path) -> None:
    """pytorch/pytorch#84803: `x = torch.tensor([1.0, 2.0], device=0)`, then `x.to(1)` printed 1.4013e-45."""
    code, report = judged(run, tmp_path, (REAL / "pytorch-84803-p2p-copy-corrupt.txt").read_text(encoding="utf-8"))
    assert code == 1 and [f["code"] for f in report["findings"]] == ["peer-copy-corruption"]
    assert "line 3 prints [1.4013e-45, 0.0000e+00] where line 1 holds [1.0, 2.0]" in report["findings"][0]["message"]


def test_three_prints_without_code_show_the_copy_that_went_wrong() -> None:
    """pytorch/pytorch#96600: x on cuda:0, other values on cuda:1, then x's values on cuda:1."""
    read = read_python_session((REAL / "pytorch-96600-4090-copy-garbage.txt").read_text(encoding="utf-8"))
    assert read is not None and [(p.line, p.last, p.device, p.shape) for p in read.prints] == [
        (1, 2, "cuda:0", (2, 3)), (3, 4, "cuda:1", (2, 3)), (5, 6, "cuda:1", (2, 3))
    ]  # fmt: skip
    (copy,) = read.gpu_copies
    assert (copy.source.line, copy.copy.line, copy.intact) == (1, 3, False)
    assert copy.shown_by == "line 5, where line 1's values arrive on cuda:1"


def test_a_script_that_moves_its_tensor_and_prints_the_copy_is_read(run: Run, tmp_path: Path) -> None:
    """pytorch/pytorch#106474: `a = a.to("cuda:0")`, then `print(a.to("cuda:1"))` shows `>> tensor([0], ...)`."""
    code, report = judged(run, tmp_path, (REAL / "pytorch-106474-4090-p2p-copy-zeros.txt").read_text(encoding="utf-8"))
    assert code == 1 and [f["code"] for f in report["findings"]] == ["peer-copy-corruption"]
    assert "line 5 prints [0] where line 3 holds [1]" in report["findings"][0]["message"]


MOVED = """\
x = torch.tensor([1.0, 2.0, 3.0])
x = x.cuda()
y = x.to(torch.device('cuda:1'))
z = x.to(device)
print(y)
tensor([0., 0., 0.], device='cuda:1')
print(z)
tensor([0., 0., 0.], device='cuda:1')
"""


def test_a_name_bound_to_a_copy_between_gpus_is_judged_when_printed() -> None:
    read = read_python_session(MOVED)
    assert read is not None
    (copy,) = read.gpu_copies  # z's device is a variable: what it should hold is not known
    assert (copy.source.device, copy.copy.device, copy.copy.line, copy.intact) == ("cuda:0", "cuda:1", 6, False)
    assert copy.shown_by == "line 3: `y = x.to(torch.device('cuda:1'))`"


SOUND = """\
>>> import torch
>>> x = torch.arange(6, dtype=torch.float32, device='cuda:0').reshape(2, 3)
>>> x
tensor([[0., 1., 2.],
        [3., 4., 5.]], device='cuda:0')
>>> x.to('cuda:1')
tensor([[0., 1., 2.],
        [3., 4., 5.]], device='cuda:1')
>>> x.to('cuda:2')
tensor([[0., 1., 2.],
        [3., 4., 5.]], device='cuda:2')
"""


def test_copies_that_arrived_intact_pass_over_what_was_shown(run: Run, tmp_path: Path) -> None:
    code, report = judged(run, tmp_path, SOUND)
    assert code == 0 and report["verdict"] == "pass" and report["findings"] == []
    assert report["gate"]["judged"] == ["the tensors printed before and after 2 copies between GPUs"]


def test_a_saved_report_of_the_session_is_judged_again_as_it_was(run: Run, tmp_path: Path) -> None:
    _, report = judged(run, tmp_path, (REAL / "pytorch-87363-a100-pcie-zero-copy.txt").read_text(encoding="utf-8"))
    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(report), encoding="utf-8")
    code, out, err = run("report", str(saved), "--format", "json")
    assert code == 1, err
    assert [f["code"] for f in json.loads(out)["findings"]] == ["peer-copy-corruption"]


@pytest.mark.parametrize(
    "text",
    [
        "tensor([1., 2.], device='cuda:0')\n",  # one print: no copy
        ">>> y.to('cuda:1')\ntensor([0., 0.], device='cuda:1')\n",  # a copy of a tensor never shown
        "tensor([1., 2.], device='cuda:0')\ntensor([5., 6., 7.], device='cuda:1')\n",  # two different tensors
        "tensor([[1., 2.], ..., [3., 4.]], device='cuda:0')\n>>> a.to(1)\ntensor([0.], device='cuda:1')\n",
        "tensor([1., 2.,\n" * 50,  # never closed
        "tensor(" + "[" * 5000 + "1." + "]" * 4999 + ", device='cuda:0')\n",  # unbalanced brackets
    ],
)
def test_prints_that_show_no_copy_between_gpus_are_not_read_as_one(text: str) -> None:
    assert not looks_like_python_session(text)


def test_a_copy_between_two_devices_of_one_gpu_name_is_no_gpu_copy() -> None:
    """`.to('cpu')` and back is the host's copy: compared, never blamed on the path between GPUs."""
    read = read_python_session(">>> a\ntensor([1., 2.], device='cuda:0')\n>>> a.cpu()\ntensor([0., 0.])\n")
    assert read is not None and read.gpu_copies == () and [c.copy.device for c in read.copies] == ["cpu"]


TORCH_QUERIES = """\
>>> import torch
>>> torch.cuda.can_device_access_peer(0, 1)
False
>>> torch.cuda.can_device_access_peer(2, 3)
True
"""


def test_a_peer_access_query_answered_false_is_p2p_unavailable(run: Run, tmp_path: Path) -> None:
    code, report = judged(run, tmp_path, TORCH_QUERIES)
    (found,) = report["findings"]
    assert code == 0 and report["verdict"] == "warn" and found["code"] == "p2p-unavailable"
    assert found["message"].startswith(
        "CUDA answers that GPU 0 cannot access GPU 1's memory (line 2: `torch.cuda.can_device_access_peer(0, 1)`, "
        "answered False on line 3): copies between them go through host memory."
    )
    assert found["evidence"]["pairs"] == [{"gpus": [0, 1], "status": "no peer access", "path": "unknown"}]
    assert report["gate"]["judged"][0] == "2 peer-access queries of a Python session"


def test_an_answer_kept_under_a_name_and_printed_later_is_read() -> None:
    """NVIDIA/TensorRT-LLM#1374: CUDA Python's (error, answer) pair, printed one after the other."""
    read = read_python_session((REAL / "trtllm-1374-a10-canaccesspeer-zero.txt").read_text(encoding="utf-8"))
    assert read is not None
    assert [(q.asked_on, q.line, q.gpu, q.peer, q.can_access) for q in read.peer_queries] == [(2, 6, 0, 1, False)]


def test_queries_answered_true_pass_and_a_query_without_its_answer_is_no_query(run: Run, tmp_path: Path) -> None:
    code, report = judged(run, tmp_path, TORCH_QUERIES.replace("False", "True"))
    assert code == 0 and report["verdict"] == "pass" and report["findings"] == []
    assert not looks_like_python_session(">>> torch.cuda.can_device_access_peer(0, 1)\n>>> exit()\n")
