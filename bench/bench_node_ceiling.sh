#!/usr/bin/env bash
# Where the 2-rank wall time of one plan goes on this node, and the best
# 2-rank speed-up it allows.  For one reference case (default BERT-32,
# K=2048) it measures, median of REPEATS interleaved rounds (default 3):
#   startup    whole-process wall of the same input at K = 1 with 80 GiB
#              a device (so that a plan fits: a run that finds none ends in
#              the launcher's abort path, seconds long) under mpiexec -np 1
#              and -np 2, less the largest rank's DP (compute and exchange):
#              the launcher, MPI_Init, the set-up every rank repeats
#              (GNMT's: about 0.1 s) and MPI_Finalize;
#   contention user time of two serial runs started together, pinned to
#              the two cores, over one serial run alone (on each core in
#              turn: the medians are over both; shared caches and
#              memory bandwidth: a cost of the hardware, not of the split);
#   compute    the DP's compute and exchange seconds per rank at 1 and 2
#              ranks (PIPER_DEBUG_DIST), their sum over the ranks at 2
#              over the one rank's (the split's own overhead, contention
#              included);
#   wall       whole-process wall at 1 and 2 ranks, and the measured speed-up.
# Every 1-rank measure runs once on each core a round (see launch below).
# The ceiling is wall(1 rank) / (startup(2 ranks) + compute(1 rank) x
# contention / 2 + the rest of the 1-rank run outside the DP): a perfect
# split with a free exchange, on these two cores.
# usage: [REPEATS=3] [CASE=bert32_k2048_m8_n1920] bench/bench_node_ceiling.sh [PIPER]   (writes only a temp folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
piper=$(realpath "${1:-$here/../build/piper}")
repeats=${REPEATS:-3}
case=${CASE:-bert32_k2048_m8_n1920}
shared=$(realpath "$here/../../shared")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
IFS=$'\t' read -r _ input K M N B _ < <(grep -P "^$case\t" "$shared/reference/expected.tsv")
common=(--memory "$M" --microbatches "$N" --bandwidth "$B" --quiet --no-archive --format json)
now() { date +%s.%N; }
# wall of one command line, appended to $work/$1
timed() {
  local name=$1 t0 t1
  shift
  t0=$(now)
  "$@" </dev/null >/dev/null 2>"$work/err"
  t1=$(now)
  echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$work/$name"
}
# mpiexec for NP ranks; NP "1c1": one rank held to core 1 (one rank is
# bound to core 0 otherwise, and a vCPU here can run far slower than the
# other for minutes: the 1-rank figures are medians over both cores' runs)
launch() {
  if [ "$1" = 1c1 ]; then echo mpiexec -np 1 --cpu-set 1 --bind-to core; else echo mpiexec -np "$1"; fi
}
# compute, exchange: the largest rank's, and compute summed over the ranks
dist() {
  local np=${1%c*}
  # shellcheck disable=SC2046
  PIPER_DEBUG_DIST=1 timed "wall$np" $(launch "$1") "$piper" plan "$shared/$input" --devices "$K" "${common[@]}"
  awk '/^rank [0-9]+: compute/ { c = $4; x = $7; s += c; if (c > cm) cm = c; if (x > xm) xm = x }
       END { printf "%.3f %.3f %.3f\n", cm, xm, s }' "$work/err" >>"$work/dist$np"
}
# whole process at K = 1 less its DP (the largest rank's), appended to $work/start$1
startup() {
  local np=${1%c*}
  # shellcheck disable=SC2046
  PIPER_DEBUG_DIST=1 timed "k1.$np" $(launch "$1") "$piper" plan "$shared/$input" --devices 1 \
    "${common[@]}" --memory 85899345920
  awk -v w="$(tail -n 1 "$work/k1.$np")" '/^rank [0-9]+: compute/ { v = $4 + $7; if (v > m) m = v }
       END { printf "%.3f\n", w - m }' "$work/err" >>"$work/start$np"
}
user_of() { /usr/bin/time -f '%U' -o "$work/u.$1" taskset -c "$2" "$piper" plan "$shared/$input" --devices "$K" \
  "${common[@]}" </dev/null >/dev/null 2>&1; }
for ((i = 0; i < repeats; i++)); do
  startup 1
  startup 1c1
  startup 2
  timed serial "$piper" plan "$shared/$input" --devices "$K" "${common[@]}"
  user_of alone 0
  cat "$work/u.alone" >>"$work/alone"
  user_of alone 1
  cat "$work/u.alone" >>"$work/alone"
  user_of a 0 &
  user_of b 1
  wait
  cat "$work/u.a" "$work/u.b" >>"$work/pair"
  dist 1
  dist 1c1
  dist 2
done
med() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
col() { cut -d' ' -f"$2" "$work/$1" | med; }
s1=$(med <"$work/start1") s2=$(med <"$work/start2") ser=$(med <"$work/serial")
alone=$(med <"$work/alone") pair=$(med <"$work/pair")
c1=$(col dist1 1) x1=$(col dist1 2) c2=$(col dist2 1) x2=$(col dist2 2) sum2=$(col dist2 3)
w1=$(med <"$work/wall1") w2=$(med <"$work/wall2")
echo "# piper 2-rank ceiling, $case, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $("$piper" --version), median of $repeats interleaved rounds"
awk -v s1="$s1" -v s2="$s2" -v ser="$ser" -v al="$alone" -v pr="$pair" -v c1="$c1" -v x1="$x1" -v c2="$c2" \
  -v x2="$x2" -v sum2="$sum2" -v w1="$w1" -v w2="$w2" 'BEGIN {
  printf "startup_s        1 rank %.3f   2 ranks %.3f   (whole process at K = 1, less its DP)\n", s1, s2
  printf "serial_wall_s    %.3f   (no launcher)\n", ser
  printf "contention       %.3fx  (user time of two serial runs together %.3f s, alone %.3f s)\n", pr / al, pr, al
  printf "dp_1_rank_s      compute %.3f   exchange %.3f\n", c1, x1
  printf "dp_2_ranks_s     compute %.3f   exchange %.3f   (largest rank); compute summed %.3f = %.3fx the 1-rank compute\n", c2, x2, sum2, sum2 / c1
  rest = w1 - s1 - c1 - x1; if (rest < 0) rest = 0
  best = s2 + c1 * (pr / al) / 2 + rest
  printf "wall_s           1 rank %.3f   2 ranks %.3f   speed-up %.2fx\n", w1, w2, w1 / w2
  printf "ceiling          %.2fx  (2 ranks at best %.3f s: start-up %.3f + compute %.3f x contention %.3f / 2 + the rest %.3f)\n", w1 / best, best, s2, c1, pr / al, rest
}'
