#!/usr/bin/env bash
# Device check for the live probe, on a real NVIDIA box (expected: 1x H200).
# Installs topoaudit from the repo, runs `probe` and `audit`, keeps the raw nvidia-smi texts so the fakes
# can be compared with what NVML and nvidia-smi really answered. Writes everything under "$OUT".
# Finishes in well under 2 minutes. Run from the repository root:  OUT=/tmp/out bash tools/device/probe.sh
set -u
OUT="${OUT:-/tmp/topoaudit-probe-out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
export PYTHONWARNINGS=ignore
log="$OUT/steps.log"
step() { echo "== $* (exit/timing below)" >> "$log"; }

# 0. what is installed; install topoaudit without touching the environment's packages when possible
{
  echo "date: $(date -u +%FT%TZ)"; uname -a; "$PY" --version
  "$PY" -c "import importlib.metadata as m
for d in ('nvidia-ml-py','pynvml','networkx','rich','click','torch'):
    try: print(d, m.version(d))
    except m.PackageNotFoundError: print(d, 'MISSING')"
} > "$OUT/environment.txt" 2>&1
step "pip install -e . --no-deps"
timeout 120 "$PY" -m pip install -q -e . --no-deps >> "$log" 2>&1; echo "exit=$?" >> "$log"
# No dependency is installed here (the device may be offline): report what is missing and carry on.
for mod in networkx rich click pynvml; do
  "$PY" -c "import $mod" > /dev/null 2>&1 || echo "MISSING python module: $mod" >> "$log"
done
TA=("$PY" -m topoaudit)

# 1. raw texts, as the user would capture them
for args in "topo -m" "nvlink -s" "-q" "nvlink -e" "topo -p2p r" "-q -x"; do
  name="nvidia-smi-$(echo "$args" | tr ' ' '_' | tr -d '-')"
  start=$(date +%s.%N)
  timeout 60 nvidia-smi $args > "$OUT/$name.txt" 2> "$OUT/$name.stderr"
  echo "nvidia-smi $args: exit=$? wall_s=$(echo "$(date +%s.%N) - $start" | bc 2>/dev/null)" >> "$log"
done

# 2. the probe and the audit (JSON report; console report for reading)
step "topoaudit probe"
start=$(date +%s.%N)
timeout 120 "${TA[@]}" probe -o "$OUT/snapshot-h200.json" > "$OUT/probe.stdout" 2> "$OUT/probe.stderr"
echo "exit=$? wall_s=$(echo "$(date +%s.%N) - $start" | bc 2>/dev/null)" >> "$log"
step "topoaudit audit --format json"
timeout 120 "${TA[@]}" audit --format json > "$OUT/audit-h200.json" 2> "$OUT/audit.stderr"; echo "exit=$?" >> "$log"
step "topoaudit audit (console) --strict"
timeout 120 "${TA[@]}" audit --strict --no-color > "$OUT/audit-h200-console.txt" 2>&1; echo "exit=$?" >> "$log"
step "topoaudit analyze snapshot (must give the same verdict)"
timeout 60 "${TA[@]}" analyze "$OUT/snapshot-h200.json" --format json > "$OUT/analyze-snapshot-h200.json" 2>> "$log"
echo "exit=$?" >> "$log"
step "topoaudit audit --out bundle"
timeout 120 "${TA[@]}" audit --out "$OUT/bundle" --format json > /dev/null 2>> "$log"; echo "exit=$?" >> "$log"

# 3. one screen for the note: what NVML answered that the fakes may not have predicted
"$PY" - "$OUT/snapshot-h200.json" "$OUT/audit-h200.json" "$OUT/analyze-snapshot-h200.json" > "$OUT/summary.txt" 2>&1 <<'PYEOF'
import json, sys
snap = json.load(open(sys.argv[1]))
print("probe_wall_s", snap["probe_wall_s"], "notes", snap["notes"])
print("system", snap["system"], "binding", snap["nvml_binding_version"])
absent = lambda v: isinstance(v, dict) and v.get("status") in ("unsupported", "failed")
for g in snap["gpus"]:
    ports = g["nvlinks"]
    print("gpu", g["index"], g["name"], g["pci_bus_id"], g["architecture"], "mig", g["mig_mode"],
          "pcie", g["pcie_gen_current"], g["pcie_gen_max"], g["pcie_gen_gpu_max"], g["pcie_width_current"], g["pcie_width_max"],
          "util", g["utilization_percent"], "numa", g["numa_nodes"], "gpu_numa", g["gpu_numa_id"])
    print("  fabric", g["fabric_state"], g["fabric_status"], g["fabric_clique_id"], g["fabric_cluster_uuid"],
          "health", g.get("fabric_health_mask"), g.get("fabric_health_summary"))
    if isinstance(ports, list):
        print("  nvlink ports", len(ports), "states", sorted({str(p["state"]) for p in ports}))
        for p in ports[:3]:
            print("   ", p)
    else:
        print("  nvlinks", ports)
    print("  absent fields:", {k: v["reason"] for k, v in g.items() if absent(v)})
print("os", snap["os"])
# the host checks: virtualisation, RDMA ports, GPUDirect RDMA, the bridges above the GPU, kernel-log signatures
for key in ("virtualization", "virtualization_evidence", "gpudirect_rdma", "gpudirect_rdma_evidence", "rdma_ports",
            "kernel_events"):
    print("host check", key, snap["os"].get(key))
bridges = snap.get("pci_bridges")
for b in bridges if isinstance(bridges, list) else [bridges]:
    print("bridge", b)
print("env", snap["env"])
print("nics", snap["nics"])
print("commands", [(c["command"], c["exit_code"], c["wall_s"], "text" if isinstance(c["text"], str) else c["text"]) for c in snap["commands"]])
for name in sys.argv[2:]:
    try:
        r = json.load(open(name))
    except Exception as e:
        print(name, "unreadable", e); continue
    print(name, "verdict", r["verdict"], r["gate"], "domains", [d["gpus"] for d in r["domains"]])
    print("  findings", [(f["code"], f["severity"], f["message"]) for f in r["findings"]])
    print("  skipped", r["skipped"])
    print("  host.checks", json.dumps(r["host"].get("checks"))[:4000])
PYEOF
ls -la "$OUT" >> "$log"
