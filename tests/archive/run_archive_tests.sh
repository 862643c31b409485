#!/usr/bin/env bash
# The archive and checkpoints from the command line: writing, refusing to
# overwrite, --force, show (stored plan, other budgets, curve), damaged files,
# an interrupted run that leaves the old archive intact, stop on a signal with
# exit 75, --resume to the same result, refusal of a foreign or damaged
# checkpoint, and collect.
# usage: run_archive_tests.sh PIPER SOURCE_DIR [PART [SHARED_DIR]]
#   PART: cli (sections 1-4, 6, 7), h5tools (1 read by h5dump and h5py),
#   resume (5: signals, checkpoints, resume) or all (default).  A part whose
#   tool or data is missing exits 77 (Skipped).
set -uo pipefail
piper=$(realpath "$1") src=$(realpath "$2") part=${3:-all} shared=${4:-$2/../shared}
want() { [ "$part" = all ] || [ "$part" = "$1" ]; }
skip() { echo "SKIPPED: $1"; [ "$part" = all ] || exit 77; }
. "$(dirname "$0")/../lib.sh"
t_mpi_env
t_workdir
input=$src/inputs/gpt3-1.3b-a100-80gb.json
pass=0 fail=0
ok() { echo "ok    $1"; pass=$((pass+1)); }
bad() { echo "FAIL  $1"; fail=$((fail+1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
tps_of() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["tps"])' "$1"; }
plan_of() { t_plan 2>/dev/null <"$1"; }
# same_plan A.json B.json: both parse and agree (apart from timing)
same_plan() { local a b; a=$(plan_of "$1") && b=$(plan_of "$2") && [ -n "$a" ] && [ "$a" = "$b" ]; }
# no_partial NAME: no temporary file of NAME (.NAME.partial-XXXXXX) is left in the folder
no_partial() { ! compgen -G ".$1.partial*" >/dev/null; }
same_curve() { local a b; a=$("$piper" show "$1" --curve) && b=$("$piper" show "$2" --curve) && [ -n "$a" ] && [ "$a" = "$b" ]; }

# 1. write, no partial file, readable by h5dump
"$piper" plan "$input" --devices 32 --quiet --format json --out a.h5 >a.json 2>a.err
check "plan writes the archive" test $? -eq 0 -a -s a.h5
check "no temporary file left" no_partial a.h5
if ! want h5tools; then :
elif ! command -v h5dump >/dev/null; then skip "h5dump (hdf5-tools) is not installed"
else
  check "h5dump reads /plan" bash -c "h5dump -d /plan/stage_d a.h5 >/dev/null"
  check "h5dump reads /dp" bash -c "h5dump -H -g /dp a.h5 | grep -q step_value"
fi
if ! want h5tools; then :
elif /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
  check "h5py reads the plan, the curve and the input" /usr/bin/python3 -c "
import h5py, json
f = h5py.File('a.h5', 'r'); j = json.load(open('a.json'))
assert abs(f['/plan'].attrs['tps'] - j['tps']) <= 1e-12 * j['tps']
assert list(f['/plan/stage_d'][:]) == [s['d'] for s in j['stages']]
assert len(f['/curve/tps'][:]) == 32 and abs(f['/curve/tps'][31] - j['tps']) <= 1e-9 * j['tps']
assert f['/problem/input_json'][()] == open('$input', 'rb').read()
assert f['/downsets/members'].shape[0] == j['downsets']"
else
  skip "h5py (python3-h5py) is not installed"
fi
if want cli; then # sections 2-4 (not re-indented)
# 2. refuse to overwrite; --force overwrites
"$piper" plan "$input" --devices 32 --quiet --out a.h5 >/dev/null 2>b.err
check "existing archive refused (exit 2)" test $? -eq 2
check "refusal names the file and --force" grep -q "a.h5 exists; use --force" b.err
"$piper" plan "$input" --devices 32 --quiet --out a.h5 --force >/dev/null 2>&1
check "--force overwrites" test $? -eq 0
# 3. show: stored plan, other budgets, curve
"$piper" show a.h5 --format json >s.json 2>/dev/null
check "show prints the stored plan" same_plan s.json a.json
for k in 1 5 8 17 32; do
  "$piper" show a.h5 --devices $k --format json >sk.json 2>/dev/null; rc1=$?
  "$piper" plan "$input" --devices $k --quiet --no-archive --format json >fk.json 2>/dev/null; rc2=$?
  check "show --devices $k equals a fresh plan --devices $k" \
    test "$rc1" = "$rc2" -a "$(tps_of sk.json)" = "$(tps_of fk.json)"
done
"$piper" show a.h5 --curve >curve.csv
check "curve has a header and 32 rows" test "$(wc -l <curve.csv)" -eq 33
check "curve at k=32 equals the plan" python3 -c "
import json; t=json.load(open('a.json'))['tps']; row=open('curve.csv').read().splitlines()[32].split(',')
assert row[0]=='32' and abs(float(row[1])-t)<=1e-9*t, row"
"$piper" show a.h5 --devices 33 >/dev/null 2>e.err
check "show --devices beyond K refused (exit 2)" test $? -eq 2
# 4. damaged archives
head -c 20000 a.h5 >trunc.h5
"$piper" show trunc.h5 >/dev/null 2>t.err; rc=$?
check "truncated archive: exit 2" test $rc -eq 2
check "truncated archive: message names the file" grep -q "trunc.h5" t.err
printf 'not an archive' >junk.h5
"$piper" show junk.h5 >/dev/null 2>j.err
check "non-HDF5 file: exit 2 with a message" bash -c "test $? -eq 2 && grep -q 'not an HDF5 file' j.err"
"$piper" show missing.h5 >/dev/null 2>m.err
check "missing archive: exit 2" test $? -eq 2
cp a.h5 flip.h5
python3 - <<'PY'
import os
p='flip.h5'; n=os.path.getsize(p); f=open(p,'r+b')
for off in range(n//3, n, max(1,n//50)):
    f.seek(off); f.write(b'\xff'*64)
PY
"$piper" show flip.h5 >/dev/null 2>/dev/null; rc=$?
check "corrupted archive: no crash (exit $rc)" test $rc -lt 128
fi # sections 2-4

# 5. an interrupted run leaves the existing archive untouched and no partial file
big=$shared/piper-inputs/bert32a100.json
if ! want resume; then :
elif [ -r "$big" ]; then
  args=(--devices 2048 --memory 8GiB --microbatches 1920 --bandwidth 25GiB/s --quiet --checkpoint-every 0)
  "$piper" plan "$big" "${args[@]}" --format json --out full.h5 >full.json 2>/dev/null
  check "uninterrupted BERT-32 run" test $? -eq 0
  cp full.h5 keep.h5; sum0=$(md5sum <keep.h5)
  "$piper" plan "$big" "${args[@]}" --out keep.h5 --force >/dev/null 2>k.err & pid=$!
  sleep 1.5; kill -TERM $pid; wait $pid; rc=$?
  check "SIGTERM: exit 75" test $rc -eq 75
  check "SIGTERM: old archive untouched" test "$(md5sum <keep.h5)" = "$sum0"
  check "SIGTERM: no partial archive" no_partial keep.h5
  check "SIGTERM: checkpoint written" test -s keep.h5.ckpt
  check "SIGTERM: message says how to resume" grep -q -- "--resume" k.err
  # resume gives the same plan and curve as the uninterrupted run
  "$piper" plan "$big" "${args[@]}" --format json --out keep.h5 --resume >res.json 2>res.err
  check "resume: exit 0" test $? -eq 0
  check "resume: says it resumed" grep -q "resuming after layer" res.err
  check "resume: same plan" same_plan res.json full.json
  check "resume: same curve" same_curve keep.h5 full.h5
  check "resume: checkpoint removed" test ! -e keep.h5.ckpt
  # two ranks: SIGUSR1 to mpiexec is forwarded to the ranks
  mpiexec -np 2 --oversubscribe "$piper" plan "$big" "${args[@]}" --out two.h5 </dev/null >/dev/null 2>two.err & pid=$!
  sleep 2; kill -USR1 $pid; wait $pid; rc=$?
  check "2 ranks, SIGUSR1: exit 75 (got $rc)" test $rc -eq 75
  check "2 ranks, SIGUSR1: checkpoint written" test -s two.h5.ckpt
  mpiexec -np 2 --oversubscribe "$piper" plan "$big" "${args[@]}" --format json --out two.h5 --resume </dev/null >two.json 2>/dev/null
  check "2 ranks, resume: same plan as 1 rank uninterrupted" same_plan two.json full.json
  check "2 ranks, resume: same curve" same_curve two.h5 full.h5
  # foreign and damaged checkpoints are refused
  "$piper" plan "$big" "${args[@]}" --out c.h5 >/dev/null 2>&1 & pid=$!
  sleep 1.5; kill -TERM $pid; wait $pid
  "$piper" plan "$big" "${args[@]/2048/1024}" --out c.h5 --resume >/dev/null 2>c.err
  check "checkpoint of other parameters refused (exit 2)" bash -c "test $? -eq 2 && grep -q 'belongs to another input or other parameters' c.err"
  head -c 3000 c.h5.ckpt >c2 && mv c2 c.h5.ckpt
  "$piper" plan "$big" "${args[@]}" --out c.h5 --resume >/dev/null 2>c.err
  check "damaged checkpoint refused (exit 2)" bash -c "test $? -eq 2 && grep -q 'c.h5.ckpt' c.err"
  check "damaged checkpoint: no archive written" test ! -e c.h5
else
  skip "interruption and resume tests need $big"
fi

if want cli; then # sections 6-7 (not re-indented)
# 6. collect
"$piper" plan "$input" --devices 8 --quiet --out b.h5 >/dev/null 2>&1
"$piper" collect a.h5 b.h5 junk.h5 missing.h5 --format csv --out study.h5 >study.csv 2>col.err; rc=$?
check "collect: exit 0 with damaged inputs skipped" test $rc -eq 0
check "collect: two rows" test "$(wc -l <study.csv)" -eq 3
# paths with a comma and a quote are quoted (RFC 4180): every row has the header's fields
mkdir -p 'odd,"dir' && cp b.h5 'odd,"dir/b,1.h5'
"$piper" collect a.h5 'odd,"dir/b,1.h5' --format csv >quoted.csv 2>/dev/null
check "collect --format csv: a path with a comma and a quote is one field" python3 -c "
import csv; rows = list(csv.reader(open('quoted.csv')))
assert len(rows) == 3 and all(len(r) == len(rows[0]) for r in rows), rows
assert rows[2][0] == 'odd,\"dir/b,1.h5', rows[2][0]"
check "collect: damaged archives reported" bash -c "grep -q junk.h5 col.err && grep -q missing.h5 col.err"
check "collect: study archive written" test -s study.h5
"$piper" collect junk.h5 >/dev/null 2>&1
check "collect: nothing readable gives exit 2" test $? -eq 2

# 7. the other plan flags
"$piper" plan "$input" --devices 32 --no-archive --format json --quiet --no-dp >f.json 2>/dev/null
check "--no-dp: every stage has d = 1" python3 -c "import json; d=json.load(open('f.json')); assert d['stages'] and all(s['d']==1 for s in d['stages'])"
"$piper" plan "$input" --devices 32 --no-archive --format json --quiet --no-tp >f.json 2>/dev/null
check "--no-tp: every stage has t = 1" python3 -c "import json; d=json.load(open('f.json')); assert d['stages'] and all(s['t']==1 for s in d['stages'])"
"$piper" plan "$input" --devices 32 --memory 8GiB --no-archive --format json --quiet >g.json 2>/dev/null
"$piper" plan "$input" --devices 32 --memory 8GiB --no-archive --format json --quiet --no-recompute >f.json 2>/dev/null
check "--no-recompute: no recomputing TMPC, and no faster than with it" python3 -c "
import json; d=json.load(open('f.json')); g=json.load(open('g.json'))
assert 'activation recomp' in json.dumps(g['stages']), 'the baseline should recompute somewhere'
assert 'activation recomp' not in json.dumps(d['stages']) and (d['tps'] is None or d['tps'] >= g['tps'])"
"$piper" plan "$input" --devices 32 --memory 8GiB --no-archive --format json --quiet --knapsack exact >f.json 2>/dev/null
check "--knapsack exact: feasible and no slower than greedy" python3 -c "
import json; d=json.load(open('f.json')); g=json.load(open('g.json')); assert d['tps'] <= g['tps'] * (1 + 1e-12)"
"$piper" plan "$input" --no-archive --max-downsets 5 >/dev/null 2>f.err
check "--max-downsets: refused, saying how many were found" bash -c "test $? -eq 1 && grep -q 'more than 5 downsets' f.err"
"$piper" plan "$input" --no-archive --max-memory-use 1KB >/dev/null 2>f.err
check "--max-memory-use: refused with the estimate" bash -c "test $? -eq 1 && grep -q 'max-memory-use' f.err"
"$piper" plan "$input" --no-archive --format json >/dev/null 2>f.err
check "progress lines on a non-terminal standard error" grep -q "piper: layer .* of the work, elapsed" f.err
"$piper" plan "$input" --no-archive --quiet --format json >/dev/null 2>f.err
check "--quiet: no progress" test ! -s f.err
fi # sections 6-7

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
