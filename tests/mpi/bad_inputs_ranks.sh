#!/usr/bin/env bash
# Bad inputs at 2 ranks get what they get at 1: for files of the invalid
# corpus (syntax errors read at once or, with a NUL byte, streamed; errors
# of meaning; the unit tests compare a buffer's verdict with the stream's
# on every file of it) and for generated ones (16 MB of random bytes and a NUL
# byte after valid JSON, which rank 0 reads at once or streams; 70 MB of
# '[', larger than a file read at once; a missing file; a folder), the
# exit code and the error line of `mpiexec -np 2 piper plan` must be those
# of `piper plan` (no MPI), and nothing may go to standard output.
# usage: bad_inputs_ranks.sh PIPER CORPUS_DIR
set -u
piper=$1 corpus=$2
. "$(dirname "$0")/../lib.sh"
t_need mpiexec
t_mpi_env
t_workdir
head -c 16000000 /dev/urandom >random-16mb.json
printf '{"nodes": [], "edges": []}\0trailing' >nul-after.json
head -c 70000000 /dev/zero | tr '\0' '[' >nesting-70mb.json
mkdir folder.json
n=0
for f in "$corpus"/syntax-{binary-garbage,invalid-utf8,truncated,empty,two-documents}.json \
  "$corpus"/{top-array,edge-cycle,node-id-null,tmpc-param-null}.json "$work/random-16mb.json" "$work/nul-after.json" "$work/nesting-70mb.json" \
  "$work/missing.json" "$work/folder.json"; do
  rc1=0 rc2=0
  timeout 120 "$piper" plan "$f" --no-archive --quiet >out1 2>err1 || rc1=$?
  timeout 120 mpiexec -np 2 "$piper" plan "$f" --no-archive --quiet >out2 2>err2 || rc2=$?
  line1=$(grep -m1 'piper: error:' err1) line2=$(grep -m1 'piper: error:' err2)
  if [ ! -e "$f" ] && [ "$f" != "$work/missing.json" ]; then
    bad "$f: not in the corpus"
  elif [ "$rc1" -ne 2 ] || [ -z "$line1" ]; then
    bad "$f: 1 rank exited $rc1 ($line1), expected 2 and an error"
  elif [ "$rc2" -ne "$rc1" ] || [ "$line2" != "$line1" ] || [ -s out2 ]; then
    bad "$f: 2 ranks exited $rc2 with '$line2', 1 rank $rc1 with '$line1'"
  fi
  n=$((n + 1))
done
[ "$n" -eq 14 ] || bad "$n inputs tried, expected 14"
ok "$n bad inputs: the same exit code and message at 1 and 2 ranks"
t_done
