#!/usr/bin/env bash
# The examples in outputs/example/ kept in step with the program: regenerates
# each archive from the shipped input and the study table from them, and
# compares every deterministic part with the committed file through h5dump:
# the archives' /problem, /graph, /downsets, /dp, /plan and /curve groups
# (not /run: times, hosts), the study table's columns but `seconds`.
# usage: check.sh PIPER SOURCE_DIR [--update]
#   --update rewrites outputs/example/ instead (tests/golden/update.sh runs it).
# Exits 77 (Skipped) without h5dump; prints "N passed, N failed".
set -uo pipefail
piper=$(realpath "$1") src=$(realpath "$2") update=${3:-}
ex=$src/outputs/example
command -v h5dump >/dev/null && command -v h5ls >/dev/null ||
  { echo "SKIPPED: h5dump or h5ls (hdf5-tools) is not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bert=inputs/bert-large-a100-40gb.json
# archive name | plan arguments (the names are those plan gives by default)
archives=("bert-large-a100-40gb-k64-n256.h5|$bert"
          "bert-large-a100-40gb-k32-n256.h5|$bert --devices 32")
dest=$work/example
[ "$update" = --update ] && dest=$ex
mkdir -p "$dest" || exit 1
names=()
for a in "${archives[@]}"; do
  name=${a%%|*} args=${a#*|}
  names+=("example/$name")
  # from the source folder, so that /problem/input_path is the relative path
  (cd "$src" && "$piper" plan $args --quiet --force --out "$dest/$name" >/dev/null) ||
    { echo "FAIL  piper plan $args"; exit 1; }
done
(cd "$dest/.." && "$piper" collect "${names[@]}" --out "$dest/study.h5" >/dev/null) ||
  { echo "FAIL  piper collect"; exit 1; }
if [ "$update" = --update ]; then
  ls -l "$ex"
  exit 0
fi

pass=0 fail=0
same() { # same WHAT h5dump-args...: the dumps of the committed and the new file agree
  local what=$1 file=$2
  shift 2
  h5dump "$@" "$ex/$file" 2>&1 | tail -n +2 >"$work/want"
  h5dump "$@" "$work/example/$file" 2>&1 | tail -n +2 >"$work/got"
  if [ -s "$work/want" ] && ! grep -q "h5dump error" "$work/want" && cmp -s "$work/want" "$work/got"; then
    echo "ok    $file $what"
    pass=$((pass + 1))
  else
    echo "FAIL  $file $what differs from outputs/example (intended? run tests/golden/update.sh):"
    diff "$work/want" "$work/got" | head -20
    fail=$((fail + 1))
  fi
}
for a in "${archives[@]}"; do
  name=${a%%|*}
  for g in /problem /graph /downsets /dp /plan /curve; do same "$g" "$name" -g "$g"; done
done
# every column the program writes now (a column missing from the committed table fails), but
# the run time
cols=$(h5ls "$work/example/study.h5/study" 2>/dev/null | awk '$1 != "seconds" {print $1}')
[ -n "$cols" ] || { echo "FAIL  no columns in the new study table"; fail=$((fail + 1)); }
for col in $cols; do
  same "/study/$col" study.h5 -d "/study/$col"
done
# the committed table is one the program still reads
if "$piper" plot "$ex/study.h5" --out-dir "$work/plot" >/dev/null 2>"$work/plot.err"; then
  echo "ok    study.h5 read by piper plot"
  pass=$((pass + 1))
else
  echo "FAIL  piper plot outputs/example/study.h5: $(head -1 "$work/plot.err")"
  fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
