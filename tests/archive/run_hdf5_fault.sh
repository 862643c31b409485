#!/usr/bin/env bash
# An archive on which Debian 12's HDF5 1.10.8 itself faults (found by the
# archive fuzz target: one byte changed in an object header that
# H5Aexists_by_name parses): show, show --devices, show --curve and collect
# each read it in a child process first, so they exit 2 with "reading it
# crashed a child process" instead of dying of the fault themselves; plot and
# eval --plan (whose reads stop at an earlier check of this file) exit 2 too.
# usage: run_hdf5_fault.sh PIPER ARCHIVE INPUT
set -uo pipefail
piper=$1 archive=$2 input=$3
crashed='not a valid piper archive: reading it crashed a child process [(]signal'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
# check NAME PATTERN CMD...: exit 2 and PATTERN (grep -E) on standard error
check() {
  local name=$1 pat=$2
  shift 2
  "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [ $rc -ne 2 ] || ! grep -Eq "$pat" "$work/err"; then
    echo "FAIL $name: exit $rc: $(head -c 300 "$work/err")"
    fail=1
  else
    echo "ok   $name: exit 2: $(head -c 200 "$work/err")"
  fi
}
check show "$crashed" "$piper" show "$archive"
check show-devices "$crashed" "$piper" show --devices 3 "$archive"
check show-curve "$crashed" "$piper" show --curve "$archive"
# collect skips the file with the same message and, with no other file, exits 2
check collect "$crashed" "$piper" collect "$archive"
check plot 'not a valid piper archive' "$piper" plot "$archive" --out-dir "$work/plots"
check eval 'not a valid piper archive' "$piper" eval "$input" --plan "$archive"
exit $fail
