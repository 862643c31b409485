#!/usr/bin/env bash
# jobs/sweep.sbatch --check asks piper about every row: values piper refuses (devices beyond its
# limit, a memory that overflows, too many microbatches) are reported as GRID:LINE with piper's
# own message and exit 2; a valid grid still passes.  No Slurm needed (--check runs nothing).
# usage: run_grid_check.sh PIPER SOURCE_DIR
set -uo pipefail
piper=$(realpath "$1") src=$(realpath "$2")
. "$(dirname "$0")/../lib.sh"
t_workdir
in=$src/inputs/gpt3-1.3b-a100-80gb.json
pass=0 fail=0
check() {
  local name=$1
  shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL  $name"; fail=$((fail + 1)); fi
}
printf 'input\tdevices\tmemory\tbandwidth\tmicrobatches\tflags\n' >bad.tsv
printf '%s\t5000000\t8GiB\t25GiB/s\t512\tnone\n' "$in" >>bad.tsv
printf '%s\t8\t1e400\t25GiB/s\t512\tnone\n' "$in" >>bad.tsv
printf '%s\t8\t8GiB\t25GiB/s\t999999999\tnone\n' "$in" >>bad.tsv
printf '%s\t8\t8GiB\t25GiB/s\t512\tnone\n' "$in" >>bad.tsv
PIPER=$piper bash "$src/jobs/sweep.sbatch" --check bad.tsv >out.txt 2>err.txt
rc=$?
check "grid with values piper refuses: exit 2 (got $rc)" test $rc -eq 2
check "devices beyond piper's limit, named by line" grep -q "bad.tsv:2: piper refuses this row: --devices: must be between 1 and 1000000" err.txt
check "memory 1e400, named by line" grep -q "bad.tsv:3: piper refuses this row: --memory: '1e400' is too large" err.txt
check "microbatches 999999999, named by line" grep -q "bad.tsv:4: piper refuses this row: --microbatches" err.txt
check "the valid row is not reported" bash -c "! grep -q 'bad.tsv:5' err.txt"
head -n 1 bad.tsv >good.tsv && tail -n 1 bad.tsv >>good.tsv
PIPER=$piper bash "$src/jobs/sweep.sbatch" --check good.tsv >out.txt 2>err.txt
rc=$?
check "a valid grid passes --check (got $rc)" test $rc -eq 0
check "a valid grid lists its row" grep -q ": 1 rows$" out.txt
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
