# shellcheck shell=bash
# minicluster.sh - a throw-away Slurm (munged + slurmctld + slurmd): one node on 127.0.0.1, or
# several nodes that the caller runs in network namespaces of their own.
#
# Source this file, then:
#   mc_ensure_slurm installs slurm-wlm with apt-get if slurmctld, slurmd, sbatch or munged is
#                   missing; returns 0 once they are there, 77 (Skipped) if they cannot be
#                   installed here (not root, no apt-get), 1 if apt-get failed; prints why on
#                   standard output when it does not return 0
#   mc_start DIR    write a config under DIR (an empty folder), start the daemons, wait until
#                   every node is idle and export SLURM_CONF; returns non-zero on failure
#   mc_ctl CMD...   run a Slurm command (sbatch, scontrol, ...) where slurmctld can be reached:
#                   on the first node
#   mc_stop         stop the daemons started by mc_start, by their PIDs (safe to call twice)
#   mc_dump_logs    print the tail of the daemons' logs (for failure reports)
#
# Everything (config, state, spool, logs, munge key and socket) lives under DIR, the daemons
# listen on their nodes' addresses only (namespaced nodes: on their namespace's, which only the
# other nodes reach), on ports picked free at start, and they authenticate
# through a private munged on a private socket, so a system-wide Slurm or munge is neither needed
# nor touched.  Needs root (the daemons run as root, munged as user munge) and the Debian
# packages slurm-wlm and munge.  MC_CPUS sets each node's CPU count (default 4): a node may claim
# more CPUs than the machine has (SlurmdParameters=config_overrides), so that a long job can run
# beside short ones.
#
# Several nodes: MC_NODES="NAME=ADDRESS NAME=ADDRESS ..." (default "localhost=127.0.0.1"; the
# first runs slurmctld too) and MC_ON=FUNCTION, called as FUNCTION NAME COMMAND... to run a
# daemon or a command on node NAME (in its namespace; by default COMMAND runs here).  Each node
# has its own spool, log and temporary folder under DIR (%n in the config), so that the jobs'
# PMIx folders of two nodes on one machine do not collide.

MC_DIR=
MC_PIDS=()

mc_ensure_slurm() {
  local c missing= log=/tmp/piper-slurm-apt.log
  for c in slurmctld slurmd sbatch munged; do command -v $c >/dev/null || missing+=" $c"; done
  [[ -z $missing ]] && return 0
  if [[ $(id -u) -ne 0 ]]; then echo "Slurm is not installed and installing it needs root"; return 77; fi
  if ! command -v apt-get >/dev/null; then echo "Slurm is not installed and there is no apt-get"; return 77; fi
  echo "installing slurm-wlm (apt-get install -y slurm-wlm; missing:$missing)" >&2
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm >$log 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update -q >>$log 2>&1 || true
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm >>$log 2>&1; then
      tail -n 20 $log
      echo "apt-get install -y slurm-wlm failed (its log above, in $log)"
      return 1
    fi
  fi
  return 0
}

mc_log() { printf '[minicluster] %s\n' "$*" >&2; }

# Prints a TCP port on 127.0.0.1 that nothing listens on (from a range far from Slurm's defaults).
mc_free_port() {
  local port tries=0
  while ((tries++ < 200)); do
    port=$((20000 + RANDOM % 20000))
    if ! ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; then
      printf '%s\n' "$port"
      return 0
    fi
  done
  mc_log "no free TCP port found"
  return 1
}

# mc_wait SECONDS COMMAND...: retries COMMAND every 0.2 s until it succeeds or time runs out.
mc_wait() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

mc_start() {
  MC_DIR=$1
  local cpus=${MC_CPUS:-4}
  local d=$MC_DIR
  mkdir -p "$d"/{munge,munge-socket,state,spool,log,run}
  chmod 755 "$d"

  # munged refuses keys and folders that other users could read or write.
  # The socket's folder must be open to every user (clients connect as themselves), the key's not.
  chown munge:munge "$d/munge" "$d/munge-socket"
  chmod 700 "$d/munge"
  chmod 755 "$d/munge-socket"
  if command -v mungekey >/dev/null 2>&1; then
    runuser -u munge -- mungekey --create --keyfile="$d/munge/munge.key" || return 1
  else
    dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none || return 1
    chown munge:munge "$d/munge/munge.key"
  fi
  chmod 600 "$d/munge/munge.key"
  local sock=$d/munge-socket/munge.socket
  runuser -u munge -- munged --socket="$sock" --key-file="$d/munge/munge.key" \
    --pid-file="$d/munge/munged.pid" --log-file="$d/munge/munged.log" \
    --seed-file="$d/munge/munged.seed" --num-threads=2 || { mc_log "munged did not start"; return 1; }
  mc_wait 10 test -s "$d/munge/munged.pid" || { mc_log "munged wrote no PID file"; return 1; }
  MC_PIDS+=("$(cat "$d/munge/munged.pid")")
  mc_wait 10 test -S "$sock" || { mc_log "munged made no socket"; return 1; }

  local ctld_port slurmd_port
  ctld_port=$(mc_free_port) || return 1
  slurmd_port=$(mc_free_port) || return 1
  while [[ $slurmd_port == "$ctld_port" ]]; do slurmd_port=$(mc_free_port) || return 1; done

  local nodes=${MC_NODES:-localhost=127.0.0.1} first names= node_lines= n
  first=${nodes%% *}
  for n in $nodes; do
    names+=${names:+,}${n%%=*}
    node_lines+="NodeName=${n%%=*} NodeAddr=${n#*=} CPUs=$cpus State=UNKNOWN"$'\n'
    mkdir -p "$d/spool/${n%%=*}" "$d/tmp/${n%%=*}"
  done
  # On the machine's own network the daemons listen on their node's address only; that takes
  # the node's name to resolve, which namespaced nodes' names do not (no /etc/hosts entries), and
  # there "any address" is the namespace's own addresses, which nothing else reaches anyway.
  local comm_params=CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
  [[ -z ${MC_ON:-} ]] || comm_params="# (CommunicationParameters: default, see minicluster.sh)"
  cat >"$d/slurm.conf" <<EOF
# A Slurm for piper's tests; generated by tests/slurm/minicluster.sh.
ClusterName=pipertest
SlurmctldHost=${first%%=*}(${first#*=})
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
${comm_params}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock,cred_expire=10
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
TmpFS=$d/tmp/%n
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd-%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=pmix
SwitchType=switch/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
EnforcePartLimits=ALL
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=4
KillWait=5
InactiveLimit=0
SchedulerParameters=sched_interval=2
${node_lines}PartitionName=debug Nodes=$names Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
  export SLURM_CONF=$d/slurm.conf

  mc_on "${first%%=*}" slurmctld -D -i -f "$SLURM_CONF" >"$d/log/slurmctld.stdout" 2>&1 &
  MC_PIDS+=($!)
  mc_wait 20 mc_ctl scontrol ping || { mc_log "slurmctld does not answer"; return 1; }
  for n in $nodes; do
    mc_on "${n%%=*}" slurmd -D -N "${n%%=*}" -f "$SLURM_CONF" >"$d/log/slurmd-${n%%=*}.stdout" 2>&1 &
    MC_PIDS+=($!)
  done
  mc_wait 30 mc_nodes_idle "$names" || { mc_log "the nodes did not become idle"; return 1; }
  return 0
}

# mc_on NAME COMMAND...: COMMAND on node NAME (through $MC_ON if set).
mc_on() {
  local node=$1
  shift
  if [[ -n ${MC_ON:-} ]]; then "$MC_ON" "$node" "$@"; else "$@"; fi
}

mc_ctl() {
  local nodes=${MC_NODES:-localhost=127.0.0.1}
  mc_on "${nodes%%=*}" "$@"
}

# mc_nodes_idle NAME,NAME...: every node named is idle.
mc_nodes_idle() {
  local states
  states=$(mc_ctl sinfo -h -N -n "$1" -o %T 2>/dev/null) || return 1
  [[ -n $states ]] && ! grep -vqx idle <<<"$states" && (($(wc -l <<<"$states") == $(tr , '\n' <<<"$1" | wc -l)))
}

# mc_alive PID: the process exists and is not a zombie.
mc_alive() {
  local state
  state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z ]]
}

mc_stop() {
  local pid i
  # slurmd, then slurmctld, then munged: the reverse of the start order.
  for ((i = ${#MC_PIDS[@]} - 1; i >= 0; i--)); do
    pid=${MC_PIDS[i]}
    kill -TERM "$pid" 2>/dev/null || continue
    local n=0
    while mc_alive "$pid" && ((n++ < 50)); do sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true # reap slurmctld and slurmd, our children
  done
  MC_PIDS=()
}

mc_dump_logs() {
  local f
  for f in "$MC_DIR"/log/slurmctld.log "$MC_DIR"/log/slurmd-*.log "$MC_DIR"/munge/munged.log; do
    [[ -f $f ]] || continue
    printf '%s\n' "---- last lines of $f"
    tail -n 30 "$f"
  done
}
