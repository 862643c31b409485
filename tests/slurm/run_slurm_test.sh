#!/bin/bash
# run_slurm_test.sh BUILD_DIR - the job scripts of jobs/ against a real single-node Slurm.
#
# Installs slurm-wlm if it is missing (needs root and apt-get, else the test exits 77: Skipped), starts
# munged, slurmctld and slurmd on 127.0.0.1 with a configuration in a temporary folder
# (tests/slurm/minicluster.sh), submits jobs/plan.sbatch and jobs/sweep.sbatch with sbatch --wait,
# checks job states (scontrol), logs and outputs, and stops the daemons on exit, whatever happens.
#
# Checks of features piper does not have yet are reported as SKIP and start counting by themselves
# once the feature is there: archives (--out and the default outputs/ path), `piper show`,
# `piper collect`, one plan printed by rank 0 only (MPI distribution), and stopping with exit 75
# after a checkpoint on SIGUSR1 (--resume).  The stop/requeue/resume path of the job scripts is
# tested today with tests/slurm/fake-piper.sh, which keeps piper's contract.
#
# Environment: PIPER_SHARED_DIR (default: ../shared beside the repository) holds piper-inputs/;
# PIPER_SLURM_KEEP=1 keeps the temporary folder; PIPER_SLURM_TEST_LIMIT (default 240) bounds the
# whole run in seconds.  The last line says "N passed, M failed, K skipped".
set -euo pipefail

# Stop well inside CTest's 300 s: CTest kills on timeout, which would skip the cleanup below;
# `timeout` sends SIGTERM, which the cleanup handles.
if [[ -z ${PIPER_SLURM_TEST_TIMED:-} ]]; then
  PIPER_SLURM_TEST_TIMED=1 exec timeout -s TERM "${PIPER_SLURM_TEST_LIMIT:-240}" bash "$0" "$@"
fi

if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
BUILD_DIR=$(cd "$1" && pwd)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PIPER_BIN=$BUILD_DIR/piper
SHARED=${PIPER_SHARED_DIR:-$REPO/../shared}
T_START=$SECONDS

PASSED=0 FAILED=0 SKIPPED=0
note() { printf '       %s\n' "$@"; }
pass() { PASSED=$((PASSED + 1)); printf 'PASS   %s\n' "$1"; }
fail() { FAILED=$((FAILED + 1)); printf 'FAIL   %s\n' "$1"; shift; if (($#)); then note "$@"; fi; }
skip() { SKIPPED=$((SKIPPED + 1)); printf 'SKIP   %s\n' "$1"; shift; if (($#)); then note "$@"; fi; }
# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what" "command: $*"; fi
}
summary() { printf '%d passed, %d failed, %d skipped\n' "$PASSED" "$FAILED" "$SKIPPED"; }

# The machine cannot run Slurm: exit 77, which CTest (SKIP_RETURN_CODE 77) reports as Skipped.
skip_all() {
  echo "SKIPPED: the Slurm test: $1"
  SKIPPED=1
  summary
  exit 77
}

# ---- Slurm itself ------------------------------------------------------------------------------
# shellcheck source=minicluster.sh
source "$REPO/tests/slurm/minicluster.sh"
mc_rc=0
why=$(mc_ensure_slurm) || mc_rc=$?
if ((mc_rc == 77)); then skip_all "$why"; fi
if ((mc_rc != 0)); then
  fail "install slurm-wlm" "$why"
  summary
  exit 1
fi
if [[ $(id -u) -ne 0 ]]; then skip_all "starting slurmctld, slurmd and munged needs root"; fi
if [[ ! -x $PIPER_BIN ]]; then
  fail "piper is built" "no executable at $PIPER_BIN"
  summary
  exit 1
fi

HELPERS=() # background helpers of this script, stopped by cleanup
W=$(mktemp -d /tmp/piper-slurm-test.XXXXXX)
chmod 755 "$W"
cleanup() {
  local rc=$? bg
  set +e
  for bg in "${HELPERS[@]}"; do
    if kill -0 "$bg" 2>/dev/null; then
      pkill -P "$bg"
      kill "$bg"
    fi
  done 2>/dev/null
  if [[ -n ${SLURM_CONF:-} && -f $SLURM_CONF ]]; then
    scancel --quiet --full --user=root >/dev/null 2>&1 || true
    local n=0
    while squeue -h 2>/dev/null | grep -q . && ((n++ < 50)); do sleep 0.2; done
  fi
  mc_stop
  # Job processes that outlived slurmd (slurmstepd, srun, piper): those whose working directory
  # or open files are in the test's folder.
  local d fd pid
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [[ $pid == "$$" ]] && continue
    for fd in "$d/cwd" "$d"/fd/*; do
      if [[ $(readlink "$fd" 2>/dev/null) == "$W"/* ]]; then
        kill -KILL "$pid" 2>/dev/null || true
        break
      fi
    done
  done
  if [[ ${PIPER_SLURM_KEEP:-0} == 1 ]]; then echo "kept $W"; else rm -rf "$W"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "interrupted (SIGINT/SIGTERM; the whole test stops after 240 s)"; exit 130' INT TERM

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
export PIPER=$PIPER_BIN
unset PIPER_HOME PIPER_LAUNCHER

t0=$SECONDS
if mc_start "$W/cluster"; then
  pass "single-node Slurm is up on 127.0.0.1 ($((SECONDS - t0)) s)"
else
  fail "single-node Slurm is up on 127.0.0.1" "see the daemons' logs below"
  mc_dump_logs
  summary
  exit 1
fi

WORK=$W/work
mkdir -p "$WORK"
cd "$WORK"
BERT=$REPO/inputs/bert-large-a100-40gb.json
GNMT=$SHARED/piper-inputs/gnmt.json

# job_states ID: the JobState of the job (one line per array task), while MinJobAge keeps it.
job_states() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 || true; }
job_field() { scontrol show job "$1" 2>/dev/null | grep -o "$2=[^ ]*" | head -n 1 | cut -d= -f2; }

# submit_wait SECONDS SBATCH_ARGS...: sbatch --wait under a timeout; sets JOB and JOB_RC.
submit_wait() {
  local limit=$1 out
  shift
  JOB='' JOB_RC=0
  out=$(timeout "$limit" sbatch --parsable --wait "$@" 2>"$WORK/sbatch.err") || JOB_RC=$?
  JOB=$(printf '%s\n' "$out" | head -n 1 | cut -d';' -f1)
  if ((JOB_RC == 124)); then note "sbatch --wait timed out after $limit s (job ${JOB:-?})"; fi
  if [[ -z $JOB ]]; then note "sbatch printed no job id: $(cat "$WORK/sbatch.err")"; fi
}

# wait_for SECONDS COMMAND...: polls COMMAND every 0.2 s.
wait_for() { mc_wait "$@"; }

# tps FILE: the "time per sample" lines of FILE.
tps() { grep -E '^time per sample:' "$1" || true; }

# The reference: piper run directly, without Slurm.
direct_tps() { "$PIPER_BIN" plan "$@" --no-archive --quiet 2>/dev/null | grep -E '^time per sample:' || true; }

piper_has_command() {
  local out
  out=$("$PIPER_BIN" "$1" --help 2>&1) || true
  ! grep -q "unknown command" <<<"$out"
}

# ---- a long job runs beside the others: the stop/resume path of real piper ---------------------
GNMT_JOB=''
if [[ -f $GNMT ]]; then
  mkdir -p "$WORK/gnmt"
  GNMT_JOB=$(cd "$WORK/gnmt" && sbatch --parsable "$REPO/jobs/plan.sbatch" "$GNMT" --devices 16 \
    --memory 1.2GiB --microbatches 256 --bandwidth 25GiB/s --out "$WORK/gnmt/gnmt.h5" | cut -d';' -f1) || GNMT_JOB=''
  GNMT_SUBMITTED=$SECONDS
  # While the other checks run: once piper is at work, send what the time-limit warning sends.
  # (piper checkpoints after every layer.)  Note whether piper had ended before that.
  (
    log=$WORK/gnmt/piper-plan-$GNMT_JOB.log
    mc_wait 60 grep -q 'piper: layer' "$log" || true
    sleep 3
    grep -o 'piper exited with status [0-9]*' "$log" >"$WORK/gnmt/ended-before-signal" || rm -f "$WORK/gnmt/ended-before-signal"
    scancel --signal=USR1 --batch "$GNMT_JOB" || true
    echo "signalled after $((SECONDS - GNMT_SUBMITTED)) s" >"$WORK/gnmt/signalled"
  ) &
  GNMT_SIGNALLER=$!
  HELPERS+=("$GNMT_SIGNALLER")
fi

# ---- jobs/plan.sbatch ---------------------------------------------------------------------------
check "plan.sbatch --help" bash -c "'$REPO/jobs/plan.sbatch' --help | grep -q '^usage: sbatch'"
check "plan.sbatch without arguments exits 2" bash -c "'$REPO/jobs/plan.sbatch' >/dev/null 2>&1; [[ \$? == 2 ]]"

want=$(direct_tps "$BERT" --devices 32 --memory 8GiB --microbatches 512)
mkdir -p "$WORK/plan1"
cd "$WORK/plan1"
t0=$SECONDS
submit_wait 60 "$REPO/jobs/plan.sbatch" "$BERT" --devices 32 --memory 8GiB --microbatches 512
log=$WORK/plan1/piper-plan-$JOB.log
state=$(job_states "$JOB")
if [[ $JOB_RC == 0 && $state == COMPLETED ]]; then
  pass "plan.sbatch (srun, 1 rank) completes: job $JOB $state in $((SECONDS - t0)) s"
else
  fail "plan.sbatch (srun, 1 rank) completes" "sbatch --wait status $JOB_RC, job $JOB state '${state:-gone}'"
fi
if [[ -n $want && -f $log && $(tps "$log") == "$want" ]]; then
  pass "plan.sbatch log piper-plan-$JOB.log holds the plan: $want"
else
  fail "plan.sbatch log holds the plan" "expected '$want' in $log:" "$(tail -n 5 "$log" 2>/dev/null)"
fi
check "plan.sbatch ran piper through srun --mpi=pmix" grep -q 'running: srun --mpi=pmix' "$log"
archive=$WORK/plan1/outputs/bert-large-a100-40gb-k32-n512.h5
if [[ -s $archive ]]; then
  pass "plan.sbatch left the archive at the default path outputs/bert-large-a100-40gb-k32-n512.h5"
  if piper_has_command show; then
    shown=$("$PIPER_BIN" show "$archive" 2>&1 | grep -E '^time per sample:' || true)
    if [[ $shown == "$want" ]]; then pass "piper show reads the job's archive"; else fail "piper show reads the job's archive" "got '$shown', expected '$want'"; fi
  else
    skip "piper show on the job's archive" "piper has no 'show' command yet"
  fi
elif [[ -d $WORK/plan1/outputs ]]; then
  skip "archive at the default path outputs/bert-large-a100-40gb-k32-n512.h5" \
    "piper plan does not write archives yet (outputs/ exists but holds: $(ls "$WORK/plan1/outputs" | tr '\n' ' '))"
else
  fail "plan.sbatch creates outputs/ for the default archive"
fi

# Two ranks: once the MPI distribution is in, only rank 0 prints the plan.
for launcher in srun mpirun; do
  mkdir -p "$WORK/ranks-$launcher"
  cd "$WORK/ranks-$launcher"
  t0=$SECONDS
  PIPER_LAUNCHER=$launcher submit_wait 60 -n 2 "$REPO/jobs/plan.sbatch" "$BERT" --devices 32 --memory 8GiB \
    --microbatches 512 --no-archive
  log=$WORK/ranks-$launcher/piper-plan-$JOB.log
  state=$(job_states "$JOB")
  lines=$(tps "$log" | sort -u)
  count=$(tps "$log" | wc -l)
  if [[ $JOB_RC == 0 && $state == COMPLETED && $lines == "$want" ]] && grep -q 'tasks 2' "$log"; then
    pass "plan.sbatch on 2 ranks with PIPER_LAUNCHER=$launcher completes with the same plan ($((SECONDS - t0)) s)"
  else
    fail "plan.sbatch on 2 ranks with PIPER_LAUNCHER=$launcher" "sbatch status $JOB_RC, state '${state:-gone}', plan lines: $lines" \
      "$(tail -n 5 "$log" 2>/dev/null)"
  fi
  if ((count == 1)); then
    pass "2 ranks ($launcher): the plan is printed once"
  elif ((count == 2)); then
    skip "2 ranks ($launcher): the plan printed once, by rank 0" \
      "each rank printed its own plan: piper does not distribute over MPI ranks yet"
  else
    fail "2 ranks ($launcher): the plan is printed once" "printed $count times"
  fi
done

# ---- jobs/sweep.sbatch --------------------------------------------------------------------------
check "sweep.sbatch --help" bash -c "'$REPO/jobs/sweep.sbatch' --help | grep -q '^usage: sbatch'"
if [[ -f $BERT ]]; then
  check "the shipped grid jobs/grids/bert-large-study.tsv is valid (20 rows)" \
    bash -c "'$REPO/jobs/sweep.sbatch' --check '$REPO/jobs/grids/bert-large-study.tsv' | grep -q ': 20 rows$'"
else
  skip "the shipped grid is valid" "its input $BERT does not exist yet"
fi

# Invalid grids: each problem is reported with its line, and nothing runs.
mkdir -p "$WORK/bad/inputs"
ln -s "$BERT" "$WORK/bad/inputs/bert.json"
bad_grid() { # bad_grid NAME CONTENT EXPECTED_MESSAGE...
  local name=$1 content=$2 out rc=0
  shift 2
  printf '%b' "$content" >"$WORK/bad/$name.tsv"
  out=$("$REPO/jobs/sweep.sbatch" --check "$WORK/bad/$name.tsv" 2>&1) || rc=$?
  local m missing=''
  for m in "$@"; do grep -q -F -- "$m" <<<"$out" || missing+=" '$m'"; done
  if [[ $rc == 2 && -z $missing ]]; then
    pass "invalid grid ($name) is refused: $(head -n 1 <<<"$out")"
  else
    fail "invalid grid ($name) is refused" "status $rc (expected 2), missing messages:$missing" "$out"
  fi
}
H='input\tdevices\tmemory\tbandwidth\tmicrobatches\tflags\n'
bad_grid header-missing 'input\tdevices\tmemory\tbandwidth\tflags\ninputs/bert.json\t8\t8GiB\t25GiB/s\tnone\n' \
  ":1: header: missing column 'microbatches'"
bad_grid header-unknown 'input\tdevices\tmemory\tbandwidth\tmicrobatches\tflags\tcolour\n' ":1: header: unknown column 'colour'"
bad_grid rows "# a comment\n${H}inputs/bert.json\tmany\t8GiB\t25GiB/s\t512\tnone\ninputs/bert.json\t8\t8XiB\t25GiB/s\t512\tnone\ninputs/bert.json\t8\t8GiB\t25GiB/s\t512\tno-dp,no-pp\ninputs/bert.json\t8\t8GiB\t25GiB/s\t512\ninputs/nothere.json\t8\t8GiB\t25GiB/s\t512\tnone\ninputs/bert.json\t8\t0GiB\t25GiB/s\t0\tnone\n" \
  ":3: devices: expected a positive integer, got 'many'" ":4: memory: '8XiB' is not a size" \
  ":5: flags: unknown flag 'no-pp'" ":6: expected 6 tab-separated fields like the header, found 5" \
  ":7: input: '$WORK/bad/inputs/nothere.json' not found" ":8: memory: must be more than 0" \
  ":8: microbatches: expected a positive integer, got '0'" "7 problem(s)"
bad_grid names "name\t${H}a\tinputs/bert.json\t8\t8GiB\t25GiB/s\t512\tnone\na\tinputs/bert.json\t32\t8GiB\t25GiB/s\t512\tnone\nx/y\tinputs/bert.json\t32\t8GiB\t25GiB/s\t512\tnone\n" \
  ":3: name: 'a' is also the name of the row on line 2" ":4: name: 'x/y' is not a file name"

# A 3-row grid over an array of 2 tasks: task 0 does rows 0 and 2, task 1 row 1.  Relative inputs
# resolve against the grid's folder; one row has no feasible plan.
mkdir -p "$WORK/sweep/grid/models"
ln -s "$BERT" "$WORK/sweep/grid/models/bert-large.json"
# The middle row leaves its name empty: its name is made from the row number and values.
printf '%s\n' "name	input	devices	memory	bandwidth	microbatches	flags" \
  "small	models/bert-large.json	8	8GiB	25GiB/s	512	none" \
  "	models/bert-large.json	32	16GiB	25GiB/s	256	no-dp,no-tp" \
  "tiny	models/bert-large.json	8	1MiB	25GiB/s	512	none" >"$WORK/sweep/grid/g.tsv"
mid=row001-bert-large-k32-m16GiB-n256-bw25GiBps-nodp-notp
declare -A sweep_want=(
  [small]=$(direct_tps "$BERT" --devices 8 --memory 8GiB --bandwidth 25GiB/s --microbatches 512)
  [$mid]=$(direct_tps "$BERT" --devices 32 --memory 16GiB --bandwidth 25GiB/s --microbatches 256 --no-dp --no-tp)
)
cd "$WORK/sweep"
t0=$SECONDS
submit_wait 90 --array=0-1 "$REPO/jobs/sweep.sbatch" grid/g.tsv results
states=$(job_states "$JOB" | sort | uniq -c | xargs)
if [[ $JOB_RC == 0 && $states == "2 COMPLETED" ]]; then
  pass "sweep.sbatch, 3 rows on an array of 2 tasks: both tasks COMPLETED in $((SECONDS - t0)) s"
else
  fail "sweep.sbatch, 3 rows on an array of 2 tasks, completes" "sbatch status $JOB_RC, task states: ${states:-gone}" \
    "$(cat "$WORK"/sweep/piper-sweep-*.log 2>/dev/null | tail -n 20)"
fi
for name in small "$mid"; do
  got=$(tps "$WORK/sweep/results/$name.txt" 2>/dev/null)
  if [[ -n ${sweep_want[$name]} && $got == "${sweep_want[$name]}" ]]; then
    pass "sweep row '$name': results/$name.txt holds the plan ($got)"
  else
    fail "sweep row '$name': results/$name.txt holds the plan" "got '$got', expected '${sweep_want[$name]}'"
  fi
done
check "sweep row 'tiny' (1 MiB per device): results/tiny.txt says no feasible plan" \
  grep -q '^no feasible plan' "$WORK/sweep/results/tiny.txt"
log0=$WORK/sweep/piper-sweep-${JOB}_0.log log1=$WORK/sweep/piper-sweep-${JOB}_1.log
# three groups (the rows share no input/memory/N/flags): task 0 takes groups 0 and 2, task 1 group 1
if grep -q '^small: time per sample' "$log0" && grep -q '^tiny: no feasible plan' "$log0" &&
  grep -q "^$mid: time per sample" "$log1" && ! grep -q "^$mid: " "$log0" && ! grep -q -E '^(small|tiny): ' "$log1"; then
  pass "sweep striding: task 0 ran rows 0 and 2, task 1 row 1"
else
  fail "sweep striding: task 0 runs rows 0 and 2, task 1 row 1" "$(grep -h -E '^[a-z0-9-]+: ' "$log0" "$log1" 2>/dev/null)"
fi
n_h5=$(find "$WORK/sweep/results" -name '*.h5' | wc -l)
if ((n_h5 == 3)); then
  pass "sweep: one archive per row in results/"
  if piper_has_command collect; then
    csv=$("$PIPER_BIN" collect "$WORK"/sweep/results/*.h5 --format csv 2>"$WORK/collect.err") || true
    rows=$(tail -n +2 <<<"$csv" | grep -c . || true)
    if ((rows == 3)); then pass "piper collect --format csv gathers the 3 archives"; else
      fail "piper collect --format csv gathers the 3 archives" "$csv" "$(cat "$WORK/collect.err")"; fi
    "$PIPER_BIN" collect "$WORK"/sweep/results/*.h5 --out "$WORK/study.h5" >/dev/null 2>&1 || true
    check "piper collect --out study.h5 writes the study" test -s "$WORK/study.h5"
  else
    skip "piper collect over the sweep's archives" "piper has no 'collect' command yet"
  fi
else
  skip "sweep: one archive per row in results/" "found $n_h5 .h5 files: piper plan --out does not write archives yet"
fi

# Resubmitting a finished sweep (no array: one task does every row) skips what is done.
submit_wait 60 "$REPO/jobs/sweep.sbatch" grid/g.tsv results
if [[ $JOB_RC == 0 ]] && (($(grep -c 'done already' "$WORK"/sweep/piper-sweep-"$JOB"_*.log 2>/dev/null || echo 0) == 3)); then
  pass "resubmitting a finished sweep skips its 3 rows"
else
  fail "resubmitting a finished sweep skips its 3 rows" "sbatch status $JOB_RC" "$(cat "$WORK"/sweep/piper-sweep-"$JOB"_*.log 2>/dev/null)"
fi

# A row that piper rejects fails alone: the other rows still run, and the task ends FAILED.
mkdir -p "$WORK/failing"
cd "$WORK/failing"
printf '%s\n' "input	devices	memory	bandwidth	microbatches	flags	name" \
  "$REPO/tests/bad-inputs/nodes-empty.json	8	8GiB	25GiB/s	512	none	broken" \
  "$BERT	8	8GiB	25GiB/s	512	none	fine" >grid.tsv
submit_wait 60 "$REPO/jobs/sweep.sbatch" grid.tsv results
state=$(job_states "$JOB")
log=$(ls "$WORK"/failing/piper-sweep-"$JOB"_*.log 2>/dev/null | head -n 1)
if [[ $JOB_RC == 1 && $state == FAILED && ! -e results/broken.txt && -n $(tps results/fine.txt 2>/dev/null) ]] &&
  grep -q 'grid.tsv:2: broken: ' "$log"; then
  pass "a row piper rejects fails alone: the next row still runs, the task exits 1 (FAILED)"
else
  fail "a row piper rejects fails alone" "sbatch status $JOB_RC, state '${state:-gone}'" "$(cat "$log" 2>/dev/null)"
fi

# The study that ships with the repository, end to end on an array of 2 tasks.
if [[ -f $BERT ]]; then
  mkdir -p "$WORK/study"
  cd "$WORK/study"
  t0=$SECONDS
  submit_wait 90 --array=0-1 "$REPO/jobs/sweep.sbatch" "$REPO/jobs/grids/bert-large-study.tsv" results
  n_txt=$(grep -l -E '^(time per sample|no feasible plan)' "$WORK"/study/results/*.txt 2>/dev/null | wc -l)
  if [[ $JOB_RC == 0 && $n_txt == 20 ]]; then
    pass "the shipped study jobs/grids/bert-large-study.tsv: 20 rows done in $((SECONDS - t0)) s"
  else
    fail "the shipped study jobs/grids/bert-large-study.tsv runs" "sbatch status $JOB_RC, $n_txt of 20 rows have a result" \
      "$(cat "$WORK"/study/piper-sweep-*.log 2>/dev/null | grep -E 'FAILED|error' | head -n 10)"
  fi
fi

# ---- stop, requeue, resume: the job script's side, with a stand-in keeping piper's contract ------
mkdir -p "$WORK/fake"
cd "$WORK/fake"
t0=$SECONDS
JOB=$(PIPER=$REPO/tests/slurm/fake-piper.sh FAKE_PIPER_SECONDS=4 sbatch --parsable "$REPO/jobs/plan.sbatch" \
  model.json --out "$WORK/fake/out/fake.h5" | cut -d';' -f1)
log=$WORK/fake/piper-plan-$JOB.log
if wait_for 30 grep -q 'fake-piper: working' "$log"; then
  sleep 0.5
  scancel --signal=USR1 --batch "$JOB"
  wait_for 60 bash -c "[[ \$(scontrol show job $JOB 2>/dev/null | grep -o 'JobState=[A-Z]*') =~ =(COMPLETED|FAILED|CANCELLED|TIMEOUT) ]]" || true
  state=$(job_states "$JOB")
  restarts=$(job_field "$JOB" Restarts)
  if [[ $state == COMPLETED && $restarts == 1 ]] && grep -q 'received SIGUSR1' "$log" &&
    grep -q 'piper exited with status 75' "$log" && grep -q "requeueing job $JOB" "$log" &&
    grep -q 'plan .* --resume$' "$log" && grep -q 'fake-piper: resumed from step [1-9]' "$log" &&
    [[ -n $(tps "$log") ]] && ! ls "$WORK"/fake/.piper-plan-*.resume >/dev/null 2>&1; then
    pass "SIGUSR1 to the batch shell: checkpoint, exit 75, requeue, --resume, COMPLETED after 1 restart ($((SECONDS - t0)) s)"
  else
    fail "SIGUSR1 to the batch shell leads to checkpoint, requeue, resume and completion" \
      "state '${state:-gone}', restarts '${restarts:-?}'; log:" "$(cat "$log" 2>/dev/null)"
  fi
else
  fail "the stand-in piper starts under plan.sbatch" "$(cat "$log" 2>/dev/null)"
fi

# ---- stop, requeue, resume with real piper ------------------------------------------------------
if [[ -z $GNMT_JOB ]]; then
  skip "stop and resume of real piper" "no $GNMT (set PIPER_SHARED_DIR) or its submission failed"
else
  log=$WORK/gnmt/piper-plan-$GNMT_JOB.log
  wait "$GNMT_SIGNALLER" || true
  early=$(cat "$WORK/gnmt/ended-before-signal" 2>/dev/null || true)
  wait_for 20 grep -q 'piper exited with status' "$log" || true
  status=$(grep -o 'piper exited with status [0-9]*' "$log" | head -n 1 | grep -o '[0-9]*$' || true)
  if [[ -n $early ]]; then
    skip "stop and resume of real piper (gnmt, 16 devices, 1.2 GiB, 25 GiB/s)" \
      "piper ended before the signal ($early): this input is too short to interrupt now, pick a longer one"
  elif [[ $status != 75 ]]; then
    skip "stop and resume of real piper (gnmt, 16 devices, 1.2 GiB, 25 GiB/s)" \
      "on SIGUSR1 piper exited with status '${status:-none}', not 75: it does not checkpoint and stop yet"
  else
    # ended (or already forgotten by slurmctld, MinJobAge)
    wait_for 150 bash -c "! scontrol show job $GNMT_JOB >/dev/null 2>&1 || [[ \$(scontrol show job $GNMT_JOB 2>/dev/null | grep -o 'JobState=[A-Z]*') =~ =(COMPLETED|FAILED|CANCELLED|TIMEOUT) ]]" || true
    state=$(job_states "$GNMT_JOB" || true)
    if [[ -z $state ]]; then
      # Finished long ago and forgotten by slurmctld (MinJobAge): the log tells how it ended.
      last=$(grep -o 'piper exited with status [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$' || true)
      [[ $last == 0 ]] && state=COMPLETED
    fi
    want=$(awk -F'\t' '$1 == "gnmt_k16_m1.2" { print $8 }' "$SHARED/reference/expected.tsv" 2>/dev/null)
    got=$(tps "$log" | awk '{ print $4 }')
    if [[ $state == COMPLETED ]] && grep -q 'plan .* --resume$' "$log" && [[ -n $got ]] &&
      awk -v a="$got" -v b="${want:-$got}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6 * b) }'; then
      pass "real piper stopped by SIGUSR1 resumes after requeue and completes: TPS $got ($((SECONDS - GNMT_SUBMITTED)) s)"
    else
      fail "real piper stopped by SIGUSR1 resumes after requeue and completes" \
        "state '${state:-gone}', TPS '$got' (reference ${want:-?}); log tail:" "$(tail -n 15 "$log")"
    fi
    if [[ -s $WORK/gnmt/gnmt.h5 ]]; then pass "the resumed run wrote its archive"; else
      fail "the resumed run wrote its archive" "no $WORK/gnmt/gnmt.h5"; fi
  fi
fi

echo "the Slurm test took $((SECONDS - T_START)) s"
if ((FAILED)); then mc_dump_logs; fi
summary
((FAILED == 0))
