#!/usr/bin/env bash
# `piper show --dp-sum S` and `--curve-dp-sum` (the s axis of the Piper paper's Fig. 2): for
# every bound s the rebuilt plan passes the checker (show re-verifies it) with sum of d <= s;
# the curve over s is non-increasing and ends at the unbounded optimum; equi archives and
# contradicting options are refused with exit 2.
#   show_dp_sum.sh PIPER SOURCE_DIR
set -uo pipefail
piper=$1 src=$2
. "$(dirname "$0")/../lib.sh"
t_workdir
in=$src/inputs/bert-large-a100-40gb.json
"$piper" plan "$in" --devices 24 --microbatches 12 --quiet --out "$work/p.h5" >/dev/null || die "plan"
"$piper" plan "$in" --planner equi --devices 24 --microbatches 12 --quiet --out "$work/e.h5" >/dev/null ||
  die "plan --planner equi"
"$piper" show "$work/p.h5" --curve-dp-sum >"$work/s.csv" || die "--curve-dp-sum"
[ "$(head -1 "$work/s.csv")" = dp_sum,tps ] || die "header of --curve-dp-sum"
[ "$(wc -l <"$work/s.csv")" -eq 13 ] || die "--curve-dp-sum should have s = 1..12"
python3 - "$work/s.csv" <<'PY' || die "curve over s is not non-increasing"
import sys
v = [float(l.split(",")[1]) for l in open(sys.argv[1]).read().split()[1:]]
sys.exit(0 if all(b <= a for a, b in zip(v, v[1:])) and v[-1] < v[0] else 1)
PY
full=$("$piper" show "$work/p.h5" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["tps"])')
last=$(tail -1 "$work/s.csv" | cut -d, -f2)
python3 -c "import sys; a,b=float('$full'),float('$last'); sys.exit(0 if abs(a-b)<=1e-12*a else 1)" ||
  die "curve at s = S ($last) differs from the optimum ($full)"
for s in $(seq 1 12); do
  "$piper" show "$work/p.h5" --dp-sum "$s" --format json >"$work/o.json" 2>"$work/err"
  rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || die "--dp-sum $s: exit $rc: $(cat "$work/err")"
  [ $rc -eq 3 ] && continue
  python3 - "$work/o.json" "$s" "$(sed -n "$((s + 1))p" "$work/s.csv" | cut -d, -f2)" <<'PY' || die "--dp-sum $s"
import json, sys
j = json.load(open(sys.argv[1])); s = int(sys.argv[2]); want = float(sys.argv[3])
sys.exit(0 if j["sum_dp_degrees"] <= s and abs(j["tps"] - want) <= 1e-12 * want else 1)
PY
done
"$piper" show "$work/p.h5" --devices 10 --dp-sum 4 >/dev/null 2>&1
[ $? -eq 0 ] || [ $? -eq 3 ] || die "--devices with --dp-sum"
"$piper" show "$work/e.h5" --dp-sum 3 >/dev/null 2>"$work/err"
[ $? -eq 2 ] && grep -q "equi archive holds no tables" "$work/err" || die "equi archive with --dp-sum"
"$piper" show "$work/p.h5" --curve-dp-sum --curve >/dev/null 2>&1
[ $? -eq 2 ] || die "--curve-dp-sum with --curve"
"$piper" show "$work/p.h5" --dp-sum 0 >/dev/null 2>&1
[ $? -eq 2 ] || die "--dp-sum 0"
echo "show --dp-sum: ok"
