#!/bin/bash
# What a plan of a small graph costs besides its DP: whole-process wall time
# and peak RSS of `piper plan` on the smallest reference rows, run directly
# (no launcher: no MPI, the archive through HDF5's serial driver) and under
# `mpiexec -np 1` (MPI initialised, the archive through MPI-IO), interleaved,
# next to the DP's own seconds (the "seconds" of --format json) and the
# reference's CPU seconds.  First the start-up alone: `piper --version` next
# to /bin/true.  With BASE=ANOTHER_PIPER (e.g. a build of an earlier commit)
# its direct modes, its mpiexec-np1 mode without an archive and its --version
# run interleaved with this one's, so the two are compared within one run.  Prints figures (medians of
# REPEATS); checks nothing.
# usage: [BASE=PIPER] bench/bench_startup.sh [PIPER] [REPEATS]   (default build/piper, 5)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
P=$(realpath "${1:-$here/build/piper}")
R=${2:-5}
BP=${BASE:+$(realpath "$BASE")}
shared=$here/../shared
exp=$shared/reference/expected.tsv
[ -x "$P" ] || { echo "no executable $P" >&2; exit 1; }
[ -f "$exp" ] || { echo "no $exp" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo "# piper: $P ($(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "# host: $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
[ -n "$BP" ] && echo "# base: $BP (rows marked base:)"
echo "# median of $R interleaved runs; wall from the shell's microsecond clock, RSS of the whole process (/usr/bin/time)"
# run OUT_PREFIX CMD...: appends wall seconds to OUT_PREFIX.wall and peak RSS (kB) to OUT_PREFIX.rss
run() {
  local o=$1
  shift
  local t0=$EPOCHREALTIME
  /usr/bin/time -q -f '%M' -o "$work/t" "$@" >"$work/j" 2>/dev/null
  local t1=$EPOCHREALTIME
  echo "$t1 - $t0" | bc -l >>"$o.wall"
  cat "$work/t" >>"$o.rss"
}
starts=(true piper)
[ -n "$BP" ] && starts+=(base)
for m in "${starts[@]}"; do : >"$work/v-$m.wall"; : >"$work/v-$m.rss"; done
for r in $(seq 1 "$R"); do
  run "$work/v-true" /bin/true
  run "$work/v-piper" "$P" --version
  [ -n "$BP" ] && run "$work/v-base" "$BP" --version
done
printf '%-22s %-22s %9s %8s\n' start-up command wall_s rss_MB
for m in "${starts[@]}"; do
  case $m in true) cmd=/bin/true ;; piper) cmd="piper --version" ;; base) cmd="base: piper --version" ;; esac
  printf '%-22s %-22s %9.4f %8.1f\n' start-up "$cmd" "$(median <"$work/v-$m.wall")" \
    "$(echo "$(median <"$work/v-$m.rss") / 1024" | bc -l)"
done
printf '%-22s %-22s %9s %9s %8s %10s %9s\n' case mode wall_s piper_s rss_MB ref_cpu_s speedup
for c in bert32_k8_m1_n1920 bert32_k64_m8_n512 bert32_k32_m2_n480 bert32_k128_m80_n1920; do
  IFS=$'\t' read -r _ input K M N B flags tps _ sec < <(grep -P "^$c\t" "$exp")
  args=(plan "$shared/$input" --devices "$K" --memory "$M" --microbatches "$N" --bandwidth "$B" --quiet --format json)
  modes=("direct,no-archive" "direct,archive" "mpiexec-np1,no-archive" "mpiexec-np1,archive")
  [ -n "$BP" ] && modes+=("base:direct,no-archive" "base:direct,archive" "base:mpiexec-np1,no-archive")
  for m in "${modes[@]}"; do : >"$work/$m.wall"; : >"$work/$m.rss"; : >"$work/$m.self"; done
  for r in $(seq 1 "$R"); do
    for m in "${modes[@]}"; do
      launch=() out=(--no-archive) exe=$P
      [[ $m == *mpiexec* ]] && launch=(mpiexec -np 1)
      [[ $m == base:* ]] && exe=$BP
      [[ $m == *,archive ]] && out=(--out "$work/x.h5" --force)
      run "$work/$m" "${launch[@]}" "$exe" "${args[@]}" "${out[@]}"
      python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' "$work/j" >>"$work/$m.self"
    done
  done
  for m in "${modes[@]}"; do
    w=$(median <"$work/$m.wall") s=$(median <"$work/$m.self") k=$(median <"$work/$m.rss")
    printf '%-22s %-22s %9.4f %9.4f %8.1f %10.3f %8.1fx\n' "$c" "$m" "$w" "$s" "$(echo "$k / 1024" | bc -l)" \
      "$sec" "$(echo "$sec / $w" | bc -l)"
  done
done
echo "# wall_s: the whole process; piper_s: from reading the input to the report (what piper measures itself)"
