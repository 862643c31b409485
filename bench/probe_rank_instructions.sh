#!/usr/bin/env bash
# Instructions executed by 1 rank and by 2 ranks of one node (valgrind's
# callgrind, deterministic where wall and CPU times on this VM are not), for
# GNMT at K = 8 (N = 256, 1.2 GiB) by default: how much work a 2-rank run
# adds to one rank's (stage set-ups repeated in each process, set-up that
# every rank does).  Prints each rank's count, their sum, its ratio to one
# rank's, and the functions that differ most.  Takes a few minutes.
# usage: bench/probe_rank_instructions.sh [PIPER...]   (several: one row each; writes only a temp folder)
#   [ARGS="plan arguments"]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shared=$(realpath "$here/../../shared")
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
args=${ARGS:-"plan $shared/piper-inputs/gnmt.json --devices 8 --memory 1288490188 --microbatches 256 --bandwidth 26843545600 --quiet --no-archive --format json"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ $# -gt 0 ] || set -- "$here/../build/piper"
echo "# instructions of 1 and 2 ranks, $(date -u +%Y-%m-%dT%H:%MZ), valgrind --tool=callgrind, plan args: ${args#plan }"
printf '%-44s %14s %14s %14s %14s %7s\n' piper one_rank rank0 rank1 two_sum ratio
for p in "$@"; do
  p=$(realpath "$p")
  # shellcheck disable=SC2086
  mpiexec -np 1 sh -c "valgrind --tool=callgrind --callgrind-out-file=$work/one.out $p $args >/dev/null 2>$work/one.err"
  # shellcheck disable=SC2086
  mpiexec -np 2 sh -c "valgrind --tool=callgrind --callgrind-out-file=$work/two.\$OMPI_COMM_WORLD_RANK.out $p $args >/dev/null 2>$work/two.\$OMPI_COMM_WORLD_RANK.err"
  refs() { grep -o 'I *refs: *[0-9,]*' "$1" | tr -dc '0-9'; }
  one=$(refs "$work/one.err") r0=$(refs "$work/two.0.err") r1=$(refs "$work/two.1.err")
  awk -v p="$p" -v a="$one" -v b="$r0" -v c="$r1" 'BEGIN { printf "%-44s %14.0f %14.0f %14.0f %14.0f %6.3fx\n", p, a, b, c, b + c, (b + c) / a }'
  # the functions whose instructions grew most (2 ranks summed against 1)
  for f in one two.0 two.1; do
    callgrind_annotate "$work/$f.out" 2>/dev/null | awk '/^ *[0-9,]+ +\(/ { n = $1; gsub(",", "", n); fn = $(NF - 1); sub(/.*:/, "", fn); print n, fn }' >"$work/$f.fn"
  done
  cat "$work/two.0.fn" "$work/two.1.fn" | awk -v one="$work/one.fn" 'BEGIN { while ((getline l < one) > 0) { split(l, x, " "); a[x[2]] += x[1] } }
    { b[$2] += $1 } END { for (k in b) if (k != "PROGRAM") printf "  %+14.0f %s\n", b[k] - a[k], k }' | sort -gr | head -6
done
