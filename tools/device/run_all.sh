#!/usr/bin/env bash
# One device session for everything that needs a real NVIDIA GPU (lead runs it through the device tool):
# raw nvidia-smi texts, `topoaudit probe` / `audit` / `analyze snapshot` on the live box, probe timing,
# the GPU-marked tests, and the NCCL bench at world size 1 (tools/device/bench.sh).
# Everything lands in $OUT/device.tar.gz plus $OUT/summary.txt (the device tool returns at most 8 files).
set -u
OUT="${OUT:-/tmp/topoaudit-device-out}"
W=$(mktemp -d); mkdir -p "$W/smi" "$W/topoaudit" "$OUT"
export PYTHONPATH="$PWD" PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
PY=python3
say() { echo "== $*" | tee -a "$W/summary.txt"; }

say "host $(hostname) kernel $(uname -r) python $($PY -V 2>&1)"
$PY -c "import pynvml, networkx, rich, click, torch; print('nvidia-ml-py', getattr(pynvml, '__version__', '?'), 'torch', torch.__version__)" 2>&1 | tee -a "$W/summary.txt"

for args in "" "-q" "topo -m" "topo -p2p r" "topo -p2p w" "topo -p2p n" "nvlink -s" "nvlink -c" "nvlink -e" "-q -d PCIE" "-q -d FABRIC" "-q -x" "--version"; do
  name=$(echo "nvidia-smi $args" | tr ' ' '_' | tr -d '-')
  timeout 60 nvidia-smi $args > "$W/smi/$name.txt" 2>&1; echo "exit=$?" >> "$W/smi/$name.txt"
done
say "nvidia-smi topo -m:"; cat "$W/smi/nvidiasmi_topo_m.txt" | tee -a "$W/summary.txt"
ls /sys/class/infiniband /sys/class/nvidia* 2>&1 | head -20 > "$W/smi/sysfs-ls.txt"

say "probe (timed)"
s=$(date +%s%N)
timeout 120 $PY -m topoaudit probe -o "$W/topoaudit/snapshot-h200.json" 2> "$W/topoaudit/probe.stderr"; rc=$?
e=$(date +%s%N)
say "probe exit=$rc milliseconds=$(( (e - s) / 1000000 ))"
tail -5 "$W/topoaudit/probe.stderr" | tee -a "$W/summary.txt"

say "audit (json)"
timeout 120 $PY -m topoaudit audit --format json -o "$W/topoaudit/audit-h200.json" 2>&1 | tee -a "$W/summary.txt"; echo "audit exit=${PIPESTATUS[0]}" | tee -a "$W/summary.txt"
timeout 120 $PY -m topoaudit audit --no-color > "$W/topoaudit/audit-h200-console.txt" 2>&1; echo "audit console exit=$?" | tee -a "$W/summary.txt"
cat "$W/topoaudit/audit-h200-console.txt" | head -60 >> "$W/summary.txt"
timeout 120 $PY -m topoaudit audit --out "$W/topoaudit/bundle" --tp 1 > /dev/null 2>&1; echo "audit --out exit=$?" | tee -a "$W/summary.txt"
timeout 120 $PY -m topoaudit analyze "$W/topoaudit/snapshot-h200.json" --format json -o "$W/topoaudit/analyze-snapshot.json" 2>&1 | tee -a "$W/summary.txt"
$PY - "$W/topoaudit/audit-h200.json" "$W/topoaudit/analyze-snapshot.json" <<'PYEOF' 2>&1 | tee -a "$W/summary.txt"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print("live verdict", a["verdict"], a["gate"]["exit_code"], "| snapshot verdict", b["verdict"], b["gate"]["exit_code"])
print("findings live", sorted(f["code"] for f in a["findings"]), "snapshot", sorted(f["code"] for f in b["findings"]))
print("skipped", [s["rule"] for s in a["skipped"]])
g = a["gpus"][0]
print({k: g[k] for k in ("name", "pci_bus_id", "memory_total_bytes", "architecture", "numa_nodes", "pcie", "fabric")})
ports = g.get("nvlink_ports")
print("nvlink_ports", ports if not isinstance(ports, list) else f"{len(ports)} ports, first {ports[:2]}")
PYEOF

timeout 120 $PY -m topoaudit audit --strict > /dev/null 2>&1; echo "audit --strict exit=$?" | tee -a "$W/summary.txt"
say "audit --bench (NCCL, one rank, up to 64 MiB)"
timeout 150 $PY -m topoaudit audit --bench --backend nccl --max-bytes 64M --format json -o "$W/topoaudit/audit-bench-h200.json" 2>&1 | tail -3 | tee -a "$W/summary.txt"
$PY -c "
import json; d=json.load(open('$W/topoaudit/audit-bench-h200.json')); g=d['bench']['groups'][0]
print('verdict', d['verdict'], 'bench', d['bench']['status'], 'plateau', g['plateau_busbw_gbps'], 'p50/p99 us', g['latency_p50_us'], g['latency_p99_us'])
" 2>&1 | tee -a "$W/summary.txt"

say "GPU-marked tests"
timeout 120 $PY -m pytest -q -m gpu -p no:cacheprovider tests 2>&1 | tail -15 | tee -a "$W/summary.txt"

say "bench (NCCL, world size 1)"
OUT="$W/bench" bash tools/device/bench.sh > "$W/bench.log" 2>&1
cat "$W/bench/bench-nccl-ws1.exit" "$W/bench/summary.txt" 2>&1 | head -60 | tee -a "$W/summary.txt"

tar -czf "$OUT/device.tar.gz" -C "$W" .
cp "$W/summary.txt" "$OUT/summary.txt"
