#!/bin/bash
# Runs every case of ../shared/reference/expected.tsv (or those whose line
# matches CASE_REGEX) through piper and compares the TPS with the reference's.
# Prints one line per case:
#   OK|BAD CASE EXPECTED_TPS GOT_TPS STAGES ref=REF_SECONDS ours=OUR_SECONDS
# where GOT_TPS is None for an infeasible result (and missing when piper
# printed no report: BAD); a TPS matches within 1e-9 relative.  Checks nothing else and always exits 0 (tests/test_parity.c is
# the test); exits 1 if the shared folder is missing.
# usage: bench/parity.sh PIPER [CASE_REGEX]
P=$(realpath "$1")
F=${2:-.}
cd "$(dirname "$0")/../../shared" || { echo "no ../shared"; exit 1; }

# The TPS and stage count of a --format json report on standard input.
tps_and_stages() {
  python3 -c "import json,sys; d=json.load(sys.stdin); print(d['tps'], len(d['stages']))"
}

# verdict EXPECTED "GOT STAGES" CASE REF_SECONDS OUR_SECONDS: prints the case's line.
verdict() {
  python3 - "$@" <<'PY'
import sys
exp, res, case, ref, ours = sys.argv[1:6]
got = res.split()[0] if res.split() else ""
if not got:  # piper printed no report
    ok = False
elif exp == "infeasible":
    ok = got == "None"
else:
    ok = got != "None" and abs(float(got) - float(exp)) <= 1e-9 * float(exp) + 1e-12
print("OK " if ok else "BAD", case, exp, res, "ref=" + ref, "ours=%.2f" % float(ours))
PY
}

tail -n +2 reference/expected.tsv | grep -E "$F" |
  while IFS=$'\t' read -r case input K M N B flags tps stages sec; do
    f=""
    case $flags in
    nodp) f=--no-dp ;;
    notp) f=--no-tp ;;
    noar) f=--no-recompute ;;
    esac
    s=$(date +%s.%N)
    r=$($P plan $input --devices $K --memory $M --microbatches $N --bandwidth $B $f \
      --format json --quiet --no-archive 2>&1 | tps_and_stages)
    e=$(date +%s.%N)
    verdict "$tps" "$r" "$case" "$sec" "$(echo "$e - $s" | bc -l)"
  done
