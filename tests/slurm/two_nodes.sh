#!/bin/bash
# two_nodes.sh BUILD_DIR - jobs/plan.sbatch on a real two-node Slurm: `sbatch -N 2`.
#
# Each node is an emulated host (tests/netns.sh: a network namespace with its own address on a
# private /24, and a UTS namespace with its own hostname) running its own slurmd; the first runs
# slurmctld too (tests/slurm/minicluster.sh).  srun starts the ranks on both nodes through Slurm's
# PMIx plugin, and they talk over Open MPI's TCP transport between the namespaces.  Rank parity
# across nodes, as tests/mpi/multihost.sh checks it under mpirun: at 2 nodes x 1 rank and 2 nodes
# x 2 ranks the job completes, its plan, curve and /dp datasets are those of one process, and the
# archive, written collectively from both nodes, names both nodes' hostnames; and jobs/sweep.sbatch
# over both nodes gives every row of a small grid the archive (curve, /dp) of a one-process sweep,
# as one job of 2 and 4 ranks and as a job array whose two tasks run on different nodes.
#
# Everything it starts (namespaces, daemons, job processes) is stopped on exit and traffic stays
# between its namespaces.  Installs slurm-wlm if it is missing; Skipped (77) where it cannot be
# installed, or where namespaces cannot be made.  PIPER_SHARED_DIR (default ../shared beside the
# repository) adds BERT-32 at K = 64 when it is there.
set -uo pipefail

if [[ -z ${PIPER_TWO_NODES_TIMED:-} ]]; then # (stop inside CTest's timeout, which skips cleanups)
  PIPER_TWO_NODES_TIMED=1 exec timeout -s TERM "${PIPER_TWO_NODES_LIMIT:-400}" bash "$0" "$@"
fi
[[ $# -eq 1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
BUILD_DIR=$(cd "$1" && pwd)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
piper=$BUILD_DIR/piper
SHARED=${PIPER_SHARED_DIR:-$REPO/../shared}
[[ -x $piper ]] || { echo "FAIL no piper at $piper"; exit 1; }
# shellcheck source=../lib.sh
source "$REPO/tests/lib.sh"
for c in h5diff h5dump python3; do t_need $c; done

# shellcheck source=minicluster.sh
source "$REPO/tests/slurm/minicluster.sh"
# shellcheck source=../netns.sh
source "$REPO/tests/netns.sh"
rc=0
why=$(mc_ensure_slurm) || rc=$?
((rc == 77)) && { echo "SKIPPED: $why"; exit 77; }
((rc == 0)) || die "$why"

tag=ps$$
W=$(mktemp -d /tmp/piper-slurm2.XXXXXX)
chmod 755 "$W"
cleanup() {
  mc_stop
  netns_down # (the job processes left in the namespaces with it)
  if [[ ${PIPER_SLURM_KEEP:-0} == 1 ]]; then echo "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM
netns_up $tag

# the two nodes: names, addresses, and how to run a command on each
n1=$tag-n1 n2=$tag-n2
on_node() {
  local node=$1
  shift
  case $node in
  "$n1") netns_on "$NETNS_1" "$n1" "$@" ;;
  "$n2") netns_on "$NETNS_2" "$n2" "$@" ;;
  *) echo "no node $node" >&2; return 1 ;;
  esac
}
export MC_NODES="$n1=$NETNS_NET.1 $n2=$NETNS_NET.2" MC_ON=on_node MC_CPUS=2
t0=$SECONDS
if ! mc_start "$W/cluster"; then
  echo "FAIL two-node Slurm did not start"
  mc_dump_logs
  exit 1
fi
ok "two-node Slurm up: $n1 ($NETNS_NET.1), $n2 ($NETNS_NET.2), $((SECONDS - t0)) s"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp
export OMPI_MCA_btl_tcp_if_include=$NETNS_NET.0/24 OMPI_MCA_oob_tcp_if_include=$NETNS_NET.0/24
export PIPER=$piper PIPER_HOME=$REPO PIPER_ALL_RANKS_WORK=1
unset PIPER_LAUNCHER

cases=("bert-large|$REPO/inputs/bert-large-a100-40gb.json|64|8GiB|512|25GiB/s")
table=$SHARED/reference/expected.tsv
if [[ -r $table ]]; then
  while IFS=$'\t' read -r c input K M N B _; do
    [[ $c == bert32_k64_m8_n512 ]] && cases+=("$c|$SHARED/$input|$K|$M|$N|$B")
  done <"$table"
fi
# verdict WHAT WHY: "ok   WHAT" if WHY is empty, else "FAIL WHAT: WHY" and the test fails
verdict() { if [[ -z $2 ]]; then ok "$1"; else bad "$1: $2"; fi; }
cd "$W"
for spec in "${cases[@]}"; do
  IFS='|' read -r c input K M N B <<<"$spec"
  args=("$input" --devices "$K" --memory "$M" --microbatches "$N" --bandwidth "$B" --quiet --format json)
  "$piper" plan "${args[@]}" --out "$W/$c-1.h5" </dev/null >"$W/$c-1.json" 2>"$W/$c-1.err"
  base=$(t_plan <"$W/$c-1.json") curve=$("$piper" show "$W/$c-1.h5" --curve | md5sum)
  for per in 1 2; do
    out=$W/$c-2x$per
    job=$(mc_ctl timeout 300 sbatch --parsable --wait -N 2 -n $((2 * per)) --ntasks-per-node=$per -o "$out.log" \
      "$REPO/jobs/plan.sbatch" "${args[@]}" --out "$out.h5" 2>"$out.sbatch.err")
    jrc=$?
    state=$(mc_ctl scontrol show job "${job%%;*}" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    nodes=$(mc_ctl scontrol show job "${job%%;*}" 2>/dev/null | grep -o ' NodeList=[^ ]*' | cut -d= -f2)
    why=
    if ((jrc != 0)); then why="sbatch --wait exited $jrc, job ${job:-?} $state: $(tail -c 600 "$out.log" "$out.sbatch.err" 2>/dev/null)"
    elif [[ $(grep -m 1 '^{' "$out.log" | t_plan 2>/dev/null) != "$base" ]]; then why="plan differs from one process: $(tail -c 600 "$out.log")"
    elif [[ $("$piper" show "$out.h5" --curve | md5sum) != "$curve" ]]; then why="curve differs"
    elif ! h5diff -q "$W/$c-1.h5" "$out.h5" /dp >/dev/null; then why="/dp differs"
    else
      hosts=$(h5dump -d /run/hostnames "$out.h5" 2>/dev/null | grep -o "$tag-n[12]" | sort -u | tr '\n' ' ')
      [[ $hosts == "$n1 $n2 " ]] || why="/run/hostnames does not name both nodes: '$hosts'"
    fi
    verdict "$c: sbatch -N 2 --ntasks-per-node=$per (job ${job%%;*} on $nodes) = 1 process" "$why"
  done
done

# jobs/sweep.sbatch over both nodes: a grid of two groups (rows that differ only in K share one DP)
# planned by the job's 2 and 4 ranks, every row's archive equal to that of a sweep in one process.
mkdir -p "$W/sweep"
printf '%s\n' "name	input	devices	memory	bandwidth	microbatches	flags" \
  "k16	$REPO/inputs/bert-large-a100-40gb.json	16	8GiB	25GiB/s	512	none" \
  "k64	$REPO/inputs/bert-large-a100-40gb.json	64	8GiB	25GiB/s	512	none" \
  "m4-k32	$REPO/inputs/bert-large-a100-40gb.json	32	4GiB	25GiB/s	512	none" >"$W/sweep/grid.tsv"
"$piper" sweep "$W/sweep/grid.tsv" --out-dir "$W/sweep/one" --quiet </dev/null >"$W/sweep/one.out" 2>&1 ||
  bad "piper sweep in one process: $(tail -c 600 "$W/sweep/one.out")"
# rows_differ DIR: why a row of DIR differs from the one-process sweep (nothing if none does)
rows_differ() {
  local row
  for row in k16 k64 m4-k32; do
    if [[ ! -f $1/$row.h5 ]]; then echo "no archive for row $row"
    elif [[ $("$piper" show "$1/$row.h5" --curve | md5sum) != $("$piper" show "$W/sweep/one/$row.h5" --curve | md5sum) ]]; then
      echo "row $row: curve differs from the one-process sweep"
    elif ! h5diff -q "$W/sweep/one/$row.h5" "$1/$row.h5" /dp >/dev/null; then echo "row $row: /dp differs"
    else continue
    fi
    return
  done
}
for per in 1 2; do
  out=$W/sweep/two-x$per
  job=$(mc_ctl timeout 300 sbatch --parsable --wait -N 2 -n $((2 * per)) --ntasks-per-node=$per \
    -o "$out.log" "$REPO/jobs/sweep.sbatch" "$W/sweep/grid.tsv" "$out" 2>"$out.sbatch.err")
  jrc=$?
  if ((jrc != 0)); then why="sbatch --wait exited $jrc, job ${job:-?}: $(tail -c 600 "$out.log" "$out.sbatch.err" 2>/dev/null)"
  else why=$(rows_differ "$out")
  fi
  verdict "sweep.sbatch -N 2 --ntasks-per-node=$per (job ${job%%;*}): 3 rows = one-process sweep" "$why"
done

# The same grid as a job array of 2 tasks of 2 ranks each: a task fills a node (2 CPUs), so the
# tasks run on different nodes at once, each planning its groups (task 0 rows k16 and k64, task
# 1 row m4-k32) into the one output folder.
out=$W/sweep/array
job=$(mc_ctl timeout 300 sbatch --parsable --wait --array=0-1 -N 1 -n 2 -o "$out-%a.log" \
  "$REPO/jobs/sweep.sbatch" "$W/sweep/grid.tsv" "$out" 2>"$out.sbatch.err")
jrc=$?
job=${job%%;*}
nodes=$(mc_ctl scontrol show job "$job" 2>/dev/null | grep -o ' NodeList=[^ ]*' | cut -d= -f2 | sort -u | tr '\n' ' ')
if ((jrc != 0)); then why="sbatch --wait exited $jrc, job ${job:-?}: $(tail -c 600 "$out"-*.log "$out.sbatch.err" 2>/dev/null)"
elif [[ $nodes != "$n1 $n2 " ]]; then why="the tasks did not run on both nodes: '$nodes'"
else why=$(rows_differ "$out")
fi
verdict "sweep.sbatch --array=0-1 (job $job, tasks on $nodes): 3 rows = one-process sweep" "$why"
((t_status == 0)) || mc_dump_logs
exit $t_status
