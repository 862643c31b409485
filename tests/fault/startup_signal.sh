#!/usr/bin/env bash
# SIGTERM during MPI start-up, before the first layer, under mpiexec -np 2:
# the handlers are installed before MPI_Init, so the stop is recorded and
# honoured at the first layer: exit 75 within seconds, "stopped by a signal
# after (or during: the layer abandoned) layer 1", a checkpoint from which --resume finishes the
# archive, nothing on standard output and no partial file.  The signal is
# sent to both ranks as soon as each has its SIGTERM handler (SigCgt in
# /proc/PID/status), i.e. while MPI_Init is still running -- as a rule:
# MPI_Init takes some 0.03-0.05 s here, and the polling (shell builtins
# reading /proc, no process started per look) sees a handler within a
# fraction of a millisecond unless the machine is loaded, so a round whose
# signal lands after start-up may stop after a later layer (but before the
# last, with its checkpoint: the plan, Llama 2 70B at K = 1024, takes some
# 0.5 s over 83 layers on 2 ranks, where BERT-large at K = 64 took 0.02 s
# and a late signal found its last layer, which finishes the run).  A rank
# before its exec is a copy of mpiexec with mpiexec's own handlers: only
# processes named like PIPER are signalled.
# A signal to one rank stops both (the stop is agreed at the layer's end),
# so a round may end before the polling sees the second rank's handler: a
# round that signalled one rank is judged like one that signalled both.
# A lost signal (exit 0 or a kill) fails every round; at least one of the
# three rounds must stop at layer 1.
# usage: startup_signal.sh PIPER REPO
set -uo pipefail
piper=$1 repo=$2
. "$(dirname "$0")/../lib.sh"
t_need mpiexec
[ -r /proc/self/status ] || { echo "SKIPPED: no /proc"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
mp=
t_at_exit='[ -n "$mp" ] && kill -KILL "$mp" 2>/dev/null'
t_workdir
in=$repo/inputs/llama2-70b-a100-80gb-whatif.json
pname=$(basename "$piper")
pname=${pname:0:15} # (/proc/PID/comm holds 15 characters)
# 1 if process $1 catches SIGTERM (bit 15 of SigCgt); builtins only
catches_term() {
  local k v
  while read -r k v; do
    [ "$k" = SigCgt: ] && { (((0x$v >> 14) & 1)); return; }
  done 2>/dev/null <"/proc/$1/status"
  return 1
}
# the child processes of $1, into the array kids (/proc's list, else pgrep)
children_of() {
  kids=()
  if [ -r "/proc/$1/task/$1/children" ]; then
    read -r -a kids 2>/dev/null <"/proc/$1/task/$1/children"
  else
    read -r -a kids < <(pgrep -P "$1" | tr '\n' ' ')
  fi
  return 0
}
first=0 # rounds stopped at layer 1
for round in 1 2 3; do
  rm -rf a.h5 a.h5.ckpt .a.h5.partial* out.txt err.txt
  t0=$(date +%s.%N)
  timeout -s KILL 90 mpiexec -np 2 --oversubscribe "$piper" plan "$in" --devices 1024 --out a.h5 >out.txt 2>err.txt &
  mp=$!
  sent=0 signalled=" "
  end=$((${EPOCHREALTIME/./} + 15000000)) # up to 15 s for the ranks to start
  while [ $sent -lt 2 ] && [ "${EPOCHREALTIME/./}" -lt $end ]; do
    kill -0 "$mp" 2>/dev/null || break # the run ended: the signal reached it
    children_of "$mp" # timeout > mpiexec > ranks
    launchers=("${kids[@]}")
    for launcher in "${launchers[@]}"; do
      children_of "$launcher"
      for pid in "${kids[@]}"; do
        [[ $signalled == *" $pid "* ]] && continue
        read -r comm 2>/dev/null <"/proc/$pid/comm" || continue
        if [ "$comm" != "$pname" ] || ! catches_term "$pid"; then continue; fi
        kill -TERM "$pid" && signalled+="$pid " && sent=$((sent + 1))
      done
    done
  done
  wait "$mp"
  rc=$?
  mp=
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  [ $sent -ge 1 ] || { bad "round $round: no rank was seen with its SIGTERM handler"; continue; }
  [ $rc -eq 75 ] || { bad "round $round: exit $rc, expected 75: $(head -c 400 err.txt)"; continue; }
  if grep -Eq "stopped by a signal (after|during) layer 1 of" err.txt; then
    first=$((first + 1))
  else
    grep -Eq "stopped by a signal (after|during) layer [0-9]+ of" err.txt ||
      bad "round $round: no stop reported: $(head -c 300 err.txt)"
  fi
  [ -s out.txt ] && bad "round $round: output printed: $(head -c 200 out.txt)"
  ls -a | grep -q partial && bad "round $round: partial file left"
  [ -e a.h5 ] && bad "round $round: an archive was written"
  [ -s a.h5.ckpt ] || bad "round $round: no checkpoint"
  awk -v s="$secs" 'BEGIN { exit !(s < 30) }' || bad "round $round: took $secs s"
  ok "round $round: $sent of 2 ranks signalled; exit 75 in $secs s: $(grep -Eo "stopped by a signal [a-z]+ layer [0-9]+" err.txt)"
done
[ $first -ge 1 ] && ok "$first of 3 rounds stopped at layer 1 (signalled during start-up)" ||
  bad "no round stopped at layer 1: the signals all landed after start-up, or were honoured late"
# the checkpoint resumes to a complete archive
timeout -s KILL 120 mpiexec -np 2 --oversubscribe "$piper" plan "$in" --devices 1024 --out a.h5 --resume \
  >resume.out 2>resume.err
rc=$?
[ $rc -eq 0 ] && [ -s a.h5 ] && grep -q "time per sample" resume.out && ok "resumed: exit 0, archive written" ||
  bad "resume: exit $rc: $(head -c 300 resume.err)"
t_done
