#!/bin/bash
# Runs every case of ../shared/reference/expected.tsv through piper and compares the TPS.
# usage: bench/parity.sh PIPER [case-regex]
P=$(realpath "$1"); F=${2:-.}
cd "$(dirname "$0")/../../shared" || { echo "no ../shared"; exit 1; }
tail -n +2 reference/expected.tsv | grep -E "$F" | while IFS=$'\t' read case input K M N B flags tps stages sec; do f=""; case $flags in nodp) f=--no-dp;; notp) f=--no-tp;; noar) f=--no-recompute;; esac; s=$(date +%s.%N); r=$($P plan $input --devices $K --memory $M --microbatches $N --bandwidth $B $f --format json --quiet --no-archive 2>&1 | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['tps'], len(d['stages']))"); e=$(date +%s.%N); python3 -c "
exp='$tps'; got='$r'.split()[0]
ok = (exp=='infeasible' and got=='None') or (exp!='infeasible' and got!='None' and abs(float(got)-float(exp))<=1e-9*float(exp)+1e-12)
print('OK ' if ok else 'BAD', '$case', exp, '$r', 'ref=$sec', 'ours=%.2f'%($e-$s))"; done
