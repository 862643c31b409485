#!/bin/sh
# held_limit.sh PIPER WORK_DIR SHARED_DIR
# --max-memory-use holds the tables themselves, not only the estimate made
# before the start: BERT-32 (../shared) at K = 256 needs 8.1 MB of 2bw
# tables where the estimate says about 2.7 MB, so a limit of 5 MB passes
# the estimate, and the search must stop with a clear error once the
# tables pass it (exit 1, no archive, no temporary file), at the same layer
# and with the same message on 1 and 2 ranks.
set -u
piper=$1
. "$(dirname "$0")/../lib.sh"
t_need mpiexec "Open MPI (mpiexec)"
t_workdir "$2"
cp "$3/piper-inputs/bert32a100.json" l.json || exit 1
args="l.json --devices 256 --memory 8589934592 --bandwidth 26843545600 --microbatches 1920 --max-memory-use 5.0e6 --out l.h5"
# shellcheck disable=SC2086
t_exit 1 "$piper" plan $args
grep -q "would need about" err && die "refused before the start: the case no longer tests the tables' own check"
grep -q "^piper: layer " err || bad "no progress line: the search did not start"
has err "piper: error: the DP tables hold"
has err "more than the 0.005 GB allowed (they were estimated at about"
has err "lower --devices or raise --max-memory-use"
grep "piper: error:" err > err1
[ -z "$(ls -A | grep -v -e '^l.json$' -e '^out$' -e '^err$' -e '^err1$')" ] || bad "files left behind: $(ls -A)"
t_mpi_env
# shellcheck disable=SC2086
t_exit 1 mpiexec -np 2 "$piper" plan $args --quiet
grep "piper: error:" err | sort -u > err2
cmp -s err1 err2 || { bad "1 and 2 ranks stop differently:"; cat err1 err2; }
[ ! -e l.h5 ] || bad "an archive was written"
t_done
