#!/usr/bin/env bash
# Grid flags for the sharding and schedule options (zero1..zero3, 1f1b, gpipe): a sweep
# row with them gets the plan `piper plan` finds with --zero/--schedule (same archive
# tables, plan and curve; the sweep's tables cut to a smaller budget read back), rows differing in them are not merged into one DP, `collect` reports the ZeRO
# level, the node size, the intra-node bandwidth and the schedule in its columns, show's JSON
# report carries them, bad flags are named with their grid line (C reader and jobs/lib/grid.sh),
# and the shipped what-if grid passes `jobs/sweep.sbatch --check`.
# usage: run_study_flags.sh PIPER REPO
set -uo pipefail
piper=$1 repo=$2
. "$(dirname "$0")/../lib.sh"
t_need h5diff "h5diff (hdf5-tools)"
t_workdir
"$piper" gen gpt3-1.3b --gpu a100-80gb --layers 6 --devices 32 --global-batch 64 --memory-parts --two-level \
  --variants all -o g.json || { echo "FAIL gen"; exit 1; }
"$piper" gen gpt3-1.3b --gpu a100-80gb --layers 6 --devices 32 --global-batch 64 --memory-parts --two-level \
  -o g2.json || { echo "FAIL gen"; exit 1; }
{
  printf 'name\tinput\tdevices\tmemory\tbandwidth\tmicrobatches\tflags\n'
  printf 'z0\tg.json\t16\t8GB\t25GB/s\t64\tnone\n'
  printf 'z1\tg.json\t16\t8GB\t25GB/s\t64\tzero1\n'
  printf 'z3-1f1b\tg.json\t16\t8GB\t25GB/s\t64\tzero3,1f1b\n'
  printf 'z3-1f1b-k8\tg.json\t8\t8GB\t25GB/s\t64\tzero3,1f1b\n'
  printf 'gpipe\tg2.json\t16\t8GB\t25GB/s\t64\tzero2,gpipe\n'
  printf 'g-k8\tg2.json\t8\t8GB\t25GB/s\t64\tzero2,gpipe\n'
  printf 'g-k5\tg2.json\t5\t8GB\t25GB/s\t64\tzero2,gpipe\n'
} > grid.tsv
"$piper" sweep grid.tsv --out-dir o --quiet > o.out 2> o.err && ok "sweep: exit 0" || { bad "sweep: exit $?"; cat o.err; }
same() { # [-i INPUT] NAME plan options...: the row's archive equals piper plan's
  local in=g.json
  if [ "$1" = -i ]; then in=$2; shift 2; fi
  local name=$1
  shift
  "$piper" plan "$in" --memory 8GB --bandwidth 25GB/s --microbatches 64 --quiet --out "p-$name.h5" "$@" > /dev/null 2>&1 ||
    { bad "$name: plan $* failed"; return; }
  for grp in /dp /plan /curve; do
    h5diff -q "o/$name.h5" "p-$name.h5" "$grp" > /dev/null 2>&1 || { bad "$name: sweep and plan $* differ in $grp"; return; }
  done
  ok "$name: sweep row = plan $*"
}
same z0 --devices 16
same z1 --devices 16 --zero 1
same z3-1f1b --devices 16 --zero 3 --schedule 1f1b
same z3-1f1b-k8 --devices 8 --zero 3 --schedule 1f1b
same -i g2.json gpipe --devices 16 --zero 2 --schedule gpipe
same -i g2.json g-k8 --devices 8 --zero 2 --schedule gpipe
same -i g2.json g-k5 --devices 5 --zero 2 --schedule gpipe
for h5 in o/*.h5; do # every row archive reads back: its /curve is the optimum of its tables
  "$piper" show "$h5" > /dev/null 2> show.err || bad "show $h5: $(cat show.err)"
done
"$piper" collect o/*.h5 --format csv > study.csv 2> /dev/null || bad "collect: exit $?"
python3 - << 'PY' && ok "collect: zero, node and schedule columns" || bad "collect columns: $(cat study.csv)"
import csv
rows = {r["archive"].split("/")[-1]: r for r in csv.DictReader(open("study.csv"))}
want = {"z0.h5": ("0", "2bw", "0"), "z1.h5": ("1", "2bw", "0"), "z3-1f1b.h5": ("3", "1f1b", "0"),
        "gpipe.h5": ("2", "gpipe", "0")}
for name, (zero, sched, uni) in want.items():
    r = rows[name]
    assert (r["zero"], r["schedule"], r["uniform"]) == (zero, sched, uni), (name, r)
    assert r["devices_per_node"] == "8" and float(r["intra_node_bandwidth_bytes_per_s"]) == 300e9, r
PY
"$piper" collect o/z1.h5 > study.txt 2> /dev/null && grep -q ' 1 8, ' study.txt && ok "collect text: zero and node" ||
  bad "collect text: $(cat study.txt)"
"$piper" show o/z3-1f1b.h5 --format json > show.json 2> /dev/null
grep -q '"zero": 3, "devices_per_node": 8, "intra_node_bandwidth": 300000000000, "bandwidth": 25000000000' show.json &&
  ok "show JSON: zero and network" || bad "show JSON: $(cut -c1-300 show.json)"
# bad flags: named with the grid line, by the C reader and by grid.sh
printf 'name\tinput\tdevices\tmemory\tbandwidth\tmicrobatches\tflags\nx\tg.json\t8\t8GB\t25GB/s\t64\tzero4\n' > bad.tsv
"$piper" sweep bad.tsv --out-dir ob --quiet > /dev/null 2> ob.err
rc=$?
[ $rc -eq 2 ] && grep -q "bad.tsv:2: .*unknown flag 'zero4'" ob.err && ok "sweep: zero4 refused (line 2)" ||
  bad "sweep zero4: exit $rc, $(cat ob.err)"
PIPER=$piper bash "$repo/jobs/sweep.sbatch" --check bad.tsv > /dev/null 2> cb.err
rc=$?
[ $rc -ne 0 ] && grep -q "bad.tsv:2: .*unknown flag 'zero4'" cb.err && ok "sweep.sbatch --check: zero4 refused" ||
  bad "sweep.sbatch --check zero4: exit $rc, $(cat cb.err)"
PIPER=$piper bash "$repo/jobs/sweep.sbatch" --check "$repo/jobs/grids/llama2-70b-whatif.tsv" > check.out 2>&1 &&
  ok "shipped what-if grid passes --check" || bad "what-if grid --check: $(tail -3 check.out)"
t_done
