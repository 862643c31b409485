#!/usr/bin/env bash
# Golden files: every command's --help, the text and JSON reports of `piper
# plan` (feasible, with recomputation, infeasible) and of `piper show`, each
# compared with the file of the same name in this folder after masking the
# fields that change from run to run (seconds, peak memory, ranks, bytes
# exchanged, the write time in show's report).
# usage: run.sh PIPER SOURCE_DIR [--update]
#   --update rewrites the golden files instead of comparing (tests/golden/update.sh).
# Prints one line per file and "N passed, N failed"; exits 1 on any difference.
set -uo pipefail
piper=$(realpath "$1") src=$(realpath "$2") update=${3:-}
golden=$src/tests/golden
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$src" || exit 1 # reports name the input as given: keep paths relative
bert=inputs/bert-large-a100-40gb.json

# mask: the volatile fields, in text and JSON reports alike
mask() {
  sed -E \
    -e 's/^(search: [^,]*, [^,]*), [0-9.]+ s/\1, <seconds> s/' \
    -e 's/peak memory [0-9.]+ [KMGT]?i?B per rank/peak memory <bytes> per rank/' \
    -e 's/"(seconds|peak_rss_bytes|bytes_exchanged|ranks)": [0-9.eE+-]+/"\1": "<masked>"/g'
}

# case NAME ARGS...: runs piper ARGS, keeps standard output, standard error
# and the exit code in NAME (masked)
case_() {
  local name=$1
  shift
  "$piper" "$@" >"$work/out" 2>"$work/err" </dev/null
  local rc=$?
  {
    echo "\$ piper $*"
    cat "$work/out"
    if [ -s "$work/err" ]; then
      echo "--- standard error"
      cat "$work/err"
    fi
    echo "--- exit $rc"
  } | mask >"$work/$name"
}

case_ help.txt --help
for c in plan show eval collect gen sweep plot; do case_ help-$c.txt $c --help; done
case_ gen-list.txt gen --list
case_ plan.txt plan $bert --quiet --no-archive
case_ plan.json plan $bert --quiet --no-archive --format json
case_ plan-recompute.txt plan $bert --devices 8 --memory 1GiB --quiet --no-archive
case_ plan-recompute.json plan $bert --devices 8 --memory 1GiB --quiet --no-archive --format json
case_ plan-infeasible.txt plan $bert --devices 8 --memory 100MiB --quiet --no-archive
case_ plan-infeasible.json plan $bert --devices 8 --memory 100MiB --quiet --no-archive --format json
case_ plan-equi.txt plan $bert --planner equi --devices 64 --quiet --no-archive
case_ plan-virtual.txt plan $bert --devices 16 --uniform --schedule 1f1b --virtual-stages 2 --quiet --no-archive
case_ plan-equi.json plan $bert --planner equi --devices 64 --quiet --no-archive --format json
"$piper" plan $bert --devices 16 --quiet --out "$work/a.h5" >/dev/null 2>&1
case_ show.txt show "$work/a.h5" --devices 12
case_ eval.txt eval $bert --pp 4 --tp 2 --dp 4 --schedule 1f1b
case_ eval.json eval $bert --pp 4 --tp 2 --dp 4 --schedule 1f1b --format json
case_ eval-violations.txt eval $bert --pp 3 --tp 4 --dp 6 --memory 600MiB --devices 32
case_ show-curve.txt show "$work/a.h5" --curve
sed -i "s|$work/|WORK/|g" "$work"/show*.txt

pass=0 fail=0
for f in "$work"/*.txt "$work"/*.json; do
  name=$(basename "$f")
  if [ "$update" = --update ]; then
    cp "$f" "$golden/$name"
    echo "wrote tests/golden/$name"
  elif [ ! -f "$golden/$name" ]; then
    echo "FAIL  $name: no golden file (run tests/golden/update.sh)"
    fail=$((fail + 1))
  elif diff -u "$golden/$name" "$f" >"$work/diff"; then
    echo "ok    $name"
    pass=$((pass + 1))
  else
    echo "FAIL  $name differs from tests/golden/$name (intended? run tests/golden/update.sh):"
    cat "$work/diff"
    fail=$((fail + 1))
  fi
done
[ "$update" = --update ] && exit 0
for g in "$golden"/*.txt "$golden"/*.json; do
  [ -e "$work/$(basename "$g")" ] || { echo "FAIL  $(basename "$g"): golden file no case produces"; fail=$((fail + 1)); }
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
