"""Each remedy template as the script prints it: the command, what it changes, its undo, and the values it was
written from; and the exact reason a value that is not of its type is left out (the script prints that reason)."""

from __future__ import annotations

import pytest

from topoaudit.model.finding import RemedyCommand
from topoaudit.rules.remedies import PROFILE_PLACES, TEMPLATES, InvalidRemedy, plain_text, rebuild, remedy

# action, values given -> command, changes, undo, the values kept in the report
WRITTEN: list[tuple[str, dict[str, str], str, str, str, dict[str, str]]] = [
    (
        "acs-clear",
        {"bridge": "0000:00:1F.7", "control": "29"},
        "setpci -s 0000:00:1f.7 ECAP_ACS+0x6.w=0000",
        "clears the ACS control of bridge 0000:00:1f.7 (now 0x001d: SrcValid ReqRedir CmpltRedir UpstreamFwd) "
        "until the next boot",
        "setpci -s 0000:00:1f.7 ECAP_ACS+0x6.w=001d  # or reboot",
        {"bridge": "0000:00:1f.7", "control": "0x001d"},
    ),
    (
        "acs-clear",
        {"bridge": "00ff:03:00.0", "control": "0"},
        "setpci -s 00ff:03:00.0 ECAP_ACS+0x6.w=0000",
        "clears the ACS control of bridge 00ff:03:00.0 (now 0x0000: none) until the next boot",
        "setpci -s 00ff:03:00.0 ECAP_ACS+0x6.w=0000  # or reboot",
        {"bridge": "00ff:03:00.0", "control": "0x0000"},
    ),
    (
        "acs-clear",
        {"bridge": "0000:00:01.0", "control": "0xFFFF"},
        "setpci -s 0000:00:01.0 ECAP_ACS+0x6.w=0000",
        "clears the ACS control of bridge 0000:00:01.0 (now 0xffff: SrcValid TransBlk ReqRedir CmpltRedir "
        "UpstreamFwd EgressCtrl DirectTrans) until the next boot",
        "setpci -s 0000:00:01.0 ECAP_ACS+0x6.w=ffff  # or reboot",
        {"bridge": "0000:00:01.0", "control": "0xffff"},
    ),
    (
        "pcie-link-check",
        {"device": "0000:1B:00.0", "who": "GPU1", "slot": "2"},
        "lspci -vv -s 0000:1b:00.0 | grep -E 'LnkCap:|LnkSta:' || true",
        "changes nothing: shows the link GPU1 (0000:1b:00.0) can train to and the one it trained to; if LnkSta "
        "stays below LnkCap under load, power off and reseat GPU1 (card, riser or cable) in physical slot 2",
        "",
        {"device": "0000:1b:00.0", "who": "GPU1", "slot": "2"},
    ),
    (
        "pcie-link-check",
        {"device": "0000:1b:00.0", "who": "the switch uplink", "slot": ""},
        "lspci -vv -s 0000:1b:00.0 | grep -E 'LnkCap:|LnkSta:' || true",
        "changes nothing: shows the link the switch uplink (0000:1b:00.0) can train to and the one it trained to; "
        "if LnkSta stays below LnkCap under load, power off and reseat the switch uplink (card, riser or cable) "
        "in its slot",
        "",
        {"device": "0000:1b:00.0", "who": "the switch uplink", "slot": ""},
    ),
    (
        "module-load",
        {"module": "nvidia_peermem"},
        "modprobe nvidia_peermem",
        "loads the kernel module that lets the RDMA NICs read and write GPU memory (GPUDirect RDMA) until the next "
        "boot; NCCL programs started afterwards use it",
        "modprobe -r nvidia_peermem",
        {"module": "nvidia_peermem"},
    ),
    (
        "module-load-at-boot",
        {"module": "ib_umad"},
        "echo ib_umad > /etc/modules-load.d/ib-umad.conf",
        "loads ib_umad at every boot (systemd-modules-load)",
        "rm /etc/modules-load.d/ib-umad.conf",
        {"module": "ib_umad"},
    ),
    (
        "service-start",
        {"service": "nvidia-fabricmanager"},
        "systemctl start nvidia-fabricmanager",
        "starts NVIDIA's fabric manager, which registers the GPUs with the NVSwitch fabric (its version must match "
        "the driver's: `nvidia-smi` and `nv-fabricmanager --version`)",
        "systemctl stop nvidia-fabricmanager",
        {"service": "nvidia-fabricmanager"},
    ),
    (
        "service-enable",
        {"service": "nvidia-fabricmanager"},
        "systemctl enable nvidia-fabricmanager",
        "starts nvidia-fabricmanager at every boot",
        "systemctl disable nvidia-fabricmanager",
        {"service": "nvidia-fabricmanager"},
    ),
    (
        "package-check",
        {"package": "nvlsm"},
        "dpkg-query -W nvlsm 2>/dev/null || rpm -q nvlsm 2>/dev/null || echo 'nvlsm is not installed'",
        "changes nothing: says whether the NVLink subnet manager, which the fabric manager service of Blackwell HGX "
        "boards starts first (nvlsm) is installed; install it from NVIDIA's repository, at the driver's version, "
        "if not",
        "",
        {"package": "nvlsm"},
    ),
    (
        "nccl-conf-delete",
        {"variables": "NCCL_IB_DISABLE,,NCCL_P2P_DISABLE,", "file": "/etc/nccl.conf"},
        "sed -i.topoaudit.bak -e '/^[[:space:]]*NCCL_IB_DISABLE[[:space:]]*=/d' "
        "-e '/^[[:space:]]*NCCL_P2P_DISABLE[[:space:]]*=/d' /etc/nccl.conf",
        "deletes NCCL_IB_DISABLE, NCCL_P2P_DISABLE from /etc/nccl.conf, which every NCCL program on this host reads; "
        "the file as it was is kept as /etc/nccl.conf.topoaudit.bak",
        "mv /etc/nccl.conf.topoaudit.bak /etc/nccl.conf",
        {"variables": "NCCL_IB_DISABLE,NCCL_P2P_DISABLE", "file": "/etc/nccl.conf"},
    ),
    (
        "environment-find",
        {"variable": "CUDA_VISIBLE_DEVICES", "value": "0,1"},
        f"grep -rnw -e CUDA_VISIBLE_DEVICES {PROFILE_PLACES} 2>/dev/null || true",
        "changes nothing: CUDA_VISIBLE_DEVICES=0,1 was set in the environment of the run (the job's, or the one "
        "topoaudit probed), and `unset` in this script would change only this script's own shell; this lists the "
        "profile and module files that set it, to delete there (a job script, a container spec or the scheduler "
        "may set it too)",
        "",
        {"variable": "CUDA_VISIBLE_DEVICES", "value": "0,1"},
    ),
]


@pytest.mark.parametrize(("action", "values", "command", "changes", "undo", "kept"), WRITTEN)
def test_each_template_writes_the_command_its_effect_and_its_undo(
    action: str, values: dict[str, str], command: str, changes: str, undo: str, kept: dict[str, str]
) -> None:
    assert remedy(action, **values) == RemedyCommand(action, kept, command, changes, undo)


def test_every_template_is_written_out_above() -> None:
    assert {row[0] for row in WRITTEN} | {"module-load", "package-check"} == set(TEMPLATES)


@pytest.mark.parametrize(("module", "what"), [("ib_umad", "the InfiniBand management-datagram module")])
def test_the_second_kernel_module_is_named_by_what_it_does(module: str, what: str) -> None:
    made = remedy("module-load", module=module)
    assert (made.command, made.undo) == ("modprobe ib_umad", "modprobe -r ib_umad")
    assert made.changes.startswith(f"loads {what} through which") and "until the next boot" in made.changes


def test_a_value_is_written_from_its_text_whatever_its_python_type() -> None:
    assert remedy("acs-clear", bridge="0000:00:01.0", control=29).params["control"] == "0x001d"


@pytest.mark.parametrize(
    ("control", "kept"), [("0", "0x0000"), ("0xffff", "0xffff"), ("65535", "0xffff"), ("0o17", "0x000f")]
)
def test_a_16_bit_register_value_is_read_in_any_base_up_to_its_bounds(control: str, kept: str) -> None:
    assert remedy("acs-clear", bridge="0000:00:01.0", control=control).params["control"] == kept


# action, values -> the reason the script prints after "left out, not a command topoaudit writes: "
REFUSED: list[tuple[str, object, str]] = [
    ("acs-clear", {"bridge": "0000:00:01.0", "control": "0x10000"}, "acs-clear: not a 16-bit register value: 65536"),
    ("acs-clear", {"bridge": "0000:00:01.0", "control": "-1"}, "acs-clear: not a 16-bit register value: -1"),
    (
        "acs-clear",
        {"bridge": "0000:00:01.0", "control": "0x1d; reboot"},
        "acs-clear: not a 16-bit register value: '0x1d; reboot'",
    ),
    (
        "acs-clear",
        {"bridge": "0000:00:01.0", "control": "1" * 50},
        f"acs-clear: not a 16-bit register value: {int('1' * 50)}",
    ),
    (
        "acs-clear",
        {"bridge": "0000:00:01.0", "control": "x" * 50},
        f"acs-clear: not a 16-bit register value: {'x' * 40!r}",
    ),
    (
        "acs-clear",
        {"bridge": "0000:00:01.0; REBOOT" + "X" * 40, "control": "1"},
        f"acs-clear: not a PCI bus id: {('0000:00:01.0; reboot' + 'x' * 20)!r}",
    ),
    ("acs-clear", {"bridge": "0000:00:01", "control": "1"}, "acs-clear: not a PCI bus id: '0000:00:01'"),
    ("module-load", {"module": "nvidia"}, "module-load: not a kernel module a remedy writes: 'nvidia'"),
    (
        "module-load",
        {"module": "m" * 50},
        f"module-load: not a kernel module a remedy writes: {'m' * 40!r}",
    ),
    ("service-start", {"service": "sshd"}, "service-start: not a service a remedy writes: 'sshd'"),
    ("package-check", {"package": "bash"}, "package-check: not a package a remedy writes: 'bash'"),
    (
        "environment-find",
        {"variable": "LD_PRELOAD", "value": "x"},
        "environment-find: not a variable a remedy writes: 'LD_PRELOAD'",
    ),
    (
        "nccl-conf-delete",
        {"variables": "NCCL_P2P_DISABLE,BASH_ENV", "file": "/etc/nccl.conf"},
        "nccl-conf-delete: not an NCCL variable a remedy writes: 'BASH_ENV'",
    ),
    ("nccl-conf-delete", {"variables": ",,", "file": "/etc/nccl.conf"}, "nccl-conf-delete: no variable named"),
    (
        "nccl-conf-delete",
        {"variables": "NCCL_" + "X" * 50, "file": "/etc/nccl.conf"},
        f"nccl-conf-delete: not an NCCL variable a remedy writes: {'NCCL_' + 'X' * 35!r}",
    ),
    (
        "nccl-conf-delete",
        {"variables": "NCCL_P2P_DISABLE", "file": "/etc/passwd"},
        "nccl-conf-delete: not an NCCL configuration file a remedy writes: '/etc/passwd'",
    ),
    ("module-load", {}, "module-load: the values are not module"),
    ("module-load", {"module": "nvidia_peermem", "x": "1"}, "module-load: the values are not module"),
    ("acs-clear", {"bridge": "0000:00:01.0"}, "acs-clear: the values are not bridge, control"),
    ("acs-clear", ["bridge", "control"], "acs-clear: the values are not bridge, control"),
    ("shell", {"line": "reboot"}, "no template named 'shell'"),
    ("shell\n" + "s" * 50, {}, f"no template named {'shell ' + 's' * 33 + '…'!r}"),
]


@pytest.mark.parametrize(("action", "params", "reason"), REFUSED)
def test_a_value_not_of_its_type_is_refused_with_the_reason_the_script_prints(
    action: str, params: object, reason: str
) -> None:
    with pytest.raises(InvalidRemedy) as refused:
        rebuild(RemedyCommand(action, params, "reboot"))  # type: ignore[arg-type]
    assert str(refused.value) == reason


@pytest.mark.parametrize(
    ("text", "limit", "shown"),
    [
        ("a" * 300, None, "a" * 300),
        ("a" * 301, None, "a" * 299 + "…"),
        ("a" * 41, 40, "a" * 39 + "…"),
        ("  a\n\r\x00\u2028b\t ", None, "a b"),
        (1234, None, "1234"),
    ],
)
def test_report_text_is_one_line_and_cut_at_its_limit(text: object, limit: int | None, shown: str) -> None:
    assert (plain_text(text) if limit is None else plain_text(text, limit)) == shown


@pytest.mark.parametrize(("who", "shown"), [("G" * 120, "G" * 120), ("G" * 121, "G" * 119 + "…")])
def test_a_name_in_a_command_s_text_is_cut_at_120_characters(who: str, shown: str) -> None:
    made = remedy("pcie-link-check", device="0000:1b:00.0", who=who, slot="2")
    assert made.params["who"] == shown
    assert made.changes.startswith(f"changes nothing: shows the link {shown} (0000:1b:00.0)")


@pytest.mark.parametrize("action", sorted(TEMPLATES))
def test_what_a_command_changes_is_never_cut_short_even_with_its_longest_values(action: str) -> None:
    """The environment-find text with any value ended "a container spec or the…" before the bound was raised."""
    longest = {
        "bridge": "0000:00:01.0",
        "device": "0000:1b:00.0",
        "control": "0xffff",
        "who": "w" * 120,
        "slot": "s" * 120,
        "value": "v" * 120,
        "variable": "NCCL_NVLSTREE_MAX_CHUNKSIZE",
        "variables": "NCCL_NVLSTREE_MAX_CHUNKSIZE,NCCL_P2P_DISABLE",
        "file": "/etc/nccl.conf",
        "module": "nvidia_peermem",
        "service": "nvidia-fabricmanager",
        "package": "nvlsm",
    }
    made = remedy(action, **{name: longest[name] for name in TEMPLATES[action].params})
    assert not made.changes.endswith("…")
    assert made.changes == " ".join(TEMPLATES[action].changes(made.params).split())
