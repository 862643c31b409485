#!/bin/sh
# vstage_cli.sh PIPER WORK_DIR
# `plan --virtual-stages`: the bad combinations exit 2 naming the rule; a
# good one plans (exit 0) and reports the chunks per device group; a
# --max-memory-use below the tables' estimate is refused up front.
set -u
piper=$1
. "$(dirname "$0")/../lib.sh"
t_workdir "$2"
# run CODE ARGS...: runs piper plan ARGS, checks the exit code; output in out/err.
run() {
  code=$1
  shift
  t_exit "$code" "$piper" plan "$@"
}

"$piper" gen gpt3-1.3b --gpu a100-80gb --devices 16 --layers 4 -o g.json || exit 1
run 2 g.json --virtual-stages 2 --schedule 1f1b --no-archive
has err "--virtual-stages 2 needs --uniform"
run 2 g.json --virtual-stages 2 --uniform --no-archive
has err "--virtual-stages 2 needs a synchronous schedule (--schedule 1f1b or gpipe)"
run 2 g.json --virtual-stages 0 --uniform --schedule 1f1b --no-archive
has err "--virtual-stages"
run 2 g.json --virtual-stages 64 --uniform --schedule 1f1b --no-archive
has err "too few for 64 chunks on even one device group"
run 0 g.json --virtual-stages 2 --uniform --schedule gpipe --no-archive --quiet
has out "virtual stages: 2 chunks per device group"
# --max-memory-use: the Pareto rows' estimate refuses a limit that is too
# small before the search starts (no progress line), for each kind of row
for o in "--schedule 1f1b" "--uniform --schedule gpipe" "--uniform --schedule 1f1b --virtual-stages 2"; do
  # shellcheck disable=SC2086
  run 1 g.json $o --no-archive --max-memory-use 1000
  has err "the DP tables would need about"
  has err "lower --devices or raise --max-memory-use"
  grep -q "layer " err && bad "$o: the search started before the refusal"
  # shellcheck disable=SC2086
  run 0 g.json $o --no-archive --max-memory-use 1GB --quiet
done
t_done
