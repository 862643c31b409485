#!/bin/bash
# Before/after on the same machine: whole-process wall time, CPU time (user +
# system) and peak RSS of two piper executables on the single-process
# reference cases GNMT K=16 and BERT-32 K=2048, runs interleaved (A B A B ...)
# so that load from other work falls on both alike; prints every run, then
# the medians, their ratio B/A and the median of the per-round ratios (each
# B run against the A run just before it: steadier when the machine's speed
# drifts during the series).  On a loaded machine the CPU time is the
# steadier measure (wall time then mostly measures the scheduler).
# With NP=n in the environment each run is `mpiexec -np n` (wall time of the
# whole job; CPU time summed over the ranks, peak RSS the largest rank's).
# Prints figures; checks nothing.
# usage: [NP=n] bench/bench_compare.sh PIPER_A PIPER_B [REPEATS [CASE...]]
#   (default 5 repeats of gnmt_k16_m1.2 and bert32_k2048_m8_n1920; a CASE is a
#   row of expected.tsv or gnmt_k128_m2.5, GNMT at K = 128 and 2.5 GiB)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
A=$(realpath "$1") B=$(realpath "$2") R=${3:-5}
shift $(($# < 3 ? $# : 3))
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(gnmt_k16_m1.2 bert32_k2048_m8_n1920)
exp=$here/../shared/reference/expected.tsv
for p in "$A" "$B"; do [ -x "$p" ] || { echo "no executable $p" >&2; exit 1; }; done
[ -f "$exp" ] || { echo "no $exp" >&2; exit 1; }
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo "# A: $A"
echo "# B: $B"
launch=()
if [ "${NP:-1}" -gt 1 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
  launch=(mpiexec --oversubscribe -np "$NP")
  echo "# each run: ${launch[*]}"
fi
echo "# host: $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
printf '%-24s %4s %4s %10s %10s %10s\n' case run exe wall_s cpu_s rss_MB
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for c in "${cases[@]}"; do
  if [ "$c" = gnmt_k128_m2.5 ]; then # not a reference row: GNMT at K = 128, 2.5 GiB
    input=piper-inputs/gnmt.json K=128 M=2.5GiB N=256 B_=26843545600
  else
    IFS=$'\t' read -r _ input K M N B_ flags _ _ _ < <(grep -P "^$c\t" "$exp")
  fi
  for r in $(seq 1 "$R"); do
    for x in A B; do
      exe=$A; [ $x = B ] && exe=$B
      /usr/bin/time -f '%e %U %S %M' -o "$work/t" "${launch[@]}" "$exe" plan "$here/../shared/$input" --devices "$K" --memory "$M" \
        --microbatches "$N" --bandwidth "$B_" --quiet --no-archive --format json >/dev/null 2>/dev/null </dev/null
      read -r wall user sys rss < <(tail -n 1 "$work/t") # after "Command exited with ..." of an infeasible row
      cpu=$(echo "$user + $sys" | bc -l)
      printf '%-24s %4d %4s %10.2f %10.2f %10.1f\n' "$c" "$r" "$x" "$wall" "$cpu" "$(echo "$rss / 1024" | bc -l)"
      echo "$wall" >>"$work/$c.$x.wall"
      echo "$cpu" >>"$work/$c.$x.cpu"
    done
  done
done
echo
printf '%-24s %6s %12s %12s %8s %10s\n' case of median_A_s median_B_s B/A pair_B/A
for c in "${cases[@]}"; do
  for m in wall cpu; do
    a=$(median <"$work/$c.A.$m") b=$(median <"$work/$c.B.$m")
    # ratios only where A's time is above the clock's 0.01 s resolution
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.3f", b / a; else printf "-" }')
    pair=$(paste "$work/$c.A.$m" "$work/$c.B.$m" | awk '$1 > 0 { printf "%.6f\n", $2 / $1 }' | median)
    printf '%-24s %6s %12.2f %12.2f %8s %10s\n' "$c" "$m" "$a" "$b" "$ratio" "$(printf '%.3f' "${pair:-0}" | sed 's/^0.000$/-/')"
  done
done
echo "# B/A: ratio of the medians; pair_B/A: median over the rounds of B's time over A's in the same round"
