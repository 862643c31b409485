#!/bin/sh
# plan_feasible.sh PIPER OUT.json MODEL [gen options...]
# Generates a graph with `piper gen` and checks that `piper plan` accepts it,
# exits 0 and reports "feasible": true.
set -u
piper=$1
out=$2
shift 2
mkdir -p "$(dirname "$out")" || exit 1
rm -f "$out"
if ! "$piper" gen "$@" -o "$out"; then
  echo "FAIL: piper gen $* exited non-zero"
  exit 1
fi
res=$("$piper" plan "$out" --no-archive --quiet --format json)
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "FAIL: piper plan exited $rc: $res"
  exit 1
fi
case $res in
  *'"feasible": true'*) echo "ok: $res" | cut -c1-200 ;;
  *) echo "FAIL: no feasible plan: $res"; exit 1 ;;
esac
