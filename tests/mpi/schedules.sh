#!/usr/bin/env bash
# The synchronous schedules and uniform plans over MPI and through the
# archive: for each option set, the plan and the archived tables (/dp, by
# h5diff) at 1, 2 and 3 ranks (every rank working, so the k-range splits and
# the Pareto joins are exercised) must be identical; `show --devices k` from the 1-rank archive must give the TPS of a
# fresh `plan --devices k`; and a synchronous optimum can never beat the 2bw
# one (its batch time is at least N times the slowest stage); with
# --virtual-stages the archive records v and the same holds for show.
# usage: schedules.sh PIPER INPUT
set -euo pipefail
piper=$1 input=$2
. "$(dirname "$0")/../lib.sh"
t_mpi_env
command -v h5diff >/dev/null || { echo "SKIPPED: h5diff (hdf5-tools) is not installed"; exit 77; }
export PIPER_ALL_RANKS_WORK=1
t_workdir
K=32
tps() { python3 -c 'import json,sys; print(json.load(sys.stdin)["tps"])'; }
fail=0
base2bw=$("$piper" plan "$input" --devices $K --no-archive --quiet --format json | tps)
for opts in "--schedule 1f1b" "--schedule gpipe" "--uniform" "--uniform --schedule 1f1b" "--uniform --schedule gpipe" \
  "--uniform --schedule 1f1b --virtual-stages 2" "--uniform --schedule gpipe --virtual-stages 3"; do
  read -r -a o <<<"$opts"
  ref=""
  for np in 1 2 3; do
    out=$(mpiexec -np $np "$piper" plan "$input" --devices $K "${o[@]}" --quiet --format json --force \
      --out "$work/a$np.h5" | t_plan)
    if [ -z "$ref" ]; then ref=$out; elif [ "$out" != "$ref" ]; then
      echo "FAIL $opts: $np ranks differ from 1 rank"; fail=1
    elif ! h5diff -q "$work/a1.h5" "$work/a$np.h5" /dp >/dev/null 2>&1; then
      echo "FAIL $opts: /dp at $np ranks differs from 1 rank"; fail=1
    fi
  done
  t=$(echo "$ref" | tps)
  # (virtual stages place chunks on devices out of pipeline order: no 2bw plan to compare with)
  if [[ $opts != *virtual* ]] &&
    ! python3 -c "import sys; a,b='$t','$base2bw'; sys.exit(0 if a == 'None' or float(a) >= float(b) * (1 - 1e-12) else 1)"; then
    echo "FAIL $opts: TPS $t below the 2bw optimum $base2bw"; fail=1
  fi
  for k in 9 20; do
    s=$("$piper" show "$work/a1.h5" --devices $k --format json | tps)
    p=$("$piper" plan "$input" --devices $k "${o[@]}" --no-archive --quiet --format json | tps) || true
    if [ "$s" != "$p" ]; then echo "FAIL $opts: show --devices $k gives $s, plan gives $p"; fail=1; fi
  done
  echo "ok $opts: tps $t (2bw $base2bw)"
done
exit $fail
