#!/bin/bash
# fake-piper.sh - stands in for `piper plan` in the Slurm test of the stop/requeue/resume path of
# jobs/plan.sbatch, with the same contract as piper: it "works" for FAKE_PIPER_SECONDS (default
# 15) in steps of 0.1 s; on SIGUSR1 or SIGTERM it writes a checkpoint next to its archive
# (--out FILE, default ./fake-piper.h5; the checkpoint is FILE.ckpt) and exits 75; with --resume
# it continues from that checkpoint (exit 2 if there is none); at the end it prints a plan line
# and exits 0.
set -euo pipefail

if [[ ${1:-} == --version ]]; then
  echo "piper (fake-piper.sh, for tests)"
  exit 0
fi
[[ ${1:-} == plan ]] || { echo "fake-piper: only 'plan' is known" >&2; exit 2; }
shift
out=fake-piper.h5 resume=0
while (($#)); do
  case $1 in
    --out) out=$2; shift ;;
    --resume) resume=1 ;;
  esac
  shift
done
ckpt=$out.ckpt
steps=$(awk -v s="${FAKE_PIPER_SECONDS:-15}" 'BEGIN { printf "%d", s * 10 }')
step=0
if ((resume)); then
  [[ -f $ckpt ]] || { echo "fake-piper: error: --resume but no checkpoint at $ckpt" >&2; exit 2; }
  step=$(cat "$ckpt")
  echo "fake-piper: resumed from step $step of $steps" >&2
fi
stop=
trap 'stop=USR1' USR1
trap 'stop=TERM' TERM
echo "fake-piper: working (pid $$)" >&2
for (( ; step < steps; step++)); do
  if [[ -n $stop ]]; then
    echo "$step" >"$ckpt"
    echo "fake-piper: SIG$stop at step $step of $steps: checkpoint written to $ckpt, exiting 75" >&2
    exit 75
  fi
  sleep 0.1 || true # srun signals every process of the task, this sleep too
done
rm -f "$ckpt"
echo "time per sample: 1.5 s (0.666667 samples/s)"
