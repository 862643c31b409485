#!/bin/bash
# Cost of the ZeRO and two-level-network options: whole-process wall time and
# peak RSS of one piper executable on GNMT K=16 and BERT-32 K=2048 (the
# single-process reference cases), without the options and with all of them
# (--zero 3 --devices-per-node 8 --intra-node-bandwidth 300GB/s), runs
# interleaved (off on off on ...) so that load from other work falls on both
# alike; prints every run, then the medians and the ratio on/off.
# The reference inputs carry no weightBytes/gradientBytes/optimizerBytes, so
# a copy of each gets them (optimizer 3/4, gradients 1/8, weights 1/8 of
# memoryUsageB, Adam in mixed precision) in a temporary folder.
# Prints figures; checks nothing.
# usage: bench/bench_options.sh [PIPER] [REPEATS] [CASES]   (default build/piper, 5,
#        "gnmt_k16_m1.2 bert32_k2048_m8_n1920")
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
P=$(realpath "${1:-$here/build/piper}")
R=${2:-5}
CASES=${3:-gnmt_k16_m1.2 bert32_k2048_m8_n1920}
exp=$here/../shared/reference/expected.tsv
[ -x "$P" ] || { echo "no executable $P" >&2; exit 1; }
[ -f "$exp" ] || { echo "no $exp" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed to add the fields" >&2; exit 1; }
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo "# piper: $P ($(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "# host: $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# on: --zero 3 --devices-per-node 8 --intra-node-bandwidth 300GB/s"
printf '%-24s %4s %4s %10s %10s %22s\n' case run opts wall_s rss_MB tps
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for c in $CASES; do
  IFS=$'\t' read -r _ input K M N B_ _ _ _ _ < <(grep -P "^$c\t" "$exp")
  python3 - "$here/../shared/$input" "$work/$c.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
for n in g["nodes"]:
    for lst in n["TMPCs"].values():
        for m in lst:
            b = m["memoryUsageB"]
            m["optimizerBytes"], m["gradientBytes"], m["weightBytes"] = 0.75 * b, 0.125 * b, 0.125 * b
json.dump(g, open(sys.argv[2], "w"))
PY
  for r in $(seq 1 "$R"); do
    for x in off on; do
      extra=()
      [ $x = on ] && extra=(--zero 3 --devices-per-node 8 --intra-node-bandwidth 300GB/s)
      /usr/bin/time -f '%e %M' -o "$work/t" "$P" plan "$work/$c.json" --devices "$K" --memory "$M" \
        --microbatches "$N" --bandwidth "$B_" "${extra[@]}" --quiet --no-archive --format json \
        >"$work/out" 2>/dev/null </dev/null
      read -r wall rss <"$work/t"
      tps=$(grep -o '"tps": [^,]*' "$work/out" | cut -d' ' -f2)
      printf '%-24s %4d %4s %10.2f %10.1f %22s\n' "$c" "$r" "$x" "$wall" "$(echo "$rss / 1024" | bc -l)" "$tps"
      echo "$wall" >>"$work/$c.$x"
    done
  done
done
echo "# medians (wall s): case off on on/off"
for c in $CASES; do
  a=$(median <"$work/$c.off") b=$(median <"$work/$c.on")
  printf '%-24s %10.2f %10.2f %8.2fx\n' "$c" "$a" "$b" "$(echo "$b / $a" | bc -l)"
done
