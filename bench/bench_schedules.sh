#!/usr/bin/env bash
# The synchronous schedules' search against Piper's 2bw on this machine:
# BERT-32 (K=2048, N=1920, M=8 GiB, 25 GiB/s) and GNMT (K=16, N=256,
# M=1.2 GiB, 25 GiB/s): --schedule 2bw and 1f1b on 1 rank, and 1f1b on 2
# ranks.  Prints the whole-process wall time, CPU time (user + system, all
# ranks) and peak RSS (/usr/bin/time) of each, the median over REPEATS
# (default 3) runs interleaved round by round, the ratio 1f1b / 2bw on one
# rank (wall and CPU: on a shared machine the CPU ratio is the one to trust)
# and the 2-rank wall speed-up of 1f1b.  A
# run longer than LIMIT seconds (default 900) is stopped and reported as
# ">LIMIT"; the ratios then are lower bounds.
# usage: [REPEATS=3] [LIMIT=900] [LLAMA=1] bench/bench_schedules.sh [PIPER]   (writes only a temp folder;
#   LLAMA=1 adds the cluster-scale case at the end)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
piper=$(realpath "${1:-$here/../build/piper}")
repeats=${REPEATS:-3}
limit=${LIMIT:-900}
shared=$(realpath "$here/../../shared")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args_bert=("$shared/piper-inputs/bert32a100.json" --devices 2048 --memory 8GiB --microbatches 1920 --bandwidth 25GiB/s)
args_gnmt=("$shared/piper-inputs/gnmt.json" --devices 16 --memory 1288490188.8 --microbatches 256 --bandwidth 25GiB/s)
configs=("2bw 1" "1f1b 1" "1f1b 2")
# one run: appends "wall rss tps cpu" to $work/CASE-SCHED-NP.runs (wall = inf if stopped)
run() {
  local c=$1 s=$2 np=$3 out=$work/$1-$2-$3
  local -n a="args_$c"
  timeout "$limit" /usr/bin/time -f '%e %M %U %S' -o "$out.time" \
    mpiexec -np "$np" "$piper" plan "${a[@]}" --schedule "$s" --quiet --no-archive --format json \
    </dev/null >"$out.json" 2>"$out.err"
  local rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then echo "inf 0 nan inf" >>"$out.runs"; return; fi
  read -r wall rss usr sys <"$out.time"
  echo "$wall $rss $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tps"])' "$out.json") $(awk -v u="$usr" -v s="$sys" 'BEGIN{print u + s}')" >>"$out.runs"
}
for ((i = 0; i < repeats; i++)); do
  for c in bert gnmt; do
    for cfg in "${configs[@]}"; do run "$c" $cfg; done
  done
done
median() { sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
echo "# piper schedules benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$piper" --version), median of $repeats interleaved runs, limit ${limit} s"
printf '%-6s %-6s %5s %9s %9s %9s %22s\n' case sched ranks wall_s cpu_s peak_MB tps
for c in bert gnmt; do
  for cfg in "${configs[@]}"; do
    set -- $cfg
    f=$work/$c-$1-$2.runs
    wall=$(cut -d' ' -f1 "$f" | median); rss=$(cut -d' ' -f2 "$f" | median); tps=$(cut -d' ' -f3 "$f" | head -1)
    cpu=$(cut -d' ' -f4 "$f" | median)
    printf '%-6s %-6s %5d %9s %9s %9.1f %22s\n' "$c" "$1" "$2" "$([ "$wall" = inf ] && echo ">$limit" || echo "$wall")" \
      "$([ "$cpu" = inf ] && echo "-" || echo "$cpu")" "$(awk -v r="$rss" 'BEGIN{print r/1024}')" "$tps"
  done
  w2=$(cut -d' ' -f1 "$work/$c-2bw-1.runs" | median); w1=$(cut -d' ' -f1 "$work/$c-1f1b-1.runs" | median)
  wp=$(cut -d' ' -f1 "$work/$c-1f1b-2.runs" | median)
  c2=$(cut -d' ' -f4 "$work/$c-2bw-1.runs" | median); c1=$(cut -d' ' -f4 "$work/$c-1f1b-1.runs" | median)
  awk -v c="$c" -v a="$w2" -v b="$w1" -v p="$wp" -v L="$limit" -v ca="$c2" -v cb="$c1" 'BEGIN{
    if (b == "inf") printf "# %s: 1f1b / 2bw on 1 rank > %.1fx (wall); 2-rank speed-up unknown\n", c, L / a;
    else printf "# %s: 1f1b / 2bw on 1 rank = %.2fx wall, %.2fx CPU; 1f1b speed-up on 2 ranks = %s (wall)\n", c, b / a,
      cb / ca, (p == "inf") ? "unknown" : sprintf("%.2fx", b / p) }'
done
echo "# per-run figures (wall rss tps cpu):"
for f in "$work"/*.runs; do echo "#   $(basename "$f" .runs): $(tr '\n' ';' <"$f")"; done
# LLAMA=1: one run per schedule of a cluster-scale case on 1 rank, Llama 3.1
# 405B on 4,096 H100 (global batch 1,024; `piper gen`), with the bytes of
# the DP tables (PIPER_DEBUG_DIST's own_table_bytes): where the
# synchronous schedules' Pareto rows weigh against 2bw's staircases.
if [ "${LLAMA:-0}" = 1 ]; then
  "$piper" gen llama3.1-405b --gpu h100-80gb --devices 4096 --global-batch 1024 -o "$work/llama.json" >/dev/null ||
    { echo "gen failed" >&2; exit 1; }
  echo "# llama3.1-405b, 4096 H100, global batch 1024, 1 process, one run each, limit ${limit} s"
  printf '%-6s %9s %9s %9s %10s %22s\n' sched wall_s cpu_s peak_MB tables_MB tps
  for s in 2bw gpipe 1f1b; do
    PIPER_DEBUG_DIST=1 timeout "$limit" /usr/bin/time -f '%e %M %U %S' -o "$work/l.time" \
      "$piper" plan "$work/llama.json" --schedule "$s" --quiet --no-archive --format json \
      </dev/null >"$work/l.json" 2>"$work/l.err"
    rc=$?
    if [ "$rc" -ne 0 ]; then printf '%-6s %9s\n' "$s" ">$limit (exit $rc)"; continue; fi
    read -r wall rss usr sys < <(tail -n 1 "$work/l.time")
    tab=$(grep -o 'own_table_bytes [0-9]*' "$work/l.err" | awk '{print $2 / 1e6}')
    tps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tps"])' "$work/l.json")
    printf '%-6s %9s %9.2f %9.1f %10.1f %22s\n' "$s" "$wall" "$(echo "$usr + $sys" | bc -l)" \
      "$(echo "$rss / 1024" | bc -l)" "${tab:-0}" "$tps"
  done
fi
