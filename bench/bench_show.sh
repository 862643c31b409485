#!/usr/bin/env bash
# What opening a large archive costs: whole-process wall time and peak RSS
# of `piper show` on the archive of Llama 3.1 405B (`piper gen llama3.1-405b
# --gpu h100-80gb`, global batch 2,048) planned under --schedule 1f1b, at
# each device count of DEVICES (default "4096 16384").  `show` reads every
# table and checks it (src/core/dp_front_rows.c) before it answers.  The
# archive is planned once by PIPER_B; with PIPER_A too the two executables'
# `show` of it run interleaved, REPEATS rounds (default 3), and the ratio
# of the medians is printed.  Prints figures; checks nothing.
# usage: [DEVICES="K ..."] bench/bench_show.sh [PIPER_A] PIPER_B [REPEATS]   (writes only a temp folder)
set -euo pipefail
if [ $# -ge 2 ] && [ -x "$2" ]; then
  A=$(realpath "$1") B=$(realpath "$2") R=${3:-3}
else
  A="" B=$(realpath "${1:-$(dirname "$0")/../build/piper}") R=${2:-3}
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo "# piper show of large 1f1b archives, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# B: $B${A:+; A: $A}; median of $R interleaved rounds"
printf '%-8s %-4s %10s %10s %10s %10s\n' devices exe plan_s show_s peak_MB archive_MB
for K in ${DEVICES:-4096 16384}; do
  "$B" gen llama3.1-405b --gpu h100-80gb --devices "$K" --global-batch 2048 -o "$work/in.json" >/dev/null
  /usr/bin/time -f '%e' -o "$work/plan" "$B" plan "$work/in.json" --schedule 1f1b --quiet \
    --out "$work/x.h5" --force >/dev/null
  mb=$(awk -v b="$(stat -c %s "$work/x.h5")" 'BEGIN { printf "%.1f", b / 1e6 }')
  exes=(B)
  [ -n "$A" ] && exes=(A B)
  for e in "${exes[@]}"; do : >"$work/$e.wall"; : >"$work/$e.rss"; done
  for ((i = 0; i < R; i++)); do
    for e in "${exes[@]}"; do
      exe=$B
      [ "$e" = A ] && exe=$A
      /usr/bin/time -f '%e %M' -o "$work/t" "$exe" show "$work/x.h5" >/dev/null
      read -r w m <"$work/t"
      echo "$w" >>"$work/$e.wall"
      echo "$m" >>"$work/$e.rss"
    done
  done
  for e in "${exes[@]}"; do
    printf '%-8s %-4s %10s %10s %10.1f %10s\n' "$K" "$e" "$(cat "$work/plan")" "$(median <"$work/$e.wall")" \
      "$(echo "$(median <"$work/$e.rss") / 1024" | bc -l)" "$mb"
  done
  if [ -n "$A" ]; then
    awk -v a="$(median <"$work/A.wall")" -v b="$(median <"$work/B.wall")" -v K="$K" \
      'BEGIN { printf "%-8s show B/A = %.3f\n", K, b / a }'
  fi
done
echo "# plan_s: B's plan with the archive (once); show_s: whole process; peak_MB: show's peak RSS"
