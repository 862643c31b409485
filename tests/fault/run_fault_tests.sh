#!/usr/bin/env bash
# Faults a cluster deals in, each asserting the exit code, the message, the
# time to exit and that nothing valid is lost (an existing archive keeps its
# bytes, no temporary .NAME.partial-* file remains):
#   disk  - a full disk (small tmpfs) at 1 and 2 ranks, and a read-only
#           --out folder; needs mount (root): exit 77 (Skipped) otherwise;
#   stop  - SIGTERM during the last layer and the write, SIGHUP mid-run,
#           SIGTERM with --no-archive, SIGTERM to mpirun, kill -9 of a rank,
#           a checkpoint that cannot be created, --out missing or a folder
#           (checked before the search), two runs on one --out, and out of
#           memory (ulimit -v) at 1 and 2 ranks.
# usage: run_fault_tests.sh PIPER SOURCE_DIR disk|stop
set -uo pipefail
piper=$(realpath "$1") src=$(realpath "$2") part=$3
. "$(dirname "$0")/../lib.sh"
t_mpi_env
unset PIPER_MPI
work=$(mktemp -d)
mounts=()
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
pass=0 fail=0
check() {
  local name=$1
  shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL  $name"; fail=$((fail + 1)); fi
}
no_partial() { ! compgen -G "$1/.*.partial*" >/dev/null; } # no temporary file in folder $1
now() { date +%s.%N; }
within() { python3 -c "import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) <= float(sys.argv[3]) else 1)" "$1" "$(now)" "$2"; }
input=$src/inputs/gpt3-1.3b-a100-80gb.json
# a long run: 13 independent nodes (8,192 downsets in 13 layers, 1.6 M pairs) at K = 64, about
# 4.5 s on one idle core, most of it in layers 7-11, so that signals sent on a progress line still
# find the run going (the kernels' screens plan generated chains of this size in 0.1-0.3 s)
python3 -c 'import json
nodes = [{"id": i, "TMPCs": {str(t): [{"id": x, "timePerSample": (1.0 + 0.1 * i + 0.3 * r) * 1.1 / t,
  "parameterSize": 1e8 * (1 + i % 3), "memoryUsageA": (2e7 if r else 1e8) / t, "memoryUsageB": 2e8 / t,
  "syncTimeFw": {}, "syncTimeBw": {}} for r, x in enumerate(["vanilla", "activation recomp"])]
  for t in (1, 2, 4)}} for i in range(13)]
json.dump({"maxDevices": 64, "maxMemoryPerDevice": 4e9, "bandwidth": 1e9, "mbsInBatch": 64, "edges": [],
  "nodes": nodes}, open("wide13.json", "w"))' || { echo "FAIL  making wide13.json"; exit 1; }
long=(wide13.json --devices 64 --checkpoint-every 0)

# wait_for FILE PATTERN SECONDS: until FILE has a line matching PATTERN
wait_for() {
  local i
  for ((i = 0; i < $3 * 20; i++)); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

if [ "$part" = disk ]; then
  mkdir -p full ro
  if ! mount -t tmpfs -o size=160k tmpfs full 2>/dev/null; then
    echo "SKIPPED: cannot mount a tmpfs here (needs root and mount rights)"
    exit 77
  fi
  mounts+=(full)
  "$piper" plan "$input" --devices 8 --quiet --out full/a.h5 >/dev/null 2>&1
  check "disk: the old archive fits" test -s full/a.h5
  sum0=$(md5sum <full/a.h5)
  for np in 1 2; do
    t0=$(now)
    if [ $np = 1 ]; then
      timeout 60 "$piper" plan "$input" --devices 32 --quiet --out full/a.h5 --force >/dev/null 2>e$np.err
    else
      timeout 60 mpiexec -np 2 "$piper" plan "$input" --devices 32 --quiet --out full/a.h5 --force \
        </dev/null >/dev/null 2>e$np.err
    fi
    rc=$?
    check "disk full, $np rank(s): exit 1 (got $rc; 124 = hung)" test $rc -eq 1
    check "disk full, $np rank(s): within 20 s" within "$t0" 20
    check "disk full, $np rank(s): message names the file and the full disk" \
      grep -q "full/a.h5: writing failed: .*No space left on device" e$np.err
    check "disk full, $np rank(s): old archive untouched" test "$(md5sum <full/a.h5)" = "$sum0"
    check "disk full, $np rank(s): no partial file" no_partial full
  done
  check "disk full: the old archive still reads" "$piper" show full/a.h5 --curve >/dev/null 2>&1
  # a read-only folder is found before the search starts
  mount -t tmpfs -o size=64k,ro tmpfs ro && mounts+=(ro)
  t0=$(now)
  "$piper" plan "${long[@]}" --quiet --out ro/b.h5 >/dev/null 2>ro.err
  rc=$?
  check "read-only --out: exit 2 (got $rc)" test $rc -eq 2
  check "read-only --out: refused before the search (within 2 s)" within "$t0" 2
  check "read-only --out: message names the folder and the reason" grep -q "ro/b.h5: cannot create a file in the folder ro: Read-only file system" ro.err
  echo "$pass passed, $fail failed"
  [ $fail -eq 0 ]
  exit
fi

# ---- stop ----
"$piper" plan "$input" --devices 8 --quiet --out keep.h5 >/dev/null 2>&1
sum0=$(md5sum <keep.h5)

# --out missing or a folder: refused before the search
t0=$(now)
"$piper" plan "${long[@]}" --quiet --out nowhere/x.h5 >/dev/null 2>o.err
rc=$?
check "--out in a missing folder: exit 2 (got $rc)" test $rc -eq 2
check "--out in a missing folder: before the search (within 2 s)" within "$t0" 2
check "--out in a missing folder: message" grep -q "nowhere/x.h5: the folder nowhere does not exist" o.err
mkdir -p adir
"$piper" plan "${long[@]}" --quiet --out adir --force >/dev/null 2>o.err
rc=$?
check "--out naming a folder: exit 2 (got $rc)" test $rc -eq 2
check "--out naming a folder: message" grep -q "adir is a folder" o.err

# SIGTERM during the last layer: the layer is abandoned and the checkpoint of
# the others written (exit 75); if the signal comes only after the layer's
# computation (a fast machine), the run finishes and writes its archive; if
# the run has ended before the signal (the last layer is short), it has too
rm -f last.h5*
"$piper" plan "${long[@]}" --format json --out last.h5 >last.json 2>last.err &
pid=$!
pids+=($pid)
wait_for last.err "layer 12/13" 60
t0=$(now)
signalled=1
kill -TERM $pid 2>/dev/null || signalled=0
wait $pid
rc=$?
if [ $signalled = 0 ]; then
  check "the run ended before the signal at the last layer: exit 0 (got $rc)" test $rc -eq 0
  check "the run ended before the signal at the last layer: the archive is complete" "$piper" show last.h5 --curve >/dev/null 2>&1
elif [ $rc -eq 75 ]; then
  # (the progress line of layer 12 comes when its work passes 95%, so the signal may land in 12)
  check "SIGTERM at the last layer: says it was abandoned" \
    grep -qE "during layer (12 of 13 \(abandoned; layers 1-11|13 of 13 \(abandoned; layers 1-12) are complete\); checkpoint saved" last.err
  check "SIGTERM at the last layer: checkpoint written, no archive" bash -c "test -s last.h5.ckpt && test ! -e last.h5"
else
  check "SIGTERM at the last layer: exit 75 or 0 (got $rc)" test $rc -eq 0
  check "SIGTERM after the last layer: says so" grep -q "stop requested during the last layer" last.err
  check "SIGTERM after the last layer: the archive is complete" "$piper" show last.h5 --curve >/dev/null 2>&1
  check "SIGTERM after the last layer: no checkpoint left" test ! -e last.h5.ckpt
fi
check "SIGTERM at the last layer: no partial file" bash -c "! compgen -G '.last.h5.partial*' >/dev/null"
check "SIGTERM at the last layer: within 10 s" within "$t0" 10

# SIGTERM during the write: the write completes
rm -f w.h5*
"$piper" plan "${long[@]}" --format json --out w.h5 >w.json 2>w.err &
pid=$!
pids+=($pid)
wait_for w.err "layer 13/13" 60
kill -TERM $pid
wait $pid
rc=$?
check "SIGTERM during the write: exit 0 (got $rc)" test $rc -eq 0
check "SIGTERM during the write: the archive is complete" "$piper" show w.h5 --curve >/dev/null 2>&1
check "SIGTERM during the write: no partial file" no_partial .

# SIGHUP mid-run: an orderly stop like SIGTERM (checkpoint, exit 75), old archive untouched
cp keep.h5 hup.h5
"$piper" plan "${long[@]}" --out hup.h5 --force >/dev/null 2>hup.err &
pid=$!
pids+=($pid)
wait_for hup.err "layer 6/13" 60
t0=$(now)
kill -HUP $pid
wait $pid
rc=$?
check "SIGHUP mid-run: exit 75 (got $rc)" test $rc -eq 75
check "SIGHUP mid-run: checkpoint written" test -s hup.h5.ckpt
check "SIGHUP mid-run: old archive untouched" test "$(md5sum <hup.h5)" = "$sum0"
check "SIGHUP mid-run: no partial file" no_partial .
check "SIGHUP mid-run: within 10 s" within "$t0" 10

# --no-archive: a stop says nothing was saved
"$piper" plan "${long[@]}" --no-archive >/dev/null 2>na.err &
pid=$!
pids+=($pid)
wait_for na.err "layer 6/13" 60
kill -TERM $pid
wait $pid
rc=$?
check "--no-archive, SIGTERM: exit 75 (got $rc)" test $rc -eq 75
check "--no-archive, SIGTERM: says nothing was saved" grep -q "nothing saved (--no-archive)" na.err
check "--no-archive, SIGTERM: no empty checkpoint path" bash -c "! grep -q 'checkpoint saved to ;' na.err"

# a checkpoint that cannot be created: a warning, and the run goes on to its archive
rm -rf nock.h5*
mkdir nock.h5.ckpt
"$piper" plan "$input" --devices 32 --quiet --out nock.h5 --checkpoint-every 0 >/dev/null 2>nock.err
rc=$?
check "checkpoint impossible: exit 0 (got $rc)" test $rc -eq 0
check "checkpoint impossible: warned" grep -q "warning: no checkpoint after layer" nock.err
check "checkpoint impossible: archive complete" "$piper" show nock.h5 --curve >/dev/null 2>&1
check "checkpoint impossible: no partial file" no_partial .

# two runs on one --out: the last rename wins and the file is complete
rm -f two.h5
"$piper" plan "$input" --devices 32 --quiet --out two.h5 --force >/dev/null 2>t1.err &
p1=$!
"$piper" plan "$input" --devices 32 --quiet --out two.h5 --force >/dev/null 2>t2.err &
p2=$!
pids+=($p1 $p2)
wait $p1
r1=$?
wait $p2
r2=$?
check "two runs on one --out: both exit 0 (got $r1, $r2)" test $r1 -eq 0 -a $r2 -eq 0
check "two runs on one --out: a complete archive" "$piper" show two.h5 --curve >/dev/null 2>&1
check "two runs on one --out: no partial file" no_partial .

# kill -9 of one rank: the job ends soon, the old archive is untouched
cp keep.h5 k9.h5
mpiexec -np 2 "$piper" plan "${long[@]}" --out k9.h5 --force </dev/null >/dev/null 2>k9.err &
pid=$!
pids+=($pid)
wait_for k9.err "layer 6/13" 60
victim=$(pgrep -P $pid -f "piper plan" | tail -n 1)
t0=$(now)
[ -n "$victim" ] && kill -9 "$victim"
wait $pid
rc=$?
check "kill -9 of a rank: the job fails (got $rc)" test $rc -ne 0
check "kill -9 of a rank: ends within 10 s" within "$t0" 10
check "kill -9 of a rank: old archive untouched" test "$(md5sum <k9.h5)" = "$sum0"

# SIGTERM to mpirun: the ranks checkpoint; mpirun reports its own status (1)
cp keep.h5 mt.h5
# (four times the devices: mpirun forwards the signal only after a delay, and
# the run must still be going then)
mpiexec -np 2 "$piper" plan wide13.json --devices 256 --checkpoint-every 0 \
  --out mt.h5 --force </dev/null >/dev/null 2>mt.err &
pid=$!
pids+=($pid)
wait_for mt.err "layer [4-6]/13" 60
t0=$(now)
kill -TERM $pid
wait $pid
rc=$?
check "SIGTERM to mpirun: non-zero exit (got $rc)" test $rc -ne 0
# mpirun forwards the signal when it gets to it: on a fast machine the ranks may
# already be writing the archive, which they then finish (as a stop during the
# write does).  Either way nothing valid is lost: a checkpoint and the old
# archive, or a complete new archive and no checkpoint.
if [ -e mt.h5.ckpt ]; then
  check "SIGTERM to mpirun: checkpoint written" test -s mt.h5.ckpt
  check "SIGTERM to mpirun: says how to resume" grep -q -- "--resume" mt.err
  check "SIGTERM to mpirun: old archive untouched" test "$(md5sum <mt.h5)" = "$sum0"
else
  check "SIGTERM to mpirun after the last layer: the new archive is complete" "$piper" show mt.h5 --curve >/dev/null 2>&1
fi
check "SIGTERM to mpirun: within 10 s" within "$t0" 10
check "no partial file after the MPI faults" no_partial .

# out of memory: exit 1 with a message, at 1 and 2 ranks (not SIGABRT's 134)
if [ -n "${PIPER_SANITIZED:-}" ]; then
  echo "SKIPPED: out of memory under ulimit -v (the sanitizers reserve terabytes of address space)"
else
  # 40 independent nodes: 2^40 downsets, whose enumeration (limits raised) allocates until the
  # address-space limit stops it, on rank 0 before any shared-memory window exists
  python3 -c 'import json; json.dump({"maxDevices": 4, "maxMemoryPerDevice": 1e12, "bandwidth": 1e9,
    "mbsInBatch": 4, "edges": [], "nodes": [{"id": i, "TMPCs": {"1": [{"id": "vanilla",
    "timePerSample": 1.0, "parameterSize": 1, "memoryUsageA": 1, "memoryUsageB": 1, "syncTimeFw": {},
    "syncTimeBw": {}}]}} for i in range(40)]}, open("wide40.json", "w"))'
  oom=(wide40.json --max-downsets 100000000 --max-memory-use 100GB --no-archive --quiet)
  t0=$(now)
  (ulimit -v 200000 && exec "$piper" plan "${oom[@]}") >/dev/null 2>m1.err
  rc=$?
  check "out of memory, 1 rank: exit 1 (got $rc)" test $rc -eq 1
  check "out of memory, 1 rank: message" grep -q "piper: fatal: out of memory allocating" m1.err
  (ulimit -v 300000 && exec timeout 60 mpiexec -np 2 "$piper" plan "${oom[@]}") </dev/null >/dev/null 2>m2.err
  rc=$?
  check "out of memory, 2 ranks: exit 1 (got $rc)" test $rc -eq 1
  check "out of memory, 2 ranks: message" grep -q "piper: fatal: out of memory allocating" m2.err
  # a bound against a hang, not a speed test: the two runs (mpiexec start-up included) take a few
  # seconds when the machine is idle and far longer when it is shared
  check "out of memory: within 120 s" within "$t0" 120
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
