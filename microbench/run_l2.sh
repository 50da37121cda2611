#!/bin/bash
# L2 effective capacity and dirty-line write-back on one GPU (src/l2_capacity.cu), in one go.
# usage: microbench/run_l2.sh OUTDIR          (device tool: cd microbench && ./run_l2.sh "$OUT")
#        microbench/run_l2.sh --parse OUTDIR  (re-make OUTDIR/l2_results.json from OUTDIR/ncu.csv etc., no GPU)
# Writes OUTDIR/log.txt (build, nvidia-smi, ncu version, program output), OUTDIR/timing.jsonl (CUDA-event timing,
# L2 flushed by a 1 GiB read before each launch), OUTDIR/ncu.csv (Nsight Compute, --cache-control all,
# --clock-control none: clocks are never touched), OUTDIR/l2_results.json (merged).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
METRICS=dram__bytes_read.sum,dram__bytes_write.sum,gpc__cycles_elapsed.max,gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sector_op_read_hit_rate.pct

parse() {
python3 - "$1" <<'EOF'
import csv, json, re, sys, os
d = sys.argv[1]
log = open(os.path.join(d, "log.txt")).read() if os.path.exists(os.path.join(d, "log.txt")) else ""
plan = []
for line in open(os.path.join(d, "plan.txt")) if os.path.exists(os.path.join(d, "plan.txt")) else []:
    p = line.split()
    if p and p[0] == "PLAN":
        plan.append(dict(idx=int(p[1]), kernel=p[2], F=int(p[3]), R=int(p[4]), W=int(p[5]), rep=int(p[6])))
rows = []
if os.path.exists(os.path.join(d, "ncu.csv")):
    lines = [l for l in open(os.path.join(d, "ncu.csv")) if l.startswith('"')]
    rd = list(csv.reader(lines))
    hdr = rd[0]
    body = [r for r in rd[1:] if r and r[0] not in ("", "ID") and re.match(r"^\d+$", r[0])]
    col = {h: i for i, h in enumerate(hdr)}
    for r in body:
        rows.append({h: r[col[h]] for h in hdr})
def num(s):
    try: return float(s.replace(",", ""))
    except Exception: return None
tim = {}
if os.path.exists(os.path.join(d, "timing.jsonl")):
    for l in open(os.path.join(d, "timing.jsonl")):
        t = json.loads(l)
        tim[(t["kernel"], t.get("F", 0), t.get("R", 0), t.get("W", 0))] = t
res = []
if len(rows) != len(plan):
    print(f"WARNING: {len(rows)} ncu rows vs {len(plan)} planned launches", file=sys.stderr)
for p, r in zip(plan, rows):
    kn = r.get("Kernel Name", "")
    if not kn.startswith(p["kernel"]):
        print(f"WARNING: plan {p} vs ncu kernel {kn}", file=sys.stderr)
    e = dict(experiment="reuse" if p["kernel"].startswith("reread") else "writeback", kernel=p["kernel"], rep=p["rep"])
    if e["experiment"] == "reuse": e["F"] = p["F"]
    else: e["R"], e["W"] = p["R"], p["W"]
    e["dram_read_bytes"] = num(r.get("dram__bytes_read.sum", ""))
    e["dram_write_bytes"] = num(r.get("dram__bytes_write.sum", ""))
    e["cycles"] = num(r.get("gpc__cycles_elapsed.max", ""))
    e["duration_ns"] = num(r.get("gpu__time_duration.sum", ""))
    e["l2_read_sectors"] = num(r.get("lts__t_sectors_op_read.sum", ""))
    e["l2_write_sectors"] = num(r.get("lts__t_sectors_op_write.sum", ""))
    e["l2_read_hit_pct"] = num(r.get("lts__t_sector_op_read_hit_rate.pct", ""))
    t = tim.get((p["kernel"], p["F"], p["R"], p["W"]))
    if t: e["event_duration_ns_median_flushed"] = t["duration_ns_median"]
    res.append(e)
def grab(pat):
    m = re.search(pat, log, re.M); return m.group(1).strip() if m else None
out = dict(schema="warpgraph-microbench-l2/1",
           provenance=dict(gpu=grab(r"^DEVICE (.*)$"), ncu_version=grab(r"^(Version .*)$"),
                           nvcc=grab(r"(release [\d.]+, V[\d.]+)"), driver=grab(r"Driver Version:\s*([\d.]+)"),
                           clocks_before=grab(r"^CLOCKS_BEFORE (.*)$"), clocks_after=grab(r"^CLOCKS_AFTER (.*)$"),
                           date_utc=grab(r"^DATE (.*)$"),
                           ncu_flags="--clock-control none --cache-control all --metrics " + os.environ.get("METRICS", ""),
                           sizes="F, R, W in bytes (MiB multiples)"),
           results=res, timing_only=list(tim.values()))
json.dump(out, open(os.path.join(d, "l2_results.json"), "w"), indent=1)
print(f"{'kernel':15s} {'F/R/W MiB':>11s} {'rd/F':>6s} {'rdMiB':>8s} {'wrMiB':>8s} {'wr/W':>6s} {'cyc':>9s} {'ns':>9s} {'hit%':>6s}")
for e in res:
    if e["rep"] != 0: continue
    sz = e.get("F") or e.get("R") or 1
    key = f"{e['F']>>20}" if "F" in e else f"{e['R']>>20}/{e['W']>>20}"
    rd = e["dram_read_bytes"] or 0; wr = e["dram_write_bytes"] or 0
    print(f"{e['kernel']:15s} {key:>11s} {rd/sz:6.3f} {rd/2**20:8.2f} {wr/2**20:8.2f} {(wr/e['W'] if e.get('W') else 0):6.3f} {e['cycles'] or 0:9.0f} {e['duration_ns'] or 0:9.0f} {e['l2_read_hit_pct'] or 0:6.1f}")
EOF
}

if [ "${1:-}" = "--parse" ]; then METRICS=$METRICS parse "$(readlink -f "$2")"; exit; fi
OUTDIR=$(readlink -f "${1:-${OUT:-out}}")
mkdir -p "$OUTDIR" "$HERE/build"
cd "$HERE"
LOG=$OUTDIR/log.txt
{
  echo "DATE $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi
  echo "CLOCKS_BEFORE $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader)"
  nvcc --version
} > "$LOG" 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "NCU ${NCU:-missing}" >> "$LOG"
[ -n "$NCU" ] && "$NCU" --version >> "$LOG" 2>&1
echo "== build"
nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -lineinfo -o build/l2_capacity src/l2_capacity.cu >> "$LOG" 2>&1 \
  || { tail -20 "$LOG"; exit 1; }
echo "== timing"
timeout 60 ./build/l2_capacity time "$OUTDIR/timing.jsonl" >> "$LOG" 2>&1; echo "timing rc=$?" | tee -a "$LOG"
if [ -n "$NCU" ]; then
  echo "== ncu"
  timeout 240 "$NCU" --clock-control none --cache-control all -k regex:'^(reread|stream_rw)' --metrics "$METRICS" \
    --csv --page raw --print-units base --log-file "$OUTDIR/ncu.csv" ./build/l2_capacity ncu > "$OUTDIR/plan.txt" 2>>"$LOG"
  echo "ncu rc=$?" | tee -a "$LOG"
  cat "$OUTDIR/plan.txt" >> "$LOG"
fi
echo "CLOCKS_AFTER $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader)" >> "$LOG"
grep -E "^(DEVICE|CLOCKS|NCU|Version)|CHECK|error|ERROR" "$LOG"
METRICS=$METRICS parse "$OUTDIR"
