# shellcheck shell=bash
# Two emulated hosts on one machine, for the tests that run piper across hosts
# (tests/mpi/multihost.sh over Open MPI's own launcher, tests/slurm/two_nodes.sh
# under Slurm).  Source it, then:
#
#   netns_up TAG   make two network namespaces, TAG-h1 and TAG-h2, joined by a
#                  veth pair on a private /24 (addresses $NETNS_NET.1 and .2,
#                  only loopback besides); sets NETNS_NET, NETNS_1, NETNS_2.
#                  Exits 77 (CTest: Skipped) with a reason where namespaces,
#                  UTS namespaces or veth pairs are not permitted (not root, no
#                  ip/unshare/nsenter, a container without CAP_SYS_ADMIN)
#   netns_on NS NAME CMD...
#                  run CMD in namespace NS with its own UTS namespace, whose
#                  hostname is NAME (nsenter, not `ip netns exec`, so that the
#                  machine's /sys, with its cgroup file system, stays mounted)
#   netns_down     kill every process left in the namespaces and delete them
#                  (the veth pair goes with them); safe to call twice, and
#                  after a netns_up that stopped half-way (set the trap first)
#
# Nothing leaves the namespaces: the pair's two ends are their only links.

# netns_skip WHY: the test cannot run here: Skipped (exit 77)
netns_skip() {
  echo "SKIPPED: $*"
  exit 77
}

netns_up() {
  local tag=$1 c
  for c in ip unshare nsenter; do command -v $c >/dev/null || netns_skip "$c is not installed"; done
  [ "$(id -u)" = 0 ] || netns_skip "creating network namespaces needs root"
  NETNS_TAG=$tag NETNS_1=$tag-h1 NETNS_2=$tag-h2
  # a private /24 unlikely to be in use: 10.(200..249).(0..255)
  NETNS_NET=10.$((200 + $$ % 50)).$(($$ / 50 % 256))
  ip netns add "$NETNS_1" 2>/dev/null || netns_skip "network namespaces are not permitted here"
  ip netns add "$NETNS_2" 2>/dev/null || netns_skip "network namespaces are not permitted here"
  unshare --uts true 2>/dev/null || netns_skip "UTS namespaces are not permitted here"
  ip link add "$tag-a" type veth peer name "$tag-b" 2>/dev/null || netns_skip "veth pairs are not permitted here"
  ip link set "$tag-a" netns "$NETNS_1" && ip link set "$tag-b" netns "$NETNS_2" ||
    netns_skip "cannot move veth ends into namespaces"
  ip -n "$NETNS_1" addr add "$NETNS_NET.1/24" dev "$tag-a" && ip -n "$NETNS_2" addr add "$NETNS_NET.2/24" dev "$tag-b"
  for c in "$NETNS_1" "$NETNS_2"; do ip -n "$c" link set lo up; done
  ip -n "$NETNS_1" link set "$tag-a" up && ip -n "$NETNS_2" link set "$tag-b" up
}

netns_on() {
  local ns=$1 name=$2
  shift 2
  nsenter --net="/run/netns/$ns" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
}

netns_down() {
  local ns pid
  for ns in ${NETNS_1:-} ${NETNS_2:-}; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  [ -z "${NETNS_TAG:-}" ] || ip link del "$NETNS_TAG-a" 2>/dev/null # (if it never left this namespace)
  return 0
}
