#!/usr/bin/env bash
# What the archive costs: for BERT-32 (K=2048, N=1920, M=8 GiB, B=25 GiB/s)
# and GNMT (K=16, N=256, M=1.2 GiB), the parameters of
# ../shared/reference/expected.tsv, it times
#   plan      one process without a launcher, writing its archive,
#   plan_np2  the same under mpiexec -np 2 (collective parallel HDF5),
#   show      reading that archive back and re-checking all of it,
#   show_k    show --devices K/2: a plan rebuilt from the archived tables,
# and prints per step the whole-process wall time and peak RSS (median of
# REPEATS interleaved runs, default 5) and, for the plans, the write time
# the archive records (/run seconds_write).  With BASE=/path/to/an/older/piper
# both binaries run interleaved in one loop (same machine, same hour), and
# each row of the second gives the speed-up over the first.
# usage: [REPEATS=5] [BASE=piper] [CASES="case ..."] bench/bench_archive.sh [PIPER]   (writes only a temp folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
piper=$(realpath "${1:-$here/../build/piper}")
repeats=${REPEATS:-5}
shared=$(realpath "$here/../../shared")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1
command -v h5dump >/dev/null || { echo "bench_archive: h5dump (hdf5-tools) is needed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
exp=$shared/reference/expected.tsv
read -r -a cases <<<"${CASES:-bert32_k2048_m8_n1920 gnmt_k16_m1.2}"
bins=("$piper")
[ -n "${BASE:-}" ] && bins=("$(realpath "$BASE")" "$piper")

# one timed command: appends "wall_s peak_kB" to $1
timed() {
  local out=$1
  shift
  /usr/bin/time -f '%e %M' -o "$work/t" "$@" </dev/null >/dev/null 2>"$work/err" ||
    { echo "bench_archive: failed: $*" >&2; cat "$work/err" >&2; exit 1; }
  tail -1 "$work/t" >>"$out"
}
seconds_write() { h5dump -a /run/seconds_write "$1" | awk '/\(0\)/ {print $2}'; }

echo "# piper archive benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $("$piper" --version 2>/dev/null | head -1), median of $repeats interleaved runs"
printf '%-22s %-9s %-6s %8s %9s %8s %s\n' case step binary wall_s peak_MB write_s speedup
for c in "${cases[@]}"; do
  IFS=$'\t' read -r _ input K M N B _ < <(grep -P "^$c\t" "$exp")
  args=(plan "$shared/$input" --devices "$K" --memory "$M" --microbatches "$N" --bandwidth "$B" --quiet --force)
  for r in $(seq "$repeats"); do
    for i in "${!bins[@]}"; do
      b=${bins[$i]} o=$work/$c-$i
      timed "$o.plan" "$b" "${args[@]}" --out "$o.h5"
      seconds_write "$o.h5" >>"$o.plan.w"
      timed "$o.show" "$b" show "$o.h5"
      timed "$o.show_k" "$b" show "$o.h5" --devices $((K / 2))
      timed "$o.plan_np2" mpiexec -np 2 "$b" "${args[@]}" --out "$o-2.h5"
      seconds_write "$o-2.h5" >>"$o.plan_np2.w"
    done
  done
  for step in plan plan_np2 show show_k; do
    first=
    for i in "${!bins[@]}"; do
      o=$work/$c-$i.$step name=new
      [ ${#bins[@]} -gt 1 ] && [ "$i" = 0 ] && name=base
      wall=$(sort -n -k1 "$o" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
      peak=$(sort -n -k2 "$o" | awk '{a[NR]=$2} END {printf "%.1f", a[int((NR+1)/2)]/1024}')
      w=-
      [ -f "$o.w" ] && w=$(sort -g "$o.w" | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}')
      ratio=
      [ -n "$first" ] && ratio=$(awk -v a="$first" -v b="$wall" 'BEGIN {printf "%.2fx", a / b}')
      [ -z "$first" ] && first=$wall
      printf '%-22s %-9s %-6s %8s %9s %8s %s\n' "$c" "$step" "$name" "$wall" "$peak" "$w" "$ratio"
    done
  done
done
echo "# wall_s: whole process (mpiexec for plan_np2); peak_MB: peak RSS of the process (for plan_np2 the largest"
echo "# of mpiexec and its ranks); write_s: the archive's /run seconds_write (all of the write but the final close,"
echo "# the slowest rank's); speedup: wall of base / wall of new, the same step"
