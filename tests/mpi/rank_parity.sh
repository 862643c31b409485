#!/usr/bin/env bash
# Same answer for any number of ranks: runs every case of the reference table
# at each rank count, writing an archive each time (parallel HDF5), and checks
# that the TPS matches the reference and that the plan (stages, degrees,
# TMPCs), the device curve and the archive's /dp tables (h5diff: every dataset
# and attribute, written by each rank count's split) are identical to those of
# the first rank count.
# A rank count of 0 is a run without a launcher (one process, no MPI, HDF5's
# serial driver).
# usage: rank_parity.sh PIPER SHARED_DIR [RANKS...]   (default ranks: 1 2 3 4 8)
set -euo pipefail
piper=$1 shared=$2
shift 2
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2 3 4 8)
table="$shared/reference/expected.tsv"
if [ ! -r "$table" ]; then
  echo "SKIPPED: $table not found (the reference data is not beside the repository)"
  exit 77 # Skipped (SKIP_RETURN_CODE)
fi
command -v h5diff >/dev/null || { echo "SKIPPED: h5diff (hdf5-tools) is not installed"; exit 77; }
. "$(dirname "$0")/../lib.sh"
t_mpi_env
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
while IFS=$'\t' read -r case input K M N B flags tps stages sec; do
  [ "$case" = case ] && continue
  f=()
  case $flags in nodp) f=(--no-dp);; notp) f=(--no-tp);; noar) f=(--no-recompute);; esac
  base=""
  for p in "${ranks[@]}"; do
    out="$work/$case-np$p"
    t0=$(date +%s.%N)
    set +e
    launch=(mpiexec -np "$p" --oversubscribe); [ "$p" = 0 ] && launch=()
    "${launch[@]}" "$piper" plan "$shared/$input" --devices "$K" --memory "$M" \
      --microbatches "$N" --bandwidth "$B" "${f[@]}" --format json --quiet --out "$out.h5" </dev/null >"$out.json" 2>"$out.err"
    rc=$?
    set -e
    t1=$(date +%s.%N)
    want=0; [ "$tps" = infeasible ] && want=3
    if [ $rc -ne $want ]; then
      echo "FAIL $case np=$p: exit $rc, expected $want"; sed 's/^/  /' "$out.err" | head -5; fail=$((fail+1)); continue
    fi
    got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("infeasible" if d["tps"] is None else repr(d["tps"]))' "$out.json")
    if ! python3 -c 'import sys; e,g=sys.argv[1],sys.argv[2]; sys.exit(0 if (e==g=="infeasible") or (e!="infeasible" and g!="infeasible" and abs(float(g)-float(e))<=1e-9*abs(float(e))) else 1)' "$tps" "$got"; then
      echo "FAIL $case np=$p: tps $got, reference $tps"; fail=$((fail+1)); continue
    fi
    plan=$(t_plan <"$out.json")
    curve=$("$piper" show "$out.h5" --curve </dev/null | md5sum)
    if [ -z "$base" ]; then
      base="$plan|$curve" base_h5=$out.h5
    elif [ "$plan|$curve" != "$base" ]; then
      echo "FAIL $case np=$p: plan or curve differs from np=${ranks[0]}"; fail=$((fail+1)); continue
    elif ! h5diff -q "$base_h5" "$out.h5" /dp >/dev/null 2>&1; then
      echo "FAIL $case np=$p: /dp differs from np=${ranks[0]}"; fail=$((fail+1)); continue
    fi
    [ -e "$(dirname "$out.h5")/.$(basename "$out.h5").partial" ] && { echo "FAIL $case np=$p: partial file left"; fail=$((fail+1)); continue; }
    printf 'ok   %-24s np=%d  tps=%s  %.1fs\n' "$case" "$p" "$got" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')"
    pass=$((pass+1))
  done
done <"$table"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
