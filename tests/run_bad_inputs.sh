#!/usr/bin/env bash
# run_bad_inputs.sh - feeds piper malformed inputs and bad command lines and
# checks that each is refused cleanly.
#
# usage: run_bad_inputs.sh PIPER_BINARY CORPUS_DIR
#
# For every row of CORPUS_DIR/expected.tsv (file, exit code, message
# substring) it runs `piper plan FILE --no-archive --quiet` and asserts:
#   - the exit code is the expected one (and below 128: no signal);
#   - standard output is empty;
#   - standard error names the file and contains the expected substring;
#   - no sanitizer report appears on standard error.
# Then it does the same for inputs generated here into a temporary folder
# (100 MB of nesting, megabytes of random bytes, a missing file, a folder,
# standard input) and for command lines with usage errors.
# Prints "N passed, M failed" and exits 1 if anything failed.
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 PIPER_BINARY CORPUS_DIR" >&2
  exit 2
fi
piper=$1
corpus=$2
if [ ! -x "$piper" ]; then
  echo "$0: $piper is not an executable" >&2
  exit 2
fi
if [ ! -f "$corpus/expected.tsv" ]; then
  echo "$0: $corpus/expected.tsv not found" >&2
  exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/piper-bad-inputs.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0

# check NAME EXPECTED_EXIT SUBSTRING MUST_NAME [STDIN_FILE --] ARGS...
# Runs piper ARGS (stdin from STDIN_FILE, else /dev/null) with a time limit
# and checks the result.  MUST_NAME is a string stderr has to contain too
# (the file name), or "" for usage errors.
check() {
  local name=$1 want=$2 sub=$3 must=$4
  shift 4
  local in=/dev/null
  if [ "${2:-}" = "--" ]; then
    in=$1
    shift 2
  fi
  local rc=0
  timeout 120 "$piper" "$@" <"$in" >"$tmp/out" 2>"$tmp/err" || rc=$?
  local why=""
  if [ "$rc" -ge 124 ]; then
    why="exit $rc: killed by a signal or timed out"
  elif [ "$rc" -ne "$want" ]; then
    why="exit $rc, expected $want"
  elif [ -s "$tmp/out" ]; then
    why="wrote $(wc -c <"$tmp/out") bytes to standard output"
  elif grep -qaE 'Sanitizer|runtime error:' "$tmp/err"; then
    why="sanitizer report"
  elif [ -n "$must" ] && ! grep -qaF -- "$must" "$tmp/err"; then
    why="standard error does not name '$must'"
  elif ! grep -qaF -- "$sub" "$tmp/err"; then
    why="standard error lacks: $sub"
  fi
  if [ -z "$why" ]; then
    passed=$((passed + 1))
    echo "ok    $name"
  else
    failed=$((failed + 1))
    echo "FAIL  $name: $why"
    echo "      command: $piper $*"
    sed -n '1,5s/^/      stderr: /p' "$tmp/err"
  fi
}

# 1. The committed corpus.
rows=0
declare -A listed=()
while IFS=$'\t' read -r file want sub || [ -n "$file" ]; do
  [ "$file" = "file" ] && continue # header
  [ -z "$file" ] && continue
  rows=$((rows + 1))
  listed[$file]=1
  if [ ! -f "$corpus/$file" ]; then
    failed=$((failed + 1))
    echo "FAIL  $file: listed in expected.tsv but missing"
    continue
  fi
  check "$file" "$want" "$sub" "$corpus/$file" plan "$corpus/$file" --no-archive --quiet
done <"$corpus/expected.tsv"

for f in "$corpus"/*; do
  base=${f##*/}
  [ "$base" = "expected.tsv" ] && continue
  if [ -z "${listed[$base]:-}" ]; then
    failed=$((failed + 1))
    echo "FAIL  $base: in the corpus but not in expected.tsv"
  fi
done
if [ "$rows" -lt 45 ]; then
  failed=$((failed + 1))
  echo "FAIL  expected.tsv has $rows cases, fewer than 45"
fi

# 2. Inputs too big or too odd to commit, generated here.
deep=$tmp/nesting-100mb.json
head -c 100000000 /dev/zero | tr '\0' '[' >"$deep"
check "generated: 100 MB of '['" 2 "line 1, column 2049: invalid JSON: maximum parsing depth reached" "$deep" \
  plan "$deep" --no-archive --quiet
check "generated: 100 MB of '[' on standard input" 2 "<stdin>: line 1, column 2049: invalid JSON" "" \
  "$deep" -- plan - --no-archive --quiet
rm -f "$deep"

deepobj=$tmp/nesting-objects.json
{
  printf '{"name": '
  head -c 1000000 /dev/zero | tr '\0' '{' | sed 's/{/{"a":/g'
} >"$deepobj"
check "generated: objects nested 1000000 deep" 2 "line 1, column 10245: invalid JSON: maximum parsing depth reached" \
  "$deepobj" plan "$deepobj" --no-archive --quiet

garbage=$tmp/garbage-16mb.json
head -c 16000000 /dev/urandom >"$garbage"
check "generated: 16 MB of random bytes" 2 "invalid JSON" "$garbage" plan "$garbage" --no-archive --quiet

printf '\xff' >"$tmp/garbage-prefix.json"
head -c 16000000 /dev/zero >>"$tmp/garbage-prefix.json"
check "generated: 0xff and 16 MB of NUL bytes" 2 "line 1, column 0: invalid JSON: unable to decode byte 0xff" \
  "$tmp/garbage-prefix.json" plan "$tmp/garbage-prefix.json" --no-archive --quiet

longkey=$tmp/long-key.json
{
  printf '{"maxMemoryPerDevice": 1000, "maxDevices": 2, "bandwidth": 10, "mbsInBatch": 2, "edges": [],\n'
  printf ' "nodes": [{"id": 1, "TMPCs": {"'
  head -c 100000 /dev/zero | tr '\0' '7'
  printf '": []}}]}\n'
} >"$longkey"
check "generated: 100000-digit t key" 2 'nodes[0].TMPCs["7777777777777777777777777777777777777777..."]: key must be a tensor-parallel degree' \
  "$longkey" plan "$longkey" --no-archive --quiet

check "missing file" 2 "cannot open: No such file or directory" "$tmp/does-not-exist.json" \
  plan "$tmp/does-not-exist.json" --no-archive --quiet
mkdir "$tmp/folder.json"
check "folder given as the input" 2 "cannot read: Is a directory" "$tmp/folder.json" \
  plan "$tmp/folder.json" --no-archive --quiet
check "empty standard input" 2 "<stdin>: line 1, column 0: invalid JSON" "" plan - --no-archive --quiet

# 3. Usage errors (the input file is never read: it does not exist).
never=$tmp/never-read.json
check "usage: unknown option" 2 "unknown option '--bogus'" "" plan "$never" --bogus
check "usage: --devices 0" 2 "--devices: must be between 1 and 1000000, got 0" "" plan "$never" --devices 0
check "usage: --devices abc" 2 "--devices: 'abc' is not an integer" "" plan "$never" --devices abc
check "usage: --devices 99999999999999999999" 2 "--devices: '99999999999999999999' is not an integer" "" \
  plan "$never" --devices 99999999999999999999
check "usage: --devices without a value" 2 "option '--devices' needs a value" "" plan "$never" --devices
check "usage: --memory 12XB" 2 "--memory: unknown unit in '12XB'" "" plan "$never" --memory 12XB
check "usage: --memory inf" 2 "--memory: 'inf' is not a number" "" plan "$never" --memory inf
check "usage: --memory 0GiB" 2 "--memory: must be > 0, got '0GiB'" "" plan "$never" --memory 0GiB
check "usage: --memory 1e400" 2 "--memory: '1e400' is too large" "" plan "$never" --memory 1e400
check "usage: --bandwidth -5GB/s" 2 "--bandwidth: must be > 0, got '-5GB/s'" "" plan "$never" --bandwidth -5GB/s
check "usage: --microbatches 1.5" 2 "--microbatches: '1.5' is not an integer" "" plan "$never" --microbatches 1.5
check "usage: --format xml" 2 "--format: expected text or json, got 'xml'" "" plan "$never" --format xml
check "usage: missing input argument" 2 "missing the input file" "" plan --no-archive --quiet

# --zero, --devices-per-node and --intra-node-bandwidth on a valid input
# without the fields they need (the corpus file with its string fixed)
valid=$tmp/valid.json
sed 's/"timePerSample": "0.5"/"timePerSample": 0.5/' "$corpus/tmpc-time-string.json" >"$valid"
check "usage: --zero 4" 2 "--zero: must be between 0 and 3, got 4" "" plan "$never" --zero 4
check "--zero 1 without optimizerBytes" 2 'nodes[0].TMPCs["1"][0]: missing optimizerBytes, which --zero 1 needs' \
  "$valid" plan "$valid" --zero 1 --no-archive --quiet
sed 's/"memoryUsageB": \([0-9.]*\),/"memoryUsageB": \1, "optimizerBytes": 1, "gradientBytes": 1,/' "$valid" >"$tmp/zero2.json"
check "--zero 3 with optimizerBytes and gradientBytes only" 2 \
  'nodes[0].TMPCs["1"][0]: missing weightBytes, which --zero 3 needs' "$tmp/zero2.json" \
  plan "$tmp/zero2.json" --zero 3 --no-archive --quiet
check "usage: --devices-per-node 0" 2 "--devices-per-node: must be between 1 and 1000000, got 0" "" \
  plan "$never" --devices-per-node 0
check "--devices-per-node 1 with t = 2" 2 \
  'nodes[0].TMPCs["2"]: tensor-parallel degree 2 exceeds --devices-per-node = 1' "$valid" \
  plan "$valid" --devices-per-node 1 --intra-node-bandwidth 100GB/s --no-archive --quiet
check "--devices-per-node without an intra-node bandwidth" 2 "--devices-per-node needs --intra-node-bandwidth" "" \
  plan "$valid" --devices-per-node 8 --no-archive --quiet
check "usage: --planner equi with --zero" 2 "--planner equi models neither --zero" "" \
  plan "$tmp/zero2.json" --zero 2 --planner equi --no-archive --quiet
check "usage: --intra-node-bandwidth -1" 2 "--intra-node-bandwidth: must be > 0, got '-1'" "" \
  plan "$never" --intra-node-bandwidth -1
check "usage: two input files" 2 "unexpected argument" "" plan "$never" "$never" --no-archive
check "usage: unknown command" 2 "unknown command 'plna'" "" plna "$never"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
