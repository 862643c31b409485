# shellcheck shell=bash
# piper-job.sh - what jobs/plan.sbatch and jobs/sweep.sbatch share: logging, finding piper,
# choosing the MPI launcher, running `piper plan` with signal forwarding, and requeueing.
# Sourced, never run.  Needs bash 4.3+.
#
# The contract with piper (see `piper plan --help`): on SIGTERM or SIGUSR1 piper writes a
# checkpoint next to its archive and exits with status 75; `piper plan ... --resume` continues
# from that checkpoint.
#
# Environment:
#   PIPER           path of the piper binary (default: PIPER_HOME/build/piper, `piper` on PATH,
#                   then build/piper in the repository these scripts belong to)
#   PIPER_HOME      the piper repository (default: found from the job's script path)
#   PIPER_LAUNCHER  srun (default inside a job), mpirun, or none (run piper directly; the
#                   default outside Slurm)
#   PIPER_SRUN_MPI  the --mpi plugin for srun (default pmix)
#   PIPER_MAX_RESTARTS  stop requeueing after this many restarts (default 10)

PJ_EXIT_STOPPED=75 # piper's "stopped after a checkpoint" status

PJ_NAME=${PJ_NAME:-piper-job}
PJ_STOP_SIGNAL=  # the signal that asked this job to stop, if any
PJ_CHILD=        # PID of the launcher while piper runs
PJ_TRAPPED=0

pj_log() { printf '[%s %s] %s\n' "$PJ_NAME" "$(date '+%F %T')" "$*" >&2; }

# pj_die MESSAGE [STATUS]: logs an error and exits (status 2 = usage or input problem by default).
pj_die() {
  printf '%s: error: %s\n' "$PJ_NAME" "$1" >&2
  exit "${2:-2}"
}

# Sets PJ_PIPER to the piper binary to run, or dies with the places it looked in.
pj_find_piper() {
  local tried=()
  if [[ -n ${PIPER:-} ]]; then
    [[ -x $PIPER ]] || pj_die "PIPER=$PIPER is not an executable file" 1
    PJ_PIPER=$PIPER
    return
  fi
  if [[ -n ${PIPER_HOME:-} ]]; then
    tried+=("$PIPER_HOME/build/piper")
    if [[ -x $PIPER_HOME/build/piper ]]; then
      PJ_PIPER=$PIPER_HOME/build/piper
      return
    fi
  fi
  tried+=("piper on PATH")
  if PJ_PIPER=$(command -v piper 2>/dev/null); then return; fi
  tried+=("$PJ_REPO/build/piper")
  if [[ -x $PJ_REPO/build/piper ]]; then
    PJ_PIPER=$PJ_REPO/build/piper
    return
  fi
  local IFS=,
  pj_die "piper not found (looked for ${tried[*]}); build it (cmake -S . -B build && cmake --build build) or set PIPER=/path/to/piper" 1
}

# Sets the array PJ_LAUNCH to the command prefix that starts piper on the job's ranks.
pj_choose_launcher() {
  local launcher=${PIPER_LAUNCHER:-}
  if [[ -z $launcher ]]; then
    if [[ -n ${SLURM_JOB_ID:-} ]]; then launcher=srun; else launcher=none; fi
  fi
  case $launcher in
    srun) PJ_LAUNCH=(srun "--mpi=${PIPER_SRUN_MPI:-pmix}") ;;
    mpirun) PJ_LAUNCH=(mpirun -np "${SLURM_NTASKS:-1}") ;;
    none) PJ_LAUNCH=() ;;
    *) pj_die "PIPER_LAUNCHER must be srun, mpirun or none, not '$launcher'" ;;
  esac
}

# Signal handler: remember the request and pass it on to piper as SIGUSR1.  SIGUSR1, not the
# SIGTERM we may have received: srun answers SIGTERM by killing its tasks with SIGKILL, while it
# forwards SIGUSR1 to every task, and so does mpirun.
pj_on_signal() {
  PJ_TRAPPED=1
  if [[ -z $PJ_STOP_SIGNAL ]]; then
    PJ_STOP_SIGNAL=$1
    pj_log "received SIG$1: asking piper to checkpoint and stop"
  fi
  if [[ -n $PJ_CHILD ]]; then kill -USR1 "$PJ_CHILD" 2>/dev/null || true; fi
}

pj_install_traps() {
  trap 'pj_on_signal USR1' USR1
  trap 'pj_on_signal TERM' TERM
}

# pj_run_piper OUTFILE ARG...: runs `piper ARG...` through the launcher, standard output to
# OUTFILE ("-" for the job log), and sets PJ_RC to its exit status.  Signals that arrive
# meanwhile are forwarded (see pj_on_signal).  When a stop was requested before, piper is not
# started: PJ_STARTED is 0 and PJ_RC is 75 (no new checkpoint exists then).
pj_run_piper() {
  local out=$1
  shift
  local cmd=("${PJ_LAUNCH[@]}" "$PJ_PIPER" "$@")
  PJ_STARTED=0
  if [[ -n $PJ_STOP_SIGNAL ]]; then
    pj_log "a stop was requested before piper started: not starting it"
    PJ_RC=$PJ_EXIT_STOPPED
    return
  fi
  PJ_STARTED=1
  pj_log "running: ${cmd[*]}"
  if [[ $out == - ]]; then
    "${cmd[@]}" &
  else
    "${cmd[@]}" >"$out" &
  fi
  PJ_CHILD=$!
  # A trapped signal interrupts `wait` (status > 128); wait again for the real status.
  while :; do
    PJ_TRAPPED=0
    if wait "$PJ_CHILD"; then PJ_RC=0; else PJ_RC=$?; fi
    ((PJ_TRAPPED && PJ_RC > 128)) || break
  done
  PJ_CHILD=
  pj_log "piper exited with status $PJ_RC$(pj_describe_status "$PJ_RC")"
}

pj_describe_status() {
  case $1 in
    0) echo " (plan found)" ;;
    1) echo " (failure)" ;;
    2) echo " (invalid input or usage)" ;;
    3) echo " (no feasible plan)" ;;
    "$PJ_EXIT_STOPPED") echo " (stopped after a checkpoint)" ;;
    *) if (($1 > 128)); then echo " (killed by signal $(($1 - 128)))"; fi ;;
  esac
}

# How many times Slurm has restarted this job (0 on the first run).
pj_restart_count() { echo "${SLURM_RESTART_COUNT:-0}"; }

# Puts this job back into the queue, to continue with --resume.  Returns non-zero when that is
# not possible (outside Slurm, too many restarts, or scontrol refuses); the caller then exits 75
# so that a person can resubmit with --resume.
pj_requeue() {
  local restarts max=${PIPER_MAX_RESTARTS:-10}
  restarts=$(pj_restart_count)
  if [[ -z ${SLURM_JOB_ID:-} ]]; then
    pj_log "not inside a Slurm job: rerun with --resume to continue"
    return 1
  fi
  if ((restarts >= max)); then
    pj_log "already restarted $restarts times (PIPER_MAX_RESTARTS=$max): not requeueing again"
    return 1
  fi
  pj_log "requeueing job $SLURM_JOB_ID; its next run continues from the checkpoint"
  if ! scontrol requeue "$SLURM_JOB_ID"; then
    pj_log "scontrol requeue failed (was the job submitted with --requeue?): resubmit with --resume"
    return 1
  fi
  return 0
}

# Logs where and how this job runs.
pj_log_start() {
  pj_log "job ${SLURM_JOB_ID:-(none)}${SLURM_ARRAY_TASK_ID:+ (array task $SLURM_ARRAY_TASK_ID)}," \
    "restart $(pj_restart_count), nodes ${SLURM_JOB_NODELIST:-$(hostname)}, tasks ${SLURM_NTASKS:-1}," \
    "cwd $PWD"
  pj_log "piper: $PJ_PIPER ($("$PJ_PIPER" --version 2>/dev/null || echo 'version unknown'))," \
    "launcher: ${PJ_LAUNCH[*]:-none}"
}
