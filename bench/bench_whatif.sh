#!/usr/bin/env bash
# bench_whatif.sh [PIPER] [GRID] [OUTDIR]
# Runs the shipped what-if study (default jobs/grids/llama2-70b-whatif.tsv) with one
# `piper sweep`, prints its whole-process wall time and peak RSS (/usr/bin/time), then one
# line per cell read from the rows' plan reports (NAME.txt): the plan's
# shape (stages as d x t), the layer variants it picked, time per batch, MFU.
# Also says which row archives `piper show` refuses to read back.  Latest output:
# bench/results-whatif.txt.
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
refused=0
for h5 in "$out"/*.h5; do # every row archive must read back (show re-verifies it)
  if ! "$piper" show "$h5" > /dev/null 2> "$out/show.err"; then
    refused=$((refused + 1))
    echo "show refuses $(basename "$h5"): $(head -1 "$out/show.err" | sed 's/^piper: error: [^:]*: //')"
  fi
done
echo "archives show refuses: $refused"
python3 - "$grid" "$out" << 'PY'
import os, re, sys
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
print("| schedule | memory | ZeRO | devices | stages: d x t | layer variants (nodes) | time per batch (s) | MFU |")
print("|---|---|---|---|---|---|---|---|")
best = {}
for r in rows:
    flags = r["flags"].split(",")
    zero = next((int(f[4:]) for f in flags if f.startswith("zero")), 0)
    sched = next((f for f in flags if f in ("1f1b", "gpipe")), "2bw")
    try:
        text = open(os.path.join(out, r["name"] + ".txt")).read()
    except OSError:
        text = ""
    tps = re.search(r"^time per sample: (\S+) s", text, re.M)
    if not tps:
        why = "infeasible" if "no feasible plan" in text else "no result"
        print(f"| {sched} | {r['memory']} | {zero} | {r['devices']} | {why} | | | |")
        continue
    shapes = []
    for m in re.finditer(r"^ +\d+ +\S+ +\d+ +(\d+) +(\d+) +\d+ +\d+ ", text, re.M):
        shape = f"{m.group(1)}x{m.group(2)}"
        if shapes and shapes[-1][0] == shape:
            shapes[-1][1] += 1
        else:
            shapes.append([shape, 1])
    nst = sum(n for _, n in shapes)
    shape = " ".join(f"{n}*{s}" if n > 1 else s for s, n in shapes)
    used = re.search(r"^TMPCs used: (.*)$", text, re.M)
    variants = ""
    if used:
        parts = [p.rsplit(" x", 1) for p in used.group(1).split(", ")]
        parts.sort(key=lambda x: -int(x[1]))
        variants = ", ".join(f"{short.get(k, k)} {n}" for k, n in parts)
    bt = re.search(r"time per batch (\S+) s", text)
    batch = float(bt.group(1)) if bt else float(tps.group(1)) * int(r["microbatches"])
    mfu = re.search(r"MFU ([0-9.]+)%", text)
    print(f"| {sched} | {r['memory']} | {zero} | {r['devices']} | {nst}: {shape} | {variants} | {batch:.4g} | "
          f"{mfu.group(1) + '%' if mfu else 'n/a'} |")
    best.setdefault((sched, r["memory"], r["devices"]), {})[zero] = batch
print()
print("ZeRO: time per batch at level 0 / at the best level (> 1: sharding helped)")
for (sched, mem, k), z in best.items():
    b = min(z, key=z.get)
    if 0 in z:
        print(f"  {sched} {mem} {k} devices: best ZeRO {b}, {z[0] / z[b]:.3f}x")
    else:
        print(f"  {sched} {mem} {k} devices: no plan without ZeRO; best ZeRO {b}")
PY
echo "archives in $out"
