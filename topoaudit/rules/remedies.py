"""Remedy commands, each built from one template and typed values, never from text.

A finding whose cause lies on the host carries its repair as :class:`RemedyCommand` values: the template's name
(``action``) and the facts it needs (``params``: a PCI bus id, an NCCL variable the rules know, a kernel module or
service from a fixed set). The command line is made here, from the template, with every value checked against its
type. ``--format remedy`` calls :func:`rebuild` on each one, so a saved report (an attachment from anyone) can only
choose among these templates and feed them values of the right type: its ``command`` text is never printed to run.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from topoaudit.model.finding import RemedyCommand

PCI_BUS_ID = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")

# NCCL variables a rule may ask to remove: they switch a transport off, pin the path or tune it (NCCL's
# src/misc/param.cc prints each as "set by environment to"); anything else is not a name a remedy writes.
NCCL_VARIABLES = frozenset(
    ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", "NCCL_NVLS_ENABLE", "NCCL_ALGO",
     "NCCL_PROTO", "NCCL_NET", "NCCL_TOPO_FILE", "NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ", "NCCL_P2P_DIRECT_DISABLE",
     "NCCL_NVB_DISABLE", "NCCL_PXN_DISABLE", "NCCL_MNNVL_ENABLE", "NCCL_COLLNET_ENABLE", "NCCL_IGNORE_DISABLED_P2P",
     "NCCL_CUMEM_ENABLE", "NCCL_P2P_USE_CUDA_MEMCPY", "NCCL_P2P_READ_ENABLE", "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME",
     "NCCL_CROSS_NIC", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS", "NCCL_MAX_CTAS",
     "NCCL_BUFFSIZE", "NCCL_NTHREADS", "NCCL_LL128_ENABLE", "NCCL_NVLS_NCHANNELS", "NCCL_IB_GID_INDEX",
     "NCCL_IB_TC", "NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_SPLIT_DATA_ON_QPS",
     "NCCL_IB_ADAPTIVE_ROUTING", "NCCL_IB_PCI_RELAXED_ORDERING", "NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN",
     "NCCL_GRAPH_FILE", "NCCL_GRAPH_MIXING_SUPPORT", "NCCL_RUNTIME_CONNECT", "NCCL_LAUNCH_MODE",
     "NCCL_CHECK_POINTERS", "NCCL_NCHANNELS_PER_NET_PEER", "NCCL_SHM_USE_CUDA_MEMCPY", "NCCL_CUMEM_HOST_ENABLE",
     "NCCL_NVLSTREE_MAX_CHUNKSIZE", "NCCL_COMM_BLOCKING", "NCCL_SET_THREAD_NAME")
)  # fmt: skip
CUDA_VARIABLES = frozenset(("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"))
NCCL_CONF_FILES = frozenset(("/etc/nccl.conf",))
KERNEL_MODULES = {
    "nvidia_peermem": "the kernel module that lets the RDMA NICs read and write GPU memory (GPUDirect RDMA)",
    "ib_umad": "the InfiniBand management-datagram module through which the NVLink subnet manager of Blackwell "
    "HGX boards reaches the NVLink switches",
}
SERVICES = {
    "nvidia-fabricmanager": "NVIDIA's fabric manager, which registers the GPUs with the NVSwitch fabric (its version "
    "must match the driver's: `nvidia-smi` and `nv-fabricmanager --version`)",
}
PACKAGES = {
    "nvlsm": "the NVLink subnet manager, which the fabric manager service of Blackwell HGX boards starts first",
    "nvidia-fabricmanager": "the fabric manager",
}
# Where a variable of the user's environment is usually set, searched by the check a remedy prints (read only).
PROFILE_PLACES = (
    "/etc/environment /etc/profile /etc/profile.d /etc/bash.bashrc /etc/modulefiles /usr/share/modulefiles "
    "/root/.bashrc /root/.profile /home/*/.bashrc /home/*/.bash_profile /home/*/.profile"
)


class InvalidRemedy(ValueError):
    """A remedy whose template is unknown or whose values are not of their type: it is never printed to run."""


def _bus_id(value: str) -> str:
    value = value.lower()
    if not PCI_BUS_ID.fullmatch(value):
        raise InvalidRemedy(f"not a PCI bus id: {value[:40]!r}")
    return value


def _register16(value: str) -> str:
    try:
        number = int(value, 0) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise InvalidRemedy(f"not a 16-bit register value: {str(value)[:40]!r}") from None
    if not 0 <= number <= 0xFFFF:
        raise InvalidRemedy(f"not a 16-bit register value: {number}")
    return f"0x{number:04x}"


def _one_of(allowed: Mapping[str, object] | frozenset[str], what: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in allowed:
            raise InvalidRemedy(f"not {what} a remedy writes: {str(value)[:40]!r}")
        return value

    return check


def _variables(value: str) -> str:
    names = [n for n in value.split(",") if n]
    if not names:
        raise InvalidRemedy("no variable named")
    for name in names:
        _one_of(NCCL_VARIABLES, "an NCCL variable")(name)
    return ",".join(names)


def plain_text(text: object, limit: int = 300) -> str:
    """Text that can only ever be part of a comment: no control, format or line-separator character survives.

    C0 and C1 controls, DEL, U+2028/U+2029 and the bidirectional overrides (Unicode categories Cc, Cf, Zl, Zp)
    become spaces, so nothing in a report can end a comment line or make it display as something else.
    """
    cleaned = "".join("\0" if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in str(text))
    cleaned = re.sub("\0+", " ", cleaned).strip()
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def _text(value: str) -> str:
    return plain_text(value, 120)


@dataclass(frozen=True)
class RemedyTemplate:
    """One command a rule may print: its typed values and how the command, its effect and its undo are written."""

    action: str
    params: Mapping[str, Callable[[str], str]]
    command: Callable[[Mapping[str, str]], str]
    changes: Callable[[Mapping[str, str]], str]
    undo: Callable[[Mapping[str, str]], str] = lambda _: ""


def _acs_changes(p: Mapping[str, str]) -> str:
    from topoaudit.model.host_checks import acs_flags  # loaded only for a box with ACS facts, not for a plan

    control = int(p["control"], 16)
    bits = " ".join(acs_flags(control)) or "none"
    return f"clears the ACS control of bridge {p['bridge']} (now {control:#06x}: {bits}) until the next boot"


def _link_check_changes(p: Mapping[str, str]) -> str:
    where = f"physical slot {p['slot']}" if p.get("slot") else "its slot"
    return (
        f"changes nothing: shows the link {p['who']} ({p['device']}) can train to and the one it trained to; if "
        f"LnkSta stays below LnkCap under load, power off and reseat {p['who']} (card, riser or cable) in {where}"
    )


def _conf_script(p: Mapping[str, str]) -> str:
    return " ".join(f"-e '/^[[:space:]]*{n}[[:space:]]*=/d'" for n in p["variables"].split(","))


def _env_find_changes(p: Mapping[str, str]) -> str:
    return (
        f"changes nothing: {p['variable']}={p['value']} was set in the environment of the run (the job's, or the "
        "one topoaudit probed), and `unset` in "
        "this script would change only this script's own shell; this lists the profile and module files that set "
        "it, to delete there (a job script, a container spec or the scheduler may set it too)"
    )


TEMPLATES: dict[str, RemedyTemplate] = {
    t.action: t
    for t in (
        RemedyTemplate(
            "acs-clear",
            {"bridge": _bus_id, "control": _register16},
            lambda p: f"setpci -s {p['bridge']} ECAP_ACS+0x6.w=0000",
            _acs_changes,
            lambda p: f"setpci -s {p['bridge']} ECAP_ACS+0x6.w={p['control'][2:]}  # or reboot",
        ),
        RemedyTemplate(
            "pcie-link-check",
            {"device": _bus_id, "who": _text, "slot": _text},
            lambda p: f"lspci -vv -s {p['device']} | grep -E 'LnkCap:|LnkSta:' || true",
            _link_check_changes,
        ),
        RemedyTemplate(
            "module-load",
            {"module": _one_of(KERNEL_MODULES, "a kernel module")},
            lambda p: f"modprobe {p['module']}",
            lambda p: (
                f"loads {KERNEL_MODULES[p['module']]} until the next boot; NCCL programs started afterwards use it"
            ),
            lambda p: f"modprobe -r {p['module']}",
        ),
        RemedyTemplate(
            "module-load-at-boot",
            {"module": _one_of(KERNEL_MODULES, "a kernel module")},
            lambda p: f"echo {p['module']} > /etc/modules-load.d/{p['module'].replace('_', '-')}.conf",
            lambda p: f"loads {p['module']} at every boot (systemd-modules-load)",
            lambda p: f"rm /etc/modules-load.d/{p['module'].replace('_', '-')}.conf",
        ),
        RemedyTemplate(
            "service-start",
            {"service": _one_of(SERVICES, "a service")},
            lambda p: f"systemctl start {p['service']}",
            lambda p: f"starts {SERVICES[p['service']]}",
            lambda p: f"systemctl stop {p['service']}",
        ),
        RemedyTemplate(
            "service-enable",
            {"service": _one_of(SERVICES, "a service")},
            lambda p: f"systemctl enable {p['service']}",
            lambda p: f"starts {p['service']} at every boot",
            lambda p: f"systemctl disable {p['service']}",
        ),
        RemedyTemplate(
            "package-check",
            {"package": _one_of(PACKAGES, "a package")},
            lambda p: (
                f"dpkg-query -W {p['package']} 2>/dev/null || rpm -q {p['package']} 2>/dev/null || "
                f"echo '{p['package']} is not installed'"
            ),
            lambda p: (
                f"changes nothing: says whether {PACKAGES[p['package']]} ({p['package']}) is installed; "
                "install it from NVIDIA's repository, at the driver's version, if not"
            ),
        ),
        RemedyTemplate(
            "nccl-conf-delete",
            {"variables": _variables, "file": _one_of(NCCL_CONF_FILES, "an NCCL configuration file")},
            lambda p: f"sed -i.topoaudit.bak {_conf_script(p)} {p['file']}",
            lambda p: (
                f"deletes {', '.join(p['variables'].split(','))} from {p['file']}, which every NCCL program on "
                f"this host reads; the file as it was is kept as {p['file']}.topoaudit.bak"
            ),
            lambda p: f"mv {p['file']}.topoaudit.bak {p['file']}",
        ),
        RemedyTemplate(
            "environment-find",
            {"variable": _one_of(NCCL_VARIABLES | CUDA_VARIABLES, "a variable"), "value": _text},
            lambda p: f"grep -rnw -e {p['variable']} {PROFILE_PLACES} 2>/dev/null || true",
            _env_find_changes,
        ),
    )
}


def remedy(action: str, **values: object) -> RemedyCommand:
    """Write the command of template ``action`` for these values; InvalidRemedy when a value is not of its type."""
    return rebuild(RemedyCommand(action, {k: str(v) for k, v in values.items()}))


def rebuild(saved: RemedyCommand) -> RemedyCommand:
    """Write ``saved``'s command again from its template and its checked values, whatever text it carried.

    InvalidRemedy when the template is unknown, a value is missing, extra or not of its type.
    """
    template = TEMPLATES.get(saved.action)
    if template is None:
        raise InvalidRemedy(f"no template named {plain_text(saved.action, 40)!r}")
    if not isinstance(saved.params, Mapping) or set(saved.params) != set(template.params):
        raise InvalidRemedy(f"{saved.action}: the values are not {', '.join(sorted(template.params))}")
    try:
        params = {name: check(str(saved.params[name])) for name, check in template.params.items()}
    except InvalidRemedy as exc:
        raise InvalidRemedy(f"{saved.action}: {exc}") from None
    return RemedyCommand(
        saved.action, params, template.command(params), plain_text(template.changes(params)), template.undo(params)
    )
