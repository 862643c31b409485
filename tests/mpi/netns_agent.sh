#!/bin/sh
# netns_agent.sh HOST COMMAND...: Open MPI's remote-start agent (plm_rsh_agent, in place of ssh)
# for the hosts that tests/mpi/multihost.sh emulates: runs COMMAND, as ssh would (one shell
# line), inside HOST's network namespace and a new UTS namespace named HOST.  The namespace is
# looked up in $PIPER_NETNS_MAP: lines "ADDRESS NAMESPACE HOSTNAME".
host=$1
shift
line=$(grep "^$host " "$PIPER_NETNS_MAP") || { echo "netns_agent: unknown host $host" >&2; exit 255; }
set -- "$host" "$@"
ns=$(echo "$line" | cut -d' ' -f2) name=$(echo "$line" | cut -d' ' -f3)
shift
exec ip netns exec "$ns" unshare --uts sh -c "hostname $name && $*"
