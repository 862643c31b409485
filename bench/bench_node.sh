#!/usr/bin/env bash
# One copy of the tables per node: 1 and 2 ranks on this one node for
# BERT-32 (K=2048, N=1920, M=8 GiB, B=25 GiB/s) and GNMT (K=16, N=256,
# M=1.2 GiB), the parameters of ../shared/reference/expected.tsv.  For each
# configuration it prints the whole-process wall time of mpiexec to the
# millisecond (median of REPEATS interleaved runs, default 5), the
# speed-up over 1 rank, and, from the
# median run, each rank's peak RSS (VmHWM) and their sum, the sum of the
# ranks' proportional set sizes (PSS: shared pages split among the ranks
# that map them, so the sum is what the node holds) after the DP, and the
# table bytes: those each rank keeps privately plus those in the node's
# shared memory, counted once.  The ratios are against 1 rank.  It also
# prints the CPU time summed over the ranks, the largest rank's CPU time, and
# cpu_speedup = CPU time of 1 rank / largest rank's CPU time at 2 ranks: the
# speed-up an idle machine would show (on a loaded one the ranks do not get a
# core each, and wall-time speed-ups mean little), and the load average at
# the start of the runs.  One rank runs twice a round, once on each core
# (mpiexec binds one rank to core 0; the second run is held to core 1): a
# vCPU of this VM can run far slower than the other for minutes (seen: GNMT
# 6.1 s on core 0 against 3.8 s on core 1), which would flatter 2 ranks, who
# use both.  A round's 1-rank figures are the mean of its two runs (an
# average core); each core's median wall time is printed as well.
# usage: [REPEATS=5] [CASES="case ..."] bench/bench_node.sh [PIPER]   (writes only a temp folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
piper=$(realpath "${1:-$here/../build/piper}")
repeats=${REPEATS:-5}
shared=$(realpath "$here/../../shared")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1 PIPER_DEBUG_DIST=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
exp=$shared/reference/expected.tsv
args_of() { # case name -> plan arguments
  IFS=$'\t' read -r _ input K M N B _ < <(grep -P "^$1\t" "$exp")
  echo "$shared/$input --devices $K --memory $M --microbatches $N --bandwidth $B"
}
read -r -a cases <<<"${CASES:-bert32_k2048_m8_n1920 gnmt_k16_m1.2}"
# one run: appends "wall peak_sum peak_max pss_sum table_bytes cpu_sum cpu_max load" to $work/CASE-NP.runs
# (np "1c0", "1c1": one rank on core 0, on core 1)
run() {
  local c=$1 np=${2%c*} out=$work/$1-$2 load bind=()
  [ "$2" != 1c1 ] || bind=(--cpu-set 1 --bind-to core)
  load=$(cut -d' ' -f1 /proc/loadavg)
  # shellcheck disable=SC2046
  local t0 t1
  t0=$(date +%s%N)
  mpiexec -np "$np" "${bind[@]}" "$piper" plan $(args_of "$c") --quiet --no-archive \
    --format json </dev/null >"$out.json" 2>"$out.err"
  t1=$(date +%s%N)
  awk -v wall="$(((t1 - t0) / 1000000))" -v load="$load" '/^rank [0-9]+: compute/ {
      for (i = 1; i <= NF; i++) {
        if ($i == "peak_rss_kB") { p = $(i + 1); ps += p; if (p > pm) pm = p }
        if ($i == "pss_kB") ss += $(i + 1)
        if ($i == "own_table_bytes") own += $(i + 1)
        if ($i == "node_shared_table_bytes") sh = $(i + 1)
        if ($i == "cpu") { u = $(i + 1); cs += u; if (u > cm) cm = u } }
    } END { printf "%.3f %d %d %d %.0f %.3f %.3f %s\n", wall / 1000, ps, pm, ss, own + sh, cs, cm, load }' "$out.err" >>"$out.runs"
}
for ((i = 0; i < repeats; i++)); do
  for c in "${cases[@]}"; do
    for np in 1c0 1c1 2; do run "$c" "$np"; done
  done
done
# a round's one-rank figures: the mean of its runs on core 0 and core 1
for c in "${cases[@]}"; do
  paste -d' ' "$work/$c-1c0.runs" "$work/$c-1c1.runs" | awk '{ n = NF / 2
    for (i = 1; i <= n; i++) printf "%s%s", (i >= 2 && i <= 5 ? sprintf("%.0f", ($i + $(i + n)) / 2) : sprintf("%.3f", ($i + $(i + n)) / 2)), (i < n ? " " : "\n") }' >"$work/$c-1.runs"
done
echo "# piper node-memory and 2-rank benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $("$piper" --version), median of $repeats interleaved runs"
printf '%-22s %5s %8s %8s %8s %8s %8s %13s %12s %11s %10s %10s %9s %5s\n' case ranks wall_s speedup cpu_s \
  cpu_max cpu_spd peak_rank_MB peak_sum_MB pss_sum_MB tables_MB peak_ratio tab_ratio load
for c in "${cases[@]}"; do
  base=""
  for np in 1 2; do
    f=$work/$c-$np.runs
    # the median run by wall time
    line=$(sort -g "$f" | awk -v n="$(wc -l <"$f")" 'NR == int((n + 1) / 2)')
    read -r wall psum pmax pss tab csum cmax load <<<"$line"
    [ -n "$base" ] || base="$wall $psum $tab $csum"
    read -r w1 p1 t1 c1 <<<"$base"
    awk -v c="$c" -v n="$np" -v w="$wall" -v ps="$psum" -v pm="$pmax" -v ss="$pss" -v t="$tab" \
        -v cs="$csum" -v cm="$cmax" -v ld="$load" -v w1="$w1" -v p1="$p1" -v t1="$t1" -v c1="$c1" 'BEGIN{
      printf "%-22s %5d %8.3f %7.2fx %8.2f %8.2f %7.2fx %13.1f %12.1f %11.1f %10.1f %9.2fx %8.2fx %5s\n",
        c, n, w, w1 / w, cs, cm, c1 / cm, pm / 1024, ps / 1024, ss / 1024, t / 1e6, ps / p1, t / t1, ld}'
  done
done
echo "# speedup = wall(1 rank) / wall; peak_rank = largest rank's peak RSS; peak_sum = summed peak RSS"
echo "# (counts the shared tables once per rank that maps them); pss_sum = summed PSS after the DP (the"
echo "# node's memory, shared pages counted once); tables = table bytes, private plus the node's shared"
echo "# ones once; peak_ratio = peak_sum / that of 1 rank; tab_ratio = tables / those of 1 rank"
echo "# cpu_s = CPU time summed over the ranks; cpu_max = the largest rank's; cpu_spd = cpu_s(1 rank) / cpu_max:"
echo "# the wall-time speed-up of an idle machine; load = 1-minute load average at the start of the median run"
echo "# per-run figures (wall peak_sum peak_max pss_sum table_bytes cpu_sum cpu_max load):"
median_wall() { cut -d' ' -f1 "$1" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "# one rank on each core, median wall s:$(for c in "${cases[@]}"; do
  printf ' %s core 0 %s, core 1 %s;' "$c" "$(median_wall "$work/$c-1c0.runs")" "$(median_wall "$work/$c-1c1.runs")"
done)"
for f in "$work"/*.runs; do echo "#   $(basename "$f" .runs): $(tr '\n' ';' <"$f")"; done
