#!/usr/bin/env bash
# What a first touch of memory costs on this machine (bench/page_probe.c):
# microseconds per 4 KiB page for private memory faulted a page at a time,
# mapped in by one MADV_POPULATE_WRITE call and then written, on 2 MiB pages
# (right after other huge pages were freed, and after 3 s idle, when a guest
# that reports its free memory to the host has handed them back), a /dev/shm file (the backing of MPI shared windows) written by one process
# and read by a second, and such a file written by memcpy or by the kernel
# (pp_pages_copy), made read-only and read back by the writer, and a memfd
# made of huge pages (as the node's tables are, pp_shared_pages_map_in)
# written by one process and read by a second.  These costs decide how much
# of a 2-rank run's time its ranks cannot share: each rank maps every page of
# the node's window that it reads (bench/results-node.txt).  Also prints the kernel, the
# transparent huge page settings and the hypervisor, if the kernel names one.
# usage: [MB=64] [ROUNDS=5] bench/bench_pages.sh   (writes only a temp folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -Wall -Wextra -o "$work/page_probe" "$here/page_probe.c"
echo "# page costs, $(date -u +%Y-%m-%dT%H:%MZ), $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
thp=/sys/kernel/mm/transparent_hugepage
echo "# transparent huge pages: enabled $(cat $thp/enabled 2>/dev/null || echo -), shmem_enabled $(cat $thp/shmem_enabled 2>/dev/null || echo -)"
hv=$(dmesg 2>/dev/null | grep -m1 -o 'Hypervisor detected: .*' || true)
echo "# ${hv:-hypervisor: not named by the kernel (or dmesg not readable)}"
"$work/page_probe" "${MB:-64}" "${ROUNDS:-5}"
