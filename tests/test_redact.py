"""--redact: hostnames, serials, UUIDs, IP and MAC addresses become stable tokens, in every file."""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import report_samples as rs

from topoaudit.model.report import Report, report_from_dict
from topoaudit.outputs.bundle import verify_bundle, write_bundle
from topoaudit.outputs.redact import Redactor, redact_report
from topoaudit.render import FORMATS, render

FIXTURES = Path(__file__).parent / "fixtures"
SECRETS = [rs.HOSTNAME, "gpu-node-17", *rs.SERIALS, *rs.UUIDS, rs.IP, rs.IPV6, rs.MAC]
EVIDENCE_TEXT = f"""==============NVSMI LOG==============
Hostname                              : {rs.HOSTNAME}
Attached GPUs                         : 8
GPU 00000000:18:00.0
    Serial Number                     : {rs.SERIALS[0]}
    Board Serial                      : 1320123456789
    GPU UUID                          : {rs.UUIDS[0]}
    MIG uuid                          : MIG-{rs.UUIDS[1][4:]}
ib0: inet {rs.IP}/16 ether {rs.MAC} link/infiniband 80:00:00:68:fe:80:00:00:00:00:00:00:b8:ce:f6:03:00:12:34:56
node_guid 0x0c42a10300abcdef
ssh root@gpu-node-17 -p 22
"""
EVIDENCE_SECRETS = ["1320123456789", rs.UUIDS[1][4:], "0x0c42a10300abcdef", "b8:ce:f6:03:00:12:34:56"]


def test_same_value_same_token_and_kinds() -> None:
    r = Redactor()
    a = r.text(f"{rs.IP} talks to {rs.IP} via {rs.MAC}")
    assert a == "ip-1 talks to ip-1 via mac-1"
    r.learn("host", rs.HOSTNAME)
    assert r.text(f"ssh {rs.HOSTNAME}; ping gpu-node-17") == "ssh host-1; ping host-1"
    assert r.summary() == {"host": 1, "mac": 1, "ip": 1}


def test_versions_and_bus_ids_are_not_mistaken_for_addresses() -> None:
    r = Redactor()
    for s in ("0000:18:00.0", "00000000:18:00.0", "550.54.15", "2026-11-30T00:00:00+00:00", "NV18", "mlx5_0"):
        assert r.text(s) == s


def test_redacted_report_round_trips_and_says_so() -> None:
    report = redact_report(rs.identity_report())
    data = json.loads(render(report, "json"))
    assert report_from_dict(data) == report
    text = json.dumps(data)
    for secret in SECRETS:
        assert secret not in text, secret
    assert report.machine.host.hostname == "host-1"
    assert [g.serial for g in report.machine.gpus][:2] == ["serial-1", "serial-2"]
    assert report.extras["redaction"]["replaced"]["serial"] == 8
    assert "Redacted" in render(report, "html") and "Redacted" in render(report, "markdown")


def test_every_format_is_clean() -> None:
    report = redact_report(rs.identity_report())
    for fmt in FORMATS:
        out = render(report, fmt)
        for secret in SECRETS:
            assert secret not in out, (fmt, secret)


def test_nothing_redacted_leaks_into_any_file_of_the_bundle(tmp_path: Path) -> None:
    import dataclasses

    report = dataclasses.replace(rs.identity_report(), bench=rs.bench_result(host=rs.HOSTNAME))
    evidence = {
        f"nvidia-smi-q-{rs.HOSTNAME}.txt": EVIDENCE_TEXT,
        "snapshot.json": json.dumps({"hostname": rs.HOSTNAME, "ip": rs.IP}),
        "blob.bin": b"\xff\xfe" + rs.HOSTNAME.encode(),
    }
    bundle = write_bundle(report, tmp_path / "b", evidence, redact=True)
    assert verify_bundle(tmp_path / "b") == []
    files = [p for p in (tmp_path / "b").rglob("*") if p.is_file()]
    assert len(files) == len(bundle.files)
    for path in files:
        blob = path.read_bytes()
        for secret in SECRETS + EVIDENCE_SECRETS:
            assert secret.encode() not in blob, (path.name, secret)
            assert secret not in str(path)
    # one token per value across files: the report's host-1 is the evidence's host-1
    q = next(p for p in files if p.name.startswith("nvidia-smi-q"))
    assert "host-1" in q.name and "Hostname                              : host-1" in q.read_text()
    assert f"Serial Number                     : {bundle.report.machine.gpus[0].serial}" in q.read_text()
    assert "left out" in (tmp_path / "b" / "evidence" / "blob.bin").read_text()


ENV_HOSTS = ["head-node-3", "node-17", "node-18", "node-[17-18]", "gpu-[01-02]", "gpu-01", "gpu-02", "trainer-0"]
ENV_VARIABLES = (
    "NCCL_COMM_ID=head-node-3:29500",
    "SLURM_NODELIST=node-[17-18],gpu-[01-02]",
    "MASTER_ADDR=trainer-0",
    "MASTER_PORT=29500",
    "SLURM_NNODES=2",
    "NCCL_SOCKET_IFNAME=ib0",
    "NCCL_IB_ADDR_FAMILY=AF_INET6",
)


def _with_environment() -> Report:
    import dataclasses

    report = rs.identity_report()
    host = dataclasses.replace(report.machine.host, environment=ENV_VARIABLES)
    bench = dataclasses.replace(rs.bench_result(), environment={"MASTER_ADDR": "trainer-0", "torch": "2.5.1"})
    return dataclasses.replace(report, machine=dataclasses.replace(report.machine, host=host), bench=bench)


def test_hosts_inside_environment_values_are_hidden_and_ports_and_counts_kept() -> None:
    report = redact_report(_with_environment())
    text = render(report, "json")
    for host in ENV_HOSTS:
        assert host not in text, host
    environment = report.machine.host.environment
    assert isinstance(environment, tuple)
    assert environment[0].startswith("NCCL_COMM_ID=host-") and environment[0].endswith(":29500")
    assert "SLURM_NNODES=2" in environment and "MASTER_PORT=29500" in environment
    assert "NCCL_SOCKET_IFNAME=ib0" in environment and "NCCL_IB_ADDR_FAMILY=AF_INET6" in environment


def test_a_known_value_right_after_a_json_escape_is_replaced() -> None:
    r = Redactor()
    r.learn("host", "node7")
    escaped = json.dumps({"log": "booted\nnode7\tnode7 at 10.1.2.3\n10.1.2.4\r\nGPU-" + rs.UUIDS[0][4:]})
    redacted = r.text(escaped)
    assert "node7" not in redacted and "10.1.2." not in redacted and rs.UUIDS[0][4:] not in redacted
    assert "\\nhost-1\\thost-1 at ip-1\\nip-2" in redacted
    assert json.loads(redacted)["log"].startswith("booted\nhost-1\thost-1")


def test_json_evidence_teaches_the_values_inside_escaped_strings() -> None:
    r = Redactor()
    snapshot = json.dumps({"commands": {"nvidia-smi -q": "==NVSMI LOG==\nHostname : box-east-4\nSerial Number : 99\n"}})
    r.learn_text(snapshot)
    assert "box-east-4" not in r.text(snapshot)


PROMPTS = [
    "root@dgx-h100-07:~# nvidia-smi topo -m\n",
    "ubuntu@ip-172-31-9-4.ec2.internal:/data$ nvidia-smi topo -m\n",
    "[admin@gpu-box-3 ~]$ nvidia-smi topo -m\n",
]


def _topoaudit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "topoaudit", *args], capture_output=True, text=True, timeout=120)


def test_the_hostname_of_a_shell_prompt_glued_to_a_capture_is_hidden_in_every_bundle_file(tmp_path: Path) -> None:
    capture = (FIXTURES / "evidence" / "topo-4xh100-vm-halfnode-all-phb-8nic-1.txt").read_text()
    glued = "".join(PROMPTS) + capture.rstrip("\n") + "root@dgx-h100-07:~# "  # the next prompt on the last line
    (tmp_path / "capture.txt").write_text(glued)
    proc = _topoaudit("analyze", str(tmp_path / "capture.txt"), "--redact", "--out", str(tmp_path / "b"))
    assert proc.returncode in (0, 1), proc.stderr
    files = [p for p in (tmp_path / "b").rglob("*") if p.is_file()]
    assert len(files) == 7  # five renderings, the capture, the manifest
    for path in files:
        blob = path.read_text(errors="replace") + proc.stdout + proc.stderr
        for host in ("dgx-h100-07", "ip-172-31-9-4", "gpu-box-3"):
            assert host not in blob, (path.name, host)
    evidence = (tmp_path / "b" / "evidence" / "capture.txt").read_text()
    assert evidence.startswith("root@host-1:~# nvidia-smi topo -m\nubuntu@host-2:/data$ nvidia-smi topo -m\n")
    assert "[admin@host-3 ~]$" in evidence
    assert evidence.endswith("mlx5_7root@host-1:~# ")  # the user name is kept
    assert capture.splitlines()[1] in evidence  # the matrix itself is untouched


def test_stdout_of_redact_hides_environment_hosts(tmp_path: Path) -> None:
    snapshot = json.loads((FIXTURES / "h200-device" / "snapshot-h200.json").read_text())
    snapshot["env"]["variables"] = [*snapshot["env"]["variables"], *ENV_VARIABLES]
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(snapshot))
    proc = _topoaudit("analyze", str(path), "--redact", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    assert "NCCL_COMM_ID=host-" in proc.stdout  # the variable is there, its host is not
    for host in ENV_HOSTS:
        assert host not in proc.stdout + proc.stderr, host


def test_hosts_in_nccl_and_nccl_tests_log_lines_are_hidden() -> None:
    log = (
        "hgx-9:6100:6100 [0] NCCL INFO cudaDriverVersion 12080\n"
        "[1,0]<stdout>:nid007109:24926:24990 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] via NET/AWS Libfabric\n"
        "#  Rank  0 Group  0 Pid    944 on inst-ks8ls-comp device  0 [0x0f] NVIDIA H200\n"
        "#  Rank  1 Pid 1756513 on <REDACTED> device  1 [0x25] NVIDIA GeForce RTX 4090\n"
    )
    r = Redactor()
    r.learn_text(log)
    redacted = r.text(log)
    for host in ("hgx-9", "nid007109", "inst-ks8ls-comp"):
        assert host not in redacted, host
    assert "host-1:6100:6100 [0] NCCL INFO cudaDriverVersion 12080" in redacted
    assert "on host-3 device  0 [0x0f] NVIDIA H200" in redacted and "<REDACTED>" in redacted


def test_a_utf16_capture_is_redacted_not_dropped_as_binary(tmp_path: Path) -> None:
    capture = "root@dgx-h100-07:~# nvidia-smi topo -m\r\n\tGPU0\tGPU1\r\nGPU0\t X \tNV18\r\nGPU1\tNV18\t X \r\n"
    write_bundle(rs.report_of(rs.split_machine()), tmp_path / "b", {"topo.txt": capture.encode("utf-16")}, redact=True)
    evidence = (tmp_path / "b" / "evidence" / "topo.txt").read_text()
    assert evidence.startswith("root@host-1:~# nvidia-smi topo -m") and "GPU0\t X \tNV18" in evidence
    assert "left out" not in evidence


LOG_WITH_HOST = Path(__file__).parent / "fixtures" / "nccltests" / "derived-8xh200-slow-busbw-scaled.txt"


@pytest.mark.parametrize(
    ("label", "encode"),
    [
        ("utf-16 without a mark", lambda text: text.encode("utf-16-le")),
        ("utf-16-be without a mark", lambda text: text.encode("utf-16-be")),
        ("utf-32 with its mark", lambda text: text.encode("utf-32")),
        ("utf-8 with its mark", lambda text: codecs.BOM_UTF8 + text.encode("utf-8")),
    ],
)
def test_every_encoding_analyze_reads_is_redacted_in_the_bundle_evidence(
    tmp_path: Path, label: str, encode: Callable[[str], bytes]
) -> None:
    """An nccl-tests log naming its host, in each encoding the analysis reads: with --redact, no file of
    the bundle names the host, and the evidence is kept as redacted text, not dropped."""
    text = LOG_WITH_HOST.read_text(encoding="utf-8")
    assert "inst-ks8ls-comp" in text
    capture = tmp_path / "run.txt"
    capture.write_bytes(encode(text))
    out = tmp_path / "bundle"
    done = subprocess.run(
        [sys.executable, "-m", "topoaudit", "analyze", str(capture), "--redact", "--out", str(out), "-o", os.devnull],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr  # the slow log fails; the bundle is written either way
    for path in out.rglob("*"):
        if path.is_file():
            raw = path.read_bytes()
            assert b"inst-ks8ls-comp" not in raw.replace(b"\x00", b""), (label, path.name)
    evidence = (out / "evidence" / "run.txt").read_text(encoding="utf-8")
    assert "left out" not in evidence and "Pid    944 on host-1 device  0 [0x0f] NVIDIA H200" in evidence


def test_binary_evidence_is_left_out_of_a_redacted_bundle(tmp_path: Path) -> None:
    """Data redaction cannot read (NUL bytes in valid UTF-8, or a BOM before binary) is replaced by a note."""
    evidence = {"dump.bin": b"node-7\x00\x01\x02 serial 1234", "odd.txt": codecs.BOM_UTF16_LE + bytes(range(256))}
    write_bundle(rs.report_of(rs.split_machine()), tmp_path / "b", evidence, redact=True)
    for name in ("dump.bin", "odd.txt"):
        kept = (tmp_path / "b" / "evidence" / name).read_text(encoding="utf-8")
        assert kept.startswith("[binary evidence") and "node-7" not in kept
