#!/usr/bin/env bash
# The single-rank kernel side by side with the reference planner: for every
# row of ../shared/reference/expected.tsv, plus GNMT at K = 128 (2.5 GiB) and
# the 98,304-device Llama 3.1 405B plan on 2 ranks, one piper process
# (whole-process wall time, CPU time = user + system, peak RSS; no MPI, as
# when not started by a launcher) and the reference.  The reference is either
# built from ../shared/reference-code (build.sh; needs g++ and
# nlohmann-json3-dev) and run in the same session (REF=run: its own DP CPU
# seconds as it prints them, and its whole-process wall and peak RSS), or
# taken from expected.tsv's ref_cpu_seconds column (REF=table, the default:
# the two GNMT rows alone take the reference about 15 minutes).  The output
# says which.  speedup = reference DP CPU seconds / piper wall seconds (the
# reference's CPU time excludes reading its input; piper's wall time is the
# whole process).  Each row runs piper twice: under timeout and /usr/bin/time
# for CPU, peak RSS and the plan, then alone for wall_s, as a user's `time
# piper plan ...` would see it (the two wrappers' own start-up, 5-10 ms on
# this VM, would otherwise count against the smallest rows).  The tps column
# is compared with expected.tsv ("ok").
# Prints figures; checks nothing else.
# REF_SKIP lists rows whose reference figure comes from the table even with
# REF=run (the ref column says which was used per row).
# usage: [REF=table|run] [REF_SKIP="case ..."] [CASES="case ..."] [K128=1] [LLAMA=1]
#        [LIMIT=900] [LLAMA_LIMIT=$LIMIT]
#        bench/bench_kernel.sh [PIPER]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
piper=$(realpath "${1:-$here/../build/piper}")
shared=$(realpath "$here/../../shared")
exp=$shared/reference/expected.tsv
ref_mode=${REF:-table}
limit=${LIMIT:-900}
[ -x "$piper" ] || { echo "no executable $piper" >&2; exit 1; }
[ -f "$exp" ] || { echo "no $exp" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$ref_mode" = run ]; then
  bash "$shared/reference-code/build.sh" "$work/ref" >/dev/null || { echo "reference build failed" >&2; exit 1; }
fi
read -r -a cases <<<"${CASES:-$(awk -F'\t' 'NR > 1 {printf "%s ", $1}' "$exp")}"

echo "# piper: $piper ($("$piper" --version 2>/dev/null | head -1); checkout $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo "?"))"
echo "# host: $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
if [ "$ref_mode" = run ]; then
  echo "# reference: built from shared/reference-code and run now (ref_cpu_s = its DP CPU time)"
else
  echo "# reference: ref_cpu_s from expected.tsv's ref_cpu_seconds (not rerun; ref_wall_s, ref_rss_MB: -)"
fi
printf '%-24s %9s %9s %8s %10s %10s %10s %6s %9s %6s\n' case wall_s cpu_s rss_MB ref_cpu_s ref_wall_s ref_rss_MB ref speedup tps
flag_of() { case $1 in nodp) echo --no-dp ;; notp) echo --no-tp ;; noar) echo --no-recompute ;; *) ;; esac; }
# one piper row: "wall cpu rss_MB tps" (tps "-" if none printed)
run_piper() {
  local t0 t1 tps
  timeout "$limit" /usr/bin/time -f '%e %U %S %M' -o "$work/t" "$piper" plan "$@" --quiet --no-archive \
    --format json </dev/null >"$work/out.json" 2>/dev/null
  tps=$(grep -o '"tps": [^,]*' "$work/out.json" | head -1 | cut -d' ' -f2)
  grep -q '"feasible": false' "$work/out.json" && tps=infeasible
  read -r wall user sys rss < <(tail -1 "$work/t") || { echo "- - - -"; return; }
  # wall time of piper alone from the shell's microsecond clock (time's %e has 10 ms steps)
  t0=$EPOCHREALTIME
  "$piper" plan "$@" --quiet --no-archive --format json </dev/null >/dev/null 2>&1
  t1=$EPOCHREALTIME
  wall=$(echo "$t1 - $t0" | bc -l)
  echo "$wall $(echo "$user + $sys" | bc -l) $(echo "$rss / 1024" | bc -l) ${tps:--}"
}
speedups=()
for c in "${cases[@]}"; do
  IFS=$'\t' read -r _ input K M N B flags tps_ref _ sec < <(grep -P "^$c\t" "$exp")
  # shellcheck disable=SC2046
  read -r wall cpu rss tps < <(run_piper "$shared/$input" --devices "$K" --memory "$M" --microbatches "$N" \
    --bandwidth "$B" $(flag_of "$flags"))
  rwall=- rrss=- how=table
  if [ "$ref_mode" = run ] && [[ " ${REF_SKIP:-} " != *" $c "* ]]; then
    how=run
    /usr/bin/time -f '%e %M' -o "$work/rt" "$work/ref/piper-ref" "$shared/$input" "$K" "$M" "$N" "$B" "$flags" \
      >"$work/ref.out" 2>/dev/null
    sec=$(awk '{print $3}' "$work/ref.out")
    read -r rwall rrss < <(tail -1 "$work/rt")
    rrss=$(printf '%.1f' "$(echo "$rrss / 1024" | bc -l)")
  fi
  ok=DIFF
  if [ "$tps" = infeasible ] && [ "$tps_ref" = infeasible ]; then
    ok=ok
  elif [ "$tps" != - ] && [ "$tps_ref" != infeasible ] &&
    awk -v a="$tps" -v b="$tps_ref" 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(d <= 1e-9 * b)}'; then
    ok=ok
  fi
  sp=$(echo "$sec / $wall" | bc -l)
  speedups+=("$sp")
  printf '%-24s %9.3f %9.2f %8.1f %10.3f %10s %10s %6s %8.1fx %6s\n' "$c" "$wall" "$cpu" "$rss" "$sec" "$rwall" \
    "$rrss" "$how" "$sp" "$ok"
done
if [ ${#speedups[@]} -gt 0 ]; then
  printf '%s\n' "${speedups[@]}" | sort -g | awk '{a[NR] = $1} END {
    m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
    printf "# over %d rows: median speedup %.1fx, smallest %.1fx\n", NR, m, a[1] }'
fi
if [ "${K128:-1}" = 1 ]; then
  read -r wall cpu rss tps < <(run_piper "$shared/piper-inputs/gnmt.json" --devices 128 --memory 2.5GiB \
    --microbatches 256 --bandwidth 26843545600)
  printf '%-24s %9.3f %9.2f %8.1f %10s %10s %10s %6s %9s %6s\n' gnmt_k128_m2.5 "$wall" "$cpu" "$rss" - - - - - \
    "$tps"
  echo "# gnmt_k128_m2.5: tps $tps (no reference figure)"
fi
if [ "${LLAMA:-1}" = 1 ]; then
  "$piper" gen llama3.1-405b --gpu h100-80gb --devices 98304 --global-batch 16384 -o "$work/llama.json" ||
    { echo "gen failed" >&2; exit 1; }
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
  export OMPI_MCA_rmaps_base_oversubscribe=1
  PIPER_DEBUG_DIST=1 timeout "${LLAMA_LIMIT:-$limit}" /usr/bin/time -f '%e %U %S' -o "$work/lt" mpiexec -np 2 "$piper" plan \
    "$work/llama.json" --no-archive --format json </dev/null >"$work/llama.out" 2>"$work/llama.err"
  rc=$?
  read -r wall user sys < <(tail -1 "$work/lt" 2>/dev/null) || wall=-
  per_rank=$(awk '/^rank [0-9]+: compute/ {for (i = 1; i <= NF; i++) if ($i == "peak_rss_kB")
      printf "%s%.1f", (n++ ? "/" : ""), $(i + 1) / 1024}' "$work/llama.err")
  tps=$(grep -o '"tps": [^,]*' "$work/llama.out" | head -1 | cut -d' ' -f2)
  # the last progress line, for a run stopped at the limit
  last=$(tr '\r' '\n' <"$work/llama.err" | grep '^piper: layer' | tail -1)
  [ -n "$last" ] && echo "# llama progress: $last"
  echo "# llama3.1-405b, 98304 devices, global batch 16384, 2 ranks: wall ${wall} s (exit $rc; 124 = stopped" \
    "at LLAMA_LIMIT=${LLAMA_LIMIT:-$limit} s), cpu of both ranks $(echo "${user:-0} + ${sys:-0}" | bc -l) s, peak RSS per rank" \
    "${per_rank:--} MB, tps ${tps:--}"
fi
