#!/bin/bash
# Whole grids: wall time and peak RSS (/usr/bin/time, whole process tree) of
#  1. the shipped Llama 2 7B study (jobs/grids/llama2-7b-study.tsv, 25 rows) run
#     - one process per row, as jobs/sweep.sbatch did before piper sweep (that script, taken
#       from git history, with MPI initialised in every process as piper then did: PIPER_MPI=1),
#     - one process per row, the same script, processes without MPI (today's default),
#     - as one `piper sweep` (one process), and under `mpiexec -np 2`;
#     interleaved, REPEATS times, medians; speed-ups against the first;
#  2. a 1,000-row grid of small instances (bench/make_grid_1000.sh) as one `piper sweep` on
#     1 and 2 ranks, with rows per second.
#     With BASE=/path/to/an/older/piper both run the grid, interleaved, with the speed-up over it,
#  3. and (BASE=, valgrind) the instructions each executes for the first 200 rows (callgrind).
# Prints figures; checks nothing.  usage: [BASE=piper] bench/bench_sweep.sh [PIPER] [REPEATS]  (build/piper, 3)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
P=$(realpath "${1:-$here/build/piper}")
R=${2:-3}
[ -x "$P" ] || { echo "no executable $P" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo "# piper: $P ($(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "# host: $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
old=$work/old-sweep.sbatch
git -C "$here" show f57abff:jobs/sweep.sbatch >"$old" 2>/dev/null || { echo "no git history: cannot run the per-row script" >&2; exit 1; }
grid=$here/jobs/grids/llama2-7b-study.tsv
modes=(per-row-mpi per-row sweep-1 sweep-np2)
# run MODE OUTDIR: one whole grid
run() {
  case $1 in
    per-row-mpi) PIPER_MPI=1 PIPER_HOME=$here PIPER=$P bash "$old" "$grid" "$2" ;;
    per-row) PIPER_HOME=$here PIPER=$P bash "$old" "$grid" "$2" ;;
    sweep-1) "$P" sweep "$grid" --out-dir "$2" --quiet ;;
    sweep-np2) mpiexec -np 2 "$P" sweep "$grid" --out-dir "$2" --quiet ;;
  esac
}
echo "## 1. jobs/grids/llama2-7b-study.tsv (25 rows, 5 groups), median of $R interleaved runs"
for m in "${modes[@]}"; do : >"$work/$m.wall"; : >"$work/$m.rss"; : >"$work/$m.cpu"; done
for r in $(seq 1 "$R"); do
  for m in "${modes[@]}"; do
    rm -rf "$work/out"
    /usr/bin/time -q -f '%e %M %U %S' -o "$work/t" bash -c "$(declare -f run); grid='$grid' old='$old' here='$here' P='$P' run $m '$work/out'" >/dev/null 2>&1
    read -r w k u sy <"$work/t"
    echo "$u + $sy" | bc -l >>"$work/$m.cpu"
    n=$(ls "$work"/out/*.txt 2>/dev/null | wc -l)
    [ "$n" -eq 25 ] || echo "# warning: $m run $r left $n of 25 rows"
    echo "$w" >>"$work/$m.wall"
    echo "$k" >>"$work/$m.rss"
  done
done
base=$(median <"$work/per-row-mpi.wall") cbase=$(median <"$work/per-row-mpi.cpu")
printf '%-14s %9s %12s %9s %9s %12s\n' mode wall_s peak_rss_MB speedup cpu_s cpu_speedup
for m in "${modes[@]}"; do
  w=$(median <"$work/$m.wall") k=$(median <"$work/$m.rss") c=$(median <"$work/$m.cpu")
  printf '%-14s %9.2f %12.1f %8.1fx %9.2f %11.1fx\n' "$m" "$w" "$(echo "$k / 1024" | bc -l)" \
    "$(echo "$base / $w" | bc -l)" "$c" "$(echo "$cbase / $c" | bc -l)"
done
echo "# per-row-mpi: the old jobs/sweep.sbatch, one piper plan per row with MPI initialised (before);"
echo "# per-row: the same without MPI; sweep-1 / sweep-np2: piper sweep, 1 process / mpiexec -np 2"
echo "# cpu_s: user + system seconds of the whole process tree (steadier than wall time on a shared machine)"
echo "## 2. 1,000-row grid (bench/make_grid_1000.sh: 4 inputs x 10 memories x 5 microbatches x 5 budgets, 200 groups), median of $R interleaved runs"
bash "$here/bench/make_grid_1000.sh" >"$work/g1000.tsv"
bins=("$P") names=(new)
[ -n "${BASE:-}" ] && bins=("$(realpath "$BASE")" "$P") names=(base new)
for r in $(seq 1 "$R"); do
  for m in sweep-np2 sweep-1; do
    for i in "${!bins[@]}"; do
      rm -rf "$work/o1000"
      launch=()
      [ $m = sweep-np2 ] && launch=(mpiexec -np 2)
      /usr/bin/time -q -f '%e %M %U %S' -o "$work/t" "${launch[@]}" "${bins[$i]}" sweep "$work/g1000.tsv" \
        --out-dir "$work/o1000" --quiet >"$work/s.out" 2>/dev/null
      read -r w k u sy <"$work/t"
      o=$work/g-$m-$i
      echo "$w" >>"$o.wall"
      echo "$k" >>"$o.rss"
      echo "$u + $sy" | bc -l >>"$o.cpu"
      ls "$work"/o1000/*.txt 2>/dev/null | wc -l >>"$o.rows"
      du -sk "$work/o1000" | cut -f1 >>"$o.kb"
    done
  done
done
printf '%-14s %-7s %9s %12s %10s %9s %8s %8s\n' mode binary wall_s peak_rss_MB rows_per_s cpu_s out_MB speedup
for m in sweep-np2 sweep-1; do
  for i in "${!bins[@]}"; do
    o=$work/g-$m-$i
    w=$(median <"$o.wall") k=$(median <"$o.rss") c=$(median <"$o.cpu") n=$(median <"$o.rows") kb=$(median <"$o.kb")
    [ "$i" = 0 ] && w0=$w
    printf '%-14s %-7s %9.2f %12.1f %10.1f %9.2f %8.1f %7.2fx   (%d rows answered)\n' "$m" "${names[$i]}" "$w" \
      "$(echo "$k / 1024" | bc -l)" "$(echo "$n / $w" | bc -l)" "$c" "$(echo "$kb / 1024" | bc -l)" \
      "$(echo "$w0 / $w" | bc -l)" "$n"
  done
done
echo "# out_MB: the output folder (1,000 archives and reports); with BASE=, speedup = wall of base / wall"
if [ -n "${BASE:-}" ] && command -v valgrind >/dev/null; then
  echo "## 3. instructions executed (valgrind --tool=callgrind, user space: the same count in every run, where wall time is noise on a shared machine): the grid's first 200 rows, one process"
  head -n 201 "$work/g1000.tsv" >"$work/g200.tsv"
  for i in "${!bins[@]}"; do
    rm -rf "$work/o200"
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "${bins[$i]}" sweep "$work/g200.tsv" \
      --out-dir "$work/o200" --quiet >/dev/null 2>"$work/cg.err"
    ir=$(awk '/Collected :/ {print $NF}' "$work/cg.err")
    [ "$i" = 0 ] && ir0=$ir
    printf '%-7s %14s instructions  %5.2fx of base\n' "${names[$i]}" "$ir" "$(echo "$ir / $ir0" | bc -l)"
  done
fi
