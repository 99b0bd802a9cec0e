#!/usr/bin/env bash
# Device check for the all-reduce bench on a 1-GPU box: the NCCL sweep at world size 1, then a sweep stopped by
# SIGTERM (as Slurm's scancel or Kubernetes send) after its first measured row.
# Checks the CUDA-event timing path, device binding (set_device + device_id before the first collective)
# the report plumbing, and that a stopped NCCL run exits 130 with its rows and leaves no process behind;
# writes everything under "$OUT". Also: NCCL's log and dumps collected into a bundle, and the sweep's times
# with that collection and with the log quieted. Finishes in about 3 minutes.
# Run from the repository root:  OUT=/tmp/out bash tools/device/bench.sh
set -u
OUT="${OUT:-/tmp/topoaudit-bench-out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
export PYTHONWARNINGS=ignore
{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,pci.bus_id,driver_version,memory.total,memory.used --format=csv 2>&1
  "$PY" -c "import torch, torch.distributed as d; print('torch', torch.__version__, 'cuda', torch.version.cuda, \
'nccl', torch.cuda.nccl.version(), 'gpus', torch.cuda.device_count(), 'nccl_available', d.is_nccl_available())" 2>&1
} > "$OUT/environment.txt"

# 1. the sweep: 8 B .. 1 GiB, one rank, NCCL (JSON report + console report)
start=$(date +%s)
timeout 150 "$PY" -m topoaudit bench --backend nccl --nproc 1 --max-bytes 1G --timeout 30 \
  --format json -o "$OUT/bench-nccl-ws1.json" > "$OUT/bench-nccl-ws1.stdout" 2> "$OUT/bench-nccl-ws1.stderr"
echo "exit=$? wall_s=$(( $(date +%s) - start ))" > "$OUT/bench-nccl-ws1.exit"

# 2. SIGTERM after the first measured row: exit 130, the rows kept, no process of the run left after 5 s
setsid "$PY" -m topoaudit bench --backend nccl --nproc 1 --max-bytes 4G --timeout 30 --format json \
  -o "$OUT/bench-sigterm.json" > /dev/null 2> "$OUT/bench-sigterm.stderr" &
pid=$!
for _ in $(seq 1 600); do grep -q "measured (last:" "$OUT/bench-sigterm.stderr" && break; sleep 0.1; done
kill -TERM "$pid"
wait "$pid"
echo "exit=$?" > "$OUT/bench-sigterm.exit"
sleep 5
echo "left_running=$(pgrep -g "$pid" | wc -l)" >> "$OUT/bench-sigterm.exit"
"$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); b=d['bench']; print('gate', d['gate']['exit_code'], \
'status', b['status'], 'rows', sum(len(g['rows']) for g in b['groups']), 'codes', [f['code'] for f in d['findings']])" \
  "$OUT/bench-sigterm.json" >> "$OUT/bench-sigterm.exit" 2>&1
cat "$OUT/bench-sigterm.exit"

# 3. NCCL's view collected while measuring (the bundle's evidence/ gets the per-rank INFO log and the dumps;
#    the report's nccl field reads the log), then the same sweep with the log quieted by the user's own
#    NCCL_DEBUG=WARN (used as set): the two runs' times side by side show what the collection costs
for turn in 1 2; do
  timeout 60 "$PY" -m topoaudit bench --backend nccl --nproc 1 --max-bytes 16M --timeout 30 --format json \
    --out "$OUT/bench-collect-$turn" -o "$OUT/bench-collect-$turn.json" > /dev/null 2> "$OUT/bench-collect-$turn.stderr"
  NCCL_DEBUG=WARN timeout 60 "$PY" -m topoaudit bench --backend nccl --nproc 1 --max-bytes 16M --timeout 30 \
    --format json -o "$OUT/bench-quiet-$turn.json" > /dev/null 2> "$OUT/bench-quiet-$turn.stderr"
done
ls -l "$OUT"/bench-collect-1/evidence > "$OUT/collect.txt" 2>&1
"$PY" - "$OUT" >> "$OUT/collect.txt" 2>&1 <<'PYEOF'
import json, sys
out = sys.argv[1]
for turn in (1, 2):
    for kind in ("collect", "quiet"):
        doc = json.load(open(f"{out}/bench-{kind}-{turn}.json"))
        rows = doc["bench"]["groups"][0]["rows"]
        nccl = doc["nccl"]
        print(kind, turn, "nccl", nccl.get("status", "view"), nccl.get("version"), "transports",
              len(nccl.get("transports", [])), "notes", doc["bench"]["notes"])
        print("   us per size", [(r["size_bytes"], r["time_us"]) for r in rows])
PYEOF
cat "$OUT/collect.txt"

# 4. a one-screen summary for the note
"$PY" - "$OUT/bench-nccl-ws1.json" > "$OUT/summary.txt" 2>&1 <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1]))
b = doc["bench"]
print("verdict", doc["verdict"], "status", b["status"], "backend", b["backend"], "world", b["world_size"])
print("ranks", [(r["rank"], r["device"], r.get("name"), r.get("pci_bus_id")) for r in b["ranks"]])
print("env", b["environment"])
print("errors", b["errors"], "wall_s", b["wall_s"], "timed_s", b["timed_s"])
for g in b["groups"]:
    print("group", g["name"], "rows", len(g["rows"]), "plateau", g["plateau_busbw_gbps"], "lat p50/p99",
          g["latency_p50_us"], g["latency_p99_us"], "skipped", [s["size_bytes"] for s in g["skipped_sizes"]])
    for r in g["rows"]:
        print(f'  {r["size_bytes"]:>12} {r["time_us"]:>10.2f} us algbw {r["algbw_gbps"]:8.2f} wrong {r["wrong"]} '
              f'p99 {r["p99_us"]} calls {r["calls"]}')
print("findings", [(f["code"], f["message"]) for f in doc["findings"]])
PYEOF
cat "$OUT/summary.txt"
