#!/usr/bin/env bash
# bench_whatif.sh [PIPER] [GRID] [OUTDIR]
# Runs the shipped what-if study (default jobs/grids/llama2-70b-whatif.tsv) with one
# `piper sweep`, prints its whole-process wall time and peak RSS (/usr/bin/time), then one
# line per cell read back from the row archives (`piper show --format json`): the plan's
# shape (stages as d x t), the layer variants it picked, time per batch, MFU.
# Latest output: bench/results-whatif.txt.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
piper=${1:-$src/build/piper}
grid=${2:-$src/jobs/grids/llama2-70b-whatif.tsv}
out=${3:-$(mktemp -d /tmp/piper-whatif.XXXXXX)}
[ -x "$piper" ] || { echo "no executable $piper (build first)" >&2; exit 1; }
command -v python3 > /dev/null || { echo "python3 is needed for the table" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"
echo "grid: ${grid#"$src"/}"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f '%e %M %U' -o "$out/time" "$piper" sweep "$grid" --out-dir "$out" --quiet > "$out/sweep.log"
read -r wall rss user < "$out/time"
echo "piper sweep: $(grep -c . "$out/sweep.log") lines; wall ${wall} s, peak RSS $((rss / 1024)) MiB, user ${user} s"
for h5 in "$out"/*.h5; do
  "$piper" show "$h5" --format json > "${h5%.h5}.show.json" 2> /dev/null || true
done
python3 - "$grid" "$out" << 'PY'
import json, os, sys
grid, out = sys.argv[1], sys.argv[2]
rows = []
with open(grid) as f:
    header = None
    for line in f:
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if header is None:
            header = fields
            continue
        rows.append(dict(zip(header, fields)))
short = {"vanilla": "none", "activation recomp": "full", "selective recomp": "sel",
         "seq parallel": "sp", "seq parallel + selective recomp": "sp+sel",
         "seq parallel + activation recomp": "sp+full"}
print()
print("| schedule | memory | ZeRO | devices | stages (d x t) | layer variants | time per batch (s) | MFU |")
print("|---|---|---|---|---|---|---|---|")
best = {}
for r in rows:
    flags = r["flags"].split(",")
    zero = next((int(f[4:]) for f in flags if f.startswith("zero")), 0)
    sched = next((f for f in flags if f in ("1f1b", "gpipe")), "2bw")
    path = os.path.join(out, r["name"] + ".show.json")
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        d = {"feasible": False}
    if not d.get("feasible"):
        print(f"| {sched} | {r['memory']} | {zero} | {r['devices']} | infeasible | | | |")
        continue
    shapes = []
    for s in d["stages"]:
        shape = f"{s['d']}x{s['t']}"
        if shapes and shapes[-1][0] == shape:
            shapes[-1][1] += 1
        else:
            shapes.append([shape, 1])
    shape = " ".join(f"{n}*{s}" if n > 1 else s for s, n in shapes)
    used = {}
    for s in d["stages"]:
        for v in s["tmpc"].values():
            k = short.get(v, v)
            used[k] = used.get(k, 0) + 1
    variants = ", ".join(f"{k} {n}" for k, n in sorted(used.items(), key=lambda x: -x[1]))
    batch = d.get("batch_time") or d["tps"] * int(r["microbatches"])
    mfu = d.get("mfu")
    print(f"| {sched} | {r['memory']} | {zero} | {r['devices']} | {len(d['stages'])}: {shape} | {variants} "
          f"| {batch:.4g} | {100 * mfu:.1f}% |" if mfu else "| n/a |")
    key = (sched, r["memory"], r["devices"])
    best.setdefault(key, {})[zero] = batch
print()
print("ZeRO: time per batch at level 0 / the best level (>1: sharding helped)")
for (sched, mem, k), z in best.items():
    if 0 in z:
        b = min(z, key=z.get)
        print(f"  {sched} {mem} {k} devices: best ZeRO {b}, {z[0] / z[b]:.3f}x")
    else:
        print(f"  {sched} {mem} {k} devices: infeasible without ZeRO; best ZeRO {min(z, key=z.get)}")
PY
echo "archives in $out"
