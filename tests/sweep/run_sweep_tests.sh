#!/usr/bin/env bash
# `piper sweep` from the command line: a grid with good and bad rows (the
# bad ones reported as GRID:LINE, the others planned), every row's archive
# identical to `piper plan`'s for that row (rows differing only in K come
# from one DP), rerunning skips what is done, an interrupted sweep resumes,
# collect reads the result, and 2 ranks (two teams, or one team of two)
# give the same archives.  Also: a run without a launcher (no MPI, serial
# HDF5 driver) writes the same tables as one under mpiexec; groups of two
# inputs in turn (a team keeps the last group's input) give piper plan's
# archives.
# usage: run_sweep_tests.sh PIPER REPO
set -uo pipefail
piper=$1 repo=$2
. "$(dirname "$0")/../lib.sh"
t_mpi_env
t_need h5diff "h5diff (hdf5-tools)"
t_need mpiexec
t_workdir
same_archive() { # A.h5 B.h5: the same problem, tables, plan and curve
  for g in /problem /downsets /dp /plan /curve; do
    h5diff -q "$1" "$2" "$g" >/dev/null 2>&1 || { echo "  $1 and $2 differ in $g"; return 1; }
  done
}
B=$repo/inputs/bert-large-a100-40gb.json
mkdir in && cp "$B" in/bert.json && echo '{"nodes": [' >in/broken.json
{
  printf 'name\tinput\tdevices\tmemory\tbandwidth\tmicrobatches\tflags\n'
  for m in 8GiB 16GiB; do for k in 8 32 16; do printf 'b-k%s-m%s\tin/bert.json\t%s\t%s\t25GiB/s\t512\tnone\n' $k $m $k $m; done; done
  printf 'bad-unit\tin/bert.json\t8\t8XiB\t25GiB/s\t512\tnone\n'
  printf 'bad-input\tin/missing.json\t8\t8GiB\t25GiB/s\t512\tnone\n'
  printf 'b-k8-m8GiB\tin/bert.json\t4\t8GiB\t25GiB/s\t512\tnone\n'
  printf 'bad-json\tin/broken.json\t4\t8GiB\t25GiB/s\t512\tnone\n'
  printf '\tin/bert.json\t4\t8GiB\t25GiB/s\t512\tno-dp,no-tp\n'
} >grid.tsv

# 1. good and bad rows, serial
"$piper" sweep grid.tsv --out-dir o1 >o1.out 2>o1.err
rc=$?
[ $rc -eq 2 ] && ok "bad rows: exit 2" || bad "bad rows: exit $rc, expected 2"
for want in 'grid.tsv:8: memory' 'grid.tsv:9: input' 'grid.tsv:10: name' 'grid.tsv:11: bad-json'; do
  grep -q "$want" o1.err && ok "reported: $want" || { bad "not reported: $want"; sed 's/^/  /' o1.err; }
done
n=$(ls o1/*.txt 2>/dev/null | wc -l)
[ "$n" -eq 7 ] && ok "7 good rows planned" || bad "$n rows planned, expected 7"
grep -q '7 rows planned' o1.out && ok "summary" || bad "summary: $(tail -1 o1.out)"
grep -q 'rows done 8/8' o1.err && ok "progress over the grid" || bad "no grid-wide progress line"

# 2. each row's archive is what piper plan writes for that row
for r in "8 8GiB" "16 16GiB" "32 8GiB"; do
  set -- $r
  "$piper" plan "$PWD/in/bert.json" --devices "$1" --memory "$2" --bandwidth 25GiB/s --microbatches 512 --quiet \
    --out "p-$1-$2.h5" >/dev/null 2>&1
  same_archive "p-$1-$2.h5" "o1/b-k$1-m$2.h5" && ok "row k=$1 m=$2 = piper plan" || bad "row k=$1 m=$2 differs from piper plan"
done
f=o1/row010-bert-k4-m8GiB-n512-bw25GiBps-nodp-notp.h5
[ -f "$f" ] && ok "generated name" || bad "no $f: $(ls o1)"

# 3. rerun: nothing to do
"$piper" sweep grid.tsv --out-dir o1 --quiet >o1b.out 2>/dev/null
grep -q '0 rows planned.*7 done before' o1b.out && ok "rerun skips done rows" || bad "rerun: $(tail -1 o1b.out)"

# 4. collect reads the result
"$piper" collect o1/*.h5 --format csv >study.csv 2>/dev/null
n=$(($(wc -l <study.csv) - 1))
[ "$n" -eq 7 ] && ok "collect: 7 rows" || bad "collect: $n rows"

# 5. two ranks: two teams (two groups), then one team of two (one group)
grep -v m16GiB grid.tsv | head -4 >one.tsv
mpiexec -np 2 "$piper" sweep grid.tsv --out-dir o2 --quiet >/dev/null 2>o2.err
for f in o1/b-*.h5; do same_archive "$f" "o2/${f#o1/}" || bad "np=2: ${f#o1/} differs"; done
mpiexec -np 2 "$piper" sweep one.tsv --out-dir o3 --quiet >/dev/null 2>o3.err
rc=$?
ranks=$(h5dump -a /run/ranks o3/b-k32-m8GiB.h5 2>/dev/null | grep -c '(0): 2')
[ $rc -eq 0 ] && [ "$ranks" -eq 1 ] && ok "one group on a team of 2 ranks" || bad "one team of 2: exit $rc, ranks $ranks"
for f in o3/*.h5; do same_archive "$f" "o1/${f#o3/}" || bad "team of 2: ${f#o3/} differs"; done
[ "$t_status" -eq 0 ] && ok "np=2 archives identical"

# stop_resume WHAT GRID DIR CKPT MUST: plans GRID into DIR-full, then into DIR with a checkpoint
# after every layer and SIGUSR1 once DIR/CKPT is there, and reruns it: exit 0, no checkpoint
# set aside, archives equal to DIR-full's, none left behind; with MUST=1 (one group: the
# stop comes after its checkpoint) the rerun must say it resumed.
stop_resume() {
  local what=$1 grid=$2 dir=$3 ckpt=$4 must=$5 pid rc
  "$piper" sweep "$grid" --out-dir "$dir-full" --quiet >/dev/null 2>&1
  "$piper" sweep "$grid" --out-dir "$dir" --checkpoint-every 0 --quiet >"$dir.out" 2>"$dir.err" &
  pid=$!
  for _ in $(seq 1 200); do [ -e "$dir/$ckpt" ] && break; sleep 0.05; done
  kill -USR1 $pid
  wait $pid
  rc=$?
  if [ $rc -eq 75 ]; then
    ok "$what: stopped: exit 75"
    "$piper" sweep "$grid" --out-dir "$dir" >"$dir.2.out" 2>"$dir.2.err"
    rc=$?
    [ $rc -eq 0 ] && ok "$what: resumed: exit 0" || bad "$what: resumed: exit $rc: $(head -c 300 "$dir.2.err")"
    grep -q ignoring "$dir.2.err" && bad "$what: checkpoint set aside: $(grep -m1 ignoring "$dir.2.err")"
    if grep -q resuming "$dir.2.err"; then
      ok "$what: resumed from the checkpoint"
    elif [ "$must" = 1 ]; then
      bad "$what: did not resume"
    else
      echo "note: $what: stopped before the first checkpoint"
    fi
  else
    echo "note: $what: the sweep ended (exit $rc) before the signal; resume not exercised this time"
  fi
  for f in "$dir-full"/*.h5; do
    same_archive "$f" "$dir/${f##*/}" || bad "$what: resumed: ${f##*/} differs"
  done
  ls "$dir"/*.ckpt >/dev/null 2>&1 && bad "$what: checkpoint left behind"
}

# 6. interrupted and resumed: a larger grid of two groups, SIGUSR1 while the DP runs; then one
# group of 1f1b rows, whose checkpoint holds Pareto rows (not 2bw's staircases)
{
  printf 'name\tinput\tdevices\tmemory\tbandwidth\tmicrobatches\tflags\n'
  for k in 256 512 1024; do printf 'big-k%s\tin/bert.json\t%s\t8GiB\t25GiB/s\t512\tnone\n' $k $k; done
  for k in 64 128; do printf 'small-k%s\tin/bert.json\t%s\t16GiB\t25GiB/s\t512\tnone\n' $k $k; done
} >big.tsv
stop_resume 2bw big.tsv cut big-k1024.h5.ckpt 0
{
  printf 'name\tinput\tdevices\tmemory\tbandwidth\tmicrobatches\tflags\n'
  for k in 256 512; do printf 'sync-k%s\tin/bert.json\t%s\t8GiB\t25GiB/s\t512\t1f1b\n' $k $k; done
} >sync.tsv
stop_resume 1f1b sync.tsv scut sync-k512.h5.ckpt 1

# 7. no launcher: no MPI, serial HDF5 driver; same tables as under mpiexec
"$piper" plan "$PWD/in/bert.json" --devices 64 --quiet --out direct.h5 >/dev/null 2>&1
mpiexec -np 1 "$piper" plan "$PWD/in/bert.json" --devices 64 --quiet --out mpi.h5 >/dev/null 2>&1
same_archive direct.h5 mpi.h5 && ok "direct run = mpiexec -np 1" || bad "direct run differs from mpiexec -np 1"
PIPER_MPI=0 OMPI_COMM_WORLD_SIZE=1 "$piper" plan in/bert.json --devices 8 --quiet --no-archive --format json |
  grep -q '"ranks": 1' && ok "PIPER_MPI=0" || bad "PIPER_MPI=0"

# 8. --planner equi: every row's archive and text as `piper plan --planner equi`, at 1 and 2 ranks
{
  printf 'name\tinput\tdevices\tmemory\tbandwidth\tmicrobatches\tflags\n'
  for k in 8 32 16; do printf 'e-k%s\tin/bert.json\t%s\t8GiB\t25GiB/s\t512\tnone\n' $k $k; done
} >equi.tsv
"$piper" sweep equi.tsv --out-dir eq1 --planner equi --quiet >eq1.out 2>eq1.err
rc=$?
[ $rc -eq 0 ] && ok "equi sweep: exit 0" || bad "equi sweep: exit $rc ($(cat eq1.err))"
mpiexec -np 2 "$piper" sweep equi.tsv --out-dir eq2 --planner equi --quiet >/dev/null 2>&1 || bad "equi sweep np2"
for k in 8 32 16; do
  "$piper" plan "$PWD/in/bert.json" --devices $k --memory 8GiB --bandwidth 25GiB/s --microbatches 512 --planner equi \
    --quiet --out eqp-$k.h5 >eqp-$k.txt 2>/dev/null
  for d in eq1 eq2; do
    for g in /problem /plan /curve; do
      h5diff -q eqp-$k.h5 $d/e-k$k.h5 $g >/dev/null 2>&1 || bad "equi $d/e-k$k.h5 differs from plan in $g"
    done
  done
  grep -q 'equi baseline' eq1/e-k$k.txt || bad "equi e-k$k.txt is not an equi report"
  diff <(grep -v -e 'archive:' -e 'search:' eqp-$k.txt) <(grep -v -e 'archive:' -e 'search:' eq1/e-k$k.txt) >/dev/null ||
    bad "equi e-k$k.txt differs from plan's report"
done
h5dump -a /problem/planner eq1/e-k8.h5 2>/dev/null | grep -q equi && ok "equi sweep: archives of the equi planner" ||
  bad "equi sweep: /problem planner is not equi"
"$piper" sweep equi.tsv --out-dir eq3 --planner nope >/dev/null 2>eq3.err
rc=$?
[ $rc -eq 2 ] && grep -q -- "--planner" eq3.err && ok "--planner nope: exit 2" || bad "--planner nope: exit $rc"

# 9. inputs kept from group to group: groups of two inputs in turn (two of one input next to each
# other, then the other input, then the first again); every row = piper plan of that row
G=$repo/inputs/gpt3-1.3b-a100-80gb.json
cp "$G" in/gpt.json
{
  printf 'name\tinput\tdevices\tmemory\tbandwidth\tmicrobatches\tflags\n'
  printf 'kb-8\tin/bert.json\t8\t8GiB\t25GiB/s\t512\tnone\n'
  printf 'kb-16\tin/bert.json\t8\t16GiB\t25GiB/s\t512\tnone\n'
  printf 'kg-16\tin/gpt.json\t8\t16GiB\t25GiB/s\t512\tnone\n'
  printf 'kb-12\tin/bert.json\t8\t12GiB\t25GiB/s\t512\tnone\n'
} >kept.tsv
"$piper" sweep kept.tsv --out-dir kept --quiet >/dev/null 2>kept.err || bad "kept inputs: sweep failed ($(cat kept.err))"
for r in "kb-8 bert 8GiB" "kb-16 bert 16GiB" "kg-16 gpt 16GiB" "kb-12 bert 12GiB"; do
  set -- $r
  "$piper" plan "$PWD/in/$2.json" --devices 8 --memory "$3" --bandwidth 25GiB/s --microbatches 512 --quiet \
    --out "kp-$1.h5" >/dev/null 2>&1
  same_archive "kp-$1.h5" "kept/$1.h5" && ok "kept inputs: $1 = piper plan" || bad "kept inputs: $1 differs"
done

t_done
