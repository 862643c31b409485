#!/bin/sh
# vstage_cli.sh PIPER WORK_DIR
# `plan --virtual-stages`: the bad combinations exit 2 naming the rule; a
# good one plans (exit 0) and reports the chunks per device group; a
# --max-memory-use below the tables' estimate is refused up front; and an
# archive whose tables break the rows' rule (each entry in the row of its
# budget p t d, its class one of the problem's) is refused by `show` with
# exit 2 naming the rule (copies edited with h5py).
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

# edited copies of a good archive: in the full downset's table, the first
# row with entries (after the empty one at budget 0) gets a class out of
# range, or the first row with room moves one budget later, where its
# entries do not land
py=/usr/bin/python3
$py -c 'import h5py' 2> /dev/null || { echo "SKIPPED: python3-h5py is not installed"; exit 77; }
run 0 g.json --virtual-stages 2 --uniform --schedule 1f1b --quiet --out v.h5
for edit in class row; do
  cp v.h5 "v-$edit.h5"
  $py - "v-$edit.h5" "$edit" << 'PY' || bad "$edit: the edit failed"
import sys
import h5py
with h5py.File(sys.argv[1], "r+") as f:
    dp = f["/dp"]
    r = int(dp["table_first_row"][-2]) + 1  # the last table's second row
    if sys.argv[2] == "class":
        x = int(dp["row_first_step"][r]) + 2  # its first entry's class slot
        dp["step_value"][x] = 1e300
    else:
        k = dp["row_k"][:]
        while r + 1 < len(k) and k[r] + 1 >= k[r + 1]:
            r += 1
        k[r] += 1
        assert k[r] <= f["/dp"].attrs["devices"]
        dp["row_k"][:] = k
PY
  t_exit 2 "$piper" show "v-$edit.h5"
  case $edit in
  class) has err "an entry's class is not one of the problem's" ;;
  row) has err "an entry is not in the row of its budget p t d" ;;
  esac
  has err "v-$edit.h5"
done
t_exit 0 "$piper" show v.h5
t_done
