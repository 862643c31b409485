#!/usr/bin/env bash
# Scaling over MPI ranks on this machine: for BERT-32 (K=2048, N=1920,
# M=8 GiB) and GNMT (K=16, N=256, M=1.2 GiB) at 1 and 2 ranks (or RANKS), prints the
# whole-process wall time, the CPU time summed over ranks, the peak memory of
# the largest rank, the bytes the ranks received from each other, the archive
# write time and share of the run, and the archive size; then the ratios the
# targets speak of.  The machine is noisy: every configuration runs REPEATS
# times (default 5), interleaved round by round so that all see the same
# conditions, and the medians are reported, with the 1-minute load average
# before and after (a speed-up measured at a load above the core count means
# little: see bench_node.sh's cpu_spd for a load-independent estimate).
# usage: [REPEATS=5] bench/bench_scaling.sh [PIPER] [RANKS...]   (writes only a temp folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
piper=$(realpath "${1:-$here/../build/piper}")
shift || true
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
repeats=${REPEATS:-5}
shared=$(realpath "$here/../../shared")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args_bert=("$shared/piper-inputs/bert32a100.json" --devices 2048 --memory 8GiB --microbatches 1920 --bandwidth 25GiB/s)
args_gnmt=("$shared/piper-inputs/gnmt.json" --devices 16 --memory 1288490188.8 --microbatches 256 --bandwidth 25GiB/s)
# one run: appends "wall cpu rss bytes write_s size" to $work/CASE-NP.runs
run() {
  local c=$1 np=$2 out=$work/$1-$2
  local -n a="args_$c"
  /usr/bin/time -f '%e %U %S %M' -o "$out.time" \
    mpiexec -np "$np" "$piper" plan "${a[@]}" --quiet --format json --out "$out.h5" </dev/null >"$out.json" 2>"$out.err"
  read -r wall user sys rss <"$out.time"
  local fields; fields=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["bytes_exchanged"], d["archive_seconds"])' "$out.json")
  echo "$wall $(awk -v u="$user" -v s="$sys" 'BEGIN{print u+s}') $rss $fields $(stat -c %s "$out.h5")" >>"$out.runs"
  rm -f "$out.h5"
}
for ((i = 0; i < repeats; i++)); do
  for c in bert gnmt; do
    for np in "${ranks[@]}"; do run "$c" "$np"; done
  done
done
median() { sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
echo "# piper scaling benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $load0 before and $(cut -d' ' -f1-3 /proc/loadavg) after, $("$piper" --version), median of $repeats interleaved runs"
printf '%-6s %5s %8s %8s %9s %12s %8s %7s %10s %8s %9s\n' case ranks wall_s cpu_s peak_MB received_MB write_s write% archive_MB speedup cpu_ratio
for c in bert gnmt; do
  w1="" c1=""
  for np in "${ranks[@]}"; do
    f=$work/$c-$np.runs
    wall=$(cut -d' ' -f1 "$f" | median); cpu=$(cut -d' ' -f2 "$f" | median); rss=$(cut -d' ' -f3 "$f" | median)
    bytes=$(cut -d' ' -f4 "$f" | median); wt=$(cut -d' ' -f5 "$f" | median); size=$(cut -d' ' -f6 "$f" | median)
    [ -n "$w1" ] || { w1=$wall; c1=$cpu; }
    awk -v c="$c" -v n="$np" -v w="$wall" -v cpu="$cpu" -v rss="$rss" -v b="$bytes" -v wt="$wt" -v sz="$size" \
        -v w1="$w1" -v c1="$c1" 'BEGIN{
      printf "%-6s %5d %8.2f %8.2f %9.1f %12.1f %8.2f %6.1f%% %10.2f %7.2fx %8.2fx\n",
        c, n, w, cpu, rss/1024, b/1e6, wt, 100*wt/w, sz/1e6, w1/w, cpu/c1}'
  done
done
echo "# speedup = wall(1 rank)/wall; cpu_ratio = summed CPU time / that of 1 rank; peak_MB = largest rank;"
echo "# received_MB = table bytes the ranks received from each other; write% = archive write time / wall time"
echo "# per-run figures (wall cpu rss received write size):"
for f in "$work"/*.runs; do echo "#   $(basename "$f" .runs): $(tr '\n' ';' <"$f")"; done
