#!/bin/bash
# Whole-process wall time and peak RSS of one planner process on the reference
# cases GNMT k16, BERT k2048 and ResNet k32, next to the reference's CPU
# seconds from ../shared/reference/expected.tsv.  Prints figures; checks nothing.
# usage: bench/bench_single.sh [PIPER] [REPEATS]   (default build/piper, 1)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
P=$(realpath "${1:-$here/build/piper}")
R=${2:-1}
shared=$here/../shared
exp=$shared/reference/expected.tsv
[ -x "$P" ] || { echo "no executable $P" >&2; exit 1; }
[ -f "$exp" ] || { echo "no $exp" >&2; exit 1; }
echo "# piper: $P ($(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "# host: $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
printf '%-24s %4s %10s %10s %10s %12s %10s\n' case run wall_s user_s rss_MB ref_cpu_s speedup
for c in gnmt_k16_m1.2 bert32_k2048_m8_n1920 resnet_k32_m2; do
  IFS=$'\t' read -r _ input K M N B flags tps _ sec < <(grep -P "^$c\t" "$exp")
  for r in $(seq 1 "$R"); do
    t=$(mktemp)
    /usr/bin/time -v "$P" plan "$shared/$input" --devices "$K" --memory "$M" --microbatches "$N" \
      --bandwidth "$B" --quiet --no-archive --format json >/dev/null 2>"$t"
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s}' "$t")
    user=$(awk -F': ' '/User time/ {print $2}' "$t")
    rss=$(awk -F': ' '/Maximum resident/ {printf "%.1f", $2 / 1024}' "$t")
    rm -f "$t"
    printf '%-24s %4d %10.2f %10.2f %10s %12.2f %9.1fx\n' "$c" "$r" "$wall" "$user" "$rss" "$sec" \
      "$(echo "$sec / $wall" | bc -l)"
  done
done
