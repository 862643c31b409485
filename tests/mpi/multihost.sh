#!/usr/bin/env bash
# Several hosts on one machine: each emulated host is a Linux network namespace (its own veth
# address on a private /24 joining them) plus a UTS namespace (its own hostname); Open MPI
# starts its daemon on the other host through tests/mpi/netns_agent.sh instead of ssh and the
# ranks talk over its TCP transport.  Rank parity across hosts: every case gives the same plan,
# curve and /dp datasets at 2 hosts x 1 rank and 2 hosts x 2 ranks as in one process, and the
# archive, written collectively from both hosts, names both hostnames.  Everything the test
# creates (namespaces, veth pair, processes in them) is removed on exit; traffic stays between
# its namespaces.  Skipped (77) where network namespaces cannot be made (not root, no ip/unshare,
# a container without CAP_SYS_ADMIN).
# usage: multihost.sh PIPER REPO SHARED_DIR
set -uo pipefail
piper=$(realpath "$1") repo=$(realpath "$2") shared=${3:-}
agent=$repo/tests/mpi/netns_agent.sh
. "$repo/tests/lib.sh"
for c in mpirun h5diff python3; do t_need $c; done
# shellcheck source=../netns.sh
. "$repo/tests/netns.sh"
tag=pp$$
work=$(mktemp -d)
cleanup() {
  netns_down
  rm -rf "$work"
}
trap cleanup EXIT
netns_up $tag
ns1=$NETNS_1 ns2=$NETNS_2 net=$NETNS_NET
printf '%s %s %s\n' $net.1 $ns1 $tag-host1 $net.2 $ns2 $tag-host2 >"$work/map"
export PIPER_NETNS_MAP=$work/map
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PIPER_ALL_RANKS_WORK=1
export OMPI_MCA_plm_rsh_agent=$agent OMPI_MCA_btl=self,vader,tcp
export OMPI_MCA_btl_tcp_if_include=$net.0/24 OMPI_MCA_oob_tcp_if_include=$net.0/24
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_plm_rsh_no_tree_spawn=1
# run_on2 PER_HOST ARGS...: mpirun from host 1 with PER_HOST ranks on each of the two hosts
run_on2() {
  local per=$1
  shift
  printf '%s slots=%s\n' $net.1 "$per" $net.2 "$per" >"$work/hosts"
  netns_on $ns1 $tag-host1 timeout 300 mpirun --hostfile "$work/hosts" -np $((2 * per)) --map-by node "$piper" "$@"
}

cases=("bert-large|$repo/inputs/bert-large-a100-40gb.json|64|8GiB|512|25GiB/s|")
table=$shared/reference/expected.tsv
if [ -r "$table" ]; then
  while IFS=$'\t' read -r c input K M N B flags _; do
    case $c in bert32_k64_m8_n512 | bert32_k32_m2_n480 | bert32_k512_m8_notp | resnet_k8_m4)
      f=; case $flags in nodp) f=--no-dp ;; notp) f=--no-tp ;; noar) f=--no-recompute ;; esac
      cases+=("$c|$shared/$input|$K|$M|$N|$B|$f") ;;
    esac
  done <"$table"
fi
pass=0 fail=0
for spec in "${cases[@]}"; do
  IFS='|' read -r c input K M N B f <<<"$spec"
  args=(plan "$input" --devices "$K" --memory "$M" --microbatches "$N" --bandwidth "$B" $f --quiet --format json)
  "$piper" "${args[@]}" --out "$work/$c-1.h5" </dev/null >"$work/$c-1.json" 2>"$work/$c-1.err"
  base=$(t_plan <"$work/$c-1.json") curve=$("$piper" show "$work/$c-1.h5" --curve | md5sum)
  for per in 1 2; do
    out=$work/$c-2x$per
    run_on2 $per "${args[@]}" --out "$out.h5" </dev/null >"$out.json" 2>"$out.err"
    rc=$?
    why=
    if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then why="exit $rc: $(head -c 600 "$out.err")"
    elif [ "$(t_plan <"$out.json")" != "$base" ]; then why="plan differs from one process"
    elif [ "$("$piper" show "$out.h5" --curve | md5sum)" != "$curve" ]; then why="curve differs"
    elif ! h5diff -q "$work/$c-1.h5" "$out.h5" /dp >/dev/null; then why="/dp differs"
    else
      hosts=$(h5dump -d /run/hostnames "$out.h5" 2>/dev/null | grep -o "$tag-host[12]" | sort -u | tr '\n' ' ')
      [ "$hosts" = "$tag-host1 $tag-host2 " ] || why="/run/hostnames does not name both hosts: '$hosts'"
    fi
    if [ -z "$why" ]; then
      echo "ok   $c: 2 hosts x $per rank(s) = 1 process"
      pass=$((pass + 1))
    else
      echo "FAIL $c: 2 hosts x $per rank(s): $why"
      fail=$((fail + 1))
    fi
  done
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
