#!/usr/bin/env bash
# Scaling over MPI ranks on this machine: for BERT-32 (K=2048, N=1920,
# M=8 GiB) and GNMT (K=16, N=256, M=1.2 GiB) at 1, 2 and 4 ranks, prints the
# whole-process wall time, the CPU time summed over ranks, the peak memory of
# the largest rank, the bytes the ranks exchanged, the archive write time and
# share of the run, and the archive size; then the ratios the targets speak of.
# Each configuration runs REPEATS times (default 3; environment) and the run
# with the smallest wall time is reported: the machine is noisy.
# usage: [REPEATS=3] bench/bench_scaling.sh [PIPER] [RANKS...]   (writes nothing but a temp folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
piper=$(realpath "${1:-$here/../build/piper}")
shift || true
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2 4)
shared=$(realpath "$here/../../shared")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "# piper scaling benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$piper" --version)"
printf '%-6s %5s %8s %8s %9s %12s %8s %7s %9s %9s %8s\n' case ranks wall_s cpu_s peak_MB exchanged_MB write_s write% archive_MB speedup cpu_ratio
repeats=${REPEATS:-3}
run() { # name ranks args...  -> the fastest of $repeats runs
  local name=$1 np=$2; shift 2
  local best="" i
  for ((i = 0; i < repeats; i++)); do
    local out=$work/$name-$np-$i
    /usr/bin/time -f '%e %U %S %M' -o "$out.time" \
      mpiexec -np "$np" "$piper" plan "$@" --quiet --format json --out "$out.h5" </dev/null >"$out.json" 2>"$out.err"
    read -r wall user sys rss <"$out.time"
    local cpu; cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN{print u+s}')
    local fields; fields=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["bytes_exchanged"], d["archive_seconds"])' "$out.json")
    local size; size=$(stat -c %s "$out.h5")
    local line="$name $np $wall $cpu $rss $fields $size"
    if [ -z "$best" ] || awk -v a="$wall" -v b="${best#* * }" 'BEGIN{exit !(a < b+0)}'; then best=$line; fi
    rm -f "$out.h5"
  done
  echo "$best"
}
declare -A W C
for c in bert gnmt; do
  for np in "${ranks[@]}"; do
    if [ $c = bert ]; then
      r=$(run bert "$np" "$shared/piper-inputs/bert32a100.json" --devices 2048 --memory 8GiB --microbatches 1920 --bandwidth 25GiB/s)
    else
      r=$(run gnmt "$np" "$shared/piper-inputs/gnmt.json" --devices 16 --memory 1288490188.8 --microbatches 256 --bandwidth 25GiB/s)
    fi
    read -r name n wall cpu rss bytes wt size <<<"$r"
    W[$c$n]=$wall; C[$c$n]=$cpu
    awk -v c="$c" -v n="$n" -v w="$wall" -v cpu="$cpu" -v rss="$rss" -v b="$bytes" -v wt="$wt" -v sz="$size" \
        -v w1="${W[${c}1]:-$wall}" -v c1="${C[${c}1]:-$cpu}" 'BEGIN{
      printf "%-6s %5d %8.2f %8.2f %9.1f %12.1f %8.2f %6.1f%% %9.2f %8.2fx %8.2fx\n",
        c, n, w, cpu, rss/1024, b/1e6, wt, 100*wt/w, sz/1e6, w1/w, cpu/c1}'
  done
done
echo "# speedup = wall(1 rank)/wall; cpu_ratio = summed CPU time / that of 1 rank; peak_MB = largest rank"
