#!/usr/bin/env bash
# The MPI settings piper names before MPI starts under a launcher are only
# defaults (src/dist/dist.c): PMIX_MCA_gds=hash and, where no fabric device
# is visible, OMPI_MCA_pml=ob1.  Each rank reports what it started with
# (PIPER_DEBUG_DIST): the defaults when the user set nothing, the user's
# own values otherwise, and the plan is the same either way.  Without a
# launcher piper starts no MPI and sets neither.
# usage: launcher_defaults.sh PIPER INPUT
set -euo pipefail
piper=$1 input=$2
. "$(dirname "$0")/../lib.sh"
t_mpi_env
t_workdir
unset PMIX_MCA_gds OMPI_MCA_pml OMPI_MCA_mtl
export PIPER_DEBUG_DIST=1
args=(plan "$input" --devices 16 --quiet --no-archive --format json)
tps() { python3 -c 'import json,sys; print(json.load(sys.stdin)["tps"])' <"$1"; }
# the value of setting NAME on each rank line of the log FILE, one per line
setting() { sed -n "s/^rank [0-9]*: .*$1 \([^,]*\)\$/\1/p; s/^rank [0-9]*: .*$1 \([^,]*\),.*/\1/p" "$2"; }
# every one of the 2 ranks reported VALUE for NAME in FILE
both() {
  local got
  got=$(setting "$1" "$3" | sort | uniq -c | tr -s ' ')
  if [ "$got" = " 2 $2" ]; then ok "$4: $1 $2 on both ranks"; else bad "$4: $1 expected $2 on both ranks, got: $got"; fi
}

mpiexec -np 2 "$piper" "${args[@]}" >default.json 2>default.err || die "2 ranks with nothing set failed: $(cat default.err)"
both PMIX_MCA_gds hash default.err "nothing set"
if [ -d /sys/class/infiniband ]; then
  echo "skip the message-layer check: a fabric device is visible (/sys/class/infiniband)"
else
  both OMPI_MCA_pml ob1 default.err "nothing set"
fi

PMIX_MCA_gds=^ds12 mpiexec -np 2 "$piper" "${args[@]}" >user.json 2>user.err ||
  die "2 ranks with PMIX_MCA_gds=^ds12 failed: $(cat user.err)"
both PMIX_MCA_gds "^ds12" user.err "the user's store"
OMPI_MCA_mtl=^ofi mpiexec -np 2 "$piper" "${args[@]}" >mtl.json 2>mtl.err ||
  die "2 ranks with OMPI_MCA_mtl=^ofi failed: $(cat mtl.err)"
both OMPI_MCA_pml "(unset)" mtl.err "the user's transports"
for f in user mtl; do
  if [ "$(tps $f.json)" = "$(tps default.json)" ]; then ok "$f: the same TPS"; else bad "$f: another TPS"; fi
done

PIPER_MPI=0 "$piper" "${args[@]}" >serial.json 2>serial.err || die "the run without a launcher failed: $(cat serial.err)"
for name in PMIX_MCA_gds OMPI_MCA_pml; do
  got=$(setting "$name" serial.err)
  if [ "$got" = "(unset)" ]; then ok "no launcher: $name left unset"; else bad "no launcher: $name $got"; fi
done
t_done
