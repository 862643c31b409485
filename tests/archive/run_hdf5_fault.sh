#!/usr/bin/env bash
# Files on which Debian 12's HDF5 1.10.8 itself faults, made by craft_fault.py
# from a valid archive (plan of the GPT-3 1.3B input at 8 devices: the
# /problem group's attribute "devices") and from a valid checkpoint of the
# same plan (the root group's attribute "identity"): the attribute's message is
# flagged shared with a reference to its own group's object header, which HDF5
# follows recursively until the stack overflows, a SIGSEGV under
# H5Aexists_by_name whatever the heap holds and whether HDF5 is linked
# statically or not.  show, show --devices, show --curve, collect, plot, eval
# --plan and plan --resume read the file in a child process first, so they exit
# 2 with "reading it crashed a child process" instead of dying of the fault
# themselves.  Under AddressSanitizer the child's fault is a report and exit
# status 1, not a signal: the child ended before its read returned, which
# counts as a crash just the same (pp_isolated_run).
# OVERREAD is a checkpoint of the same plan that the checkpoint fuzzer
# (tests/fuzz) made: one of its attribute messages makes HDF5 copy past the
# end of a heap block under H5Aexists_by_name.  Without a memory checker
# that read goes unnoticed and the checkpoint is refused for what it then
# holds; under AddressSanitizer it ends the child.  Either way exit 2 with
# the checkpoint's name, never a fault in piper's own process.
# usage: run_hdf5_fault.sh PIPER ARCHIVE CHECKPOINT INPUT OVERREAD
set -uo pipefail
piper=$1 archive=$2 checkpoint=$3 input=$4 overread=$5
crashed='not a valid piper archive: reading it crashed a child process [(]'
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
check plot "$crashed" "$piper" plot "$archive" --out-dir "$work/plots"
check eval "$crashed" "$piper" eval "$input" --plan "$archive"
mkdir "$work/r" && cp "$checkpoint" "$work/r/out.h5.ckpt"
check resume "${crashed/archive/checkpoint}" "$piper" plan "$input" --devices 8 --quiet --out "$work/r/out.h5" --resume
mkdir "$work/o" && cp "$overread" "$work/o/out.h5.ckpt"
check resume-overread "^piper: error: $work/o/out.h5.ckpt: " "$piper" plan "$input" --devices 8 --quiet \
  --out "$work/o/out.h5" --resume
exit $fail
