#!/bin/sh
# cli.sh PIPER WORK_DIR
# Command-line behaviour of `piper gen`: exit codes, --list, --help, -o
# writing atomically (same bytes as standard output, no temporary left, an
# unwritable target leaves nothing behind).
set -u
piper=$1
work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1
status=0

# expect CODE ARGS...: runs piper gen ARGS and checks the exit code.
expect() {
  want=$1
  shift
  "$piper" gen "$@" > "$work/out" 2> "$work/err"
  got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: piper gen $* exited $got, expected $want"
    cat "$work/err"
    status=1
  fi
}

expect 2
expect 2 bert-large
expect 2 --gpu a100-40gb
expect 2 no-such-model --gpu a100-40gb
expect 2 bert-large --gpu no-such-gpu
expect 2 bert-large --gpu a100-40gb --bogus
expect 2 bert-large --gpu a100-40gb --devices
expect 2 bert-large --gpu a100-40gb --devices 0
expect 2 bert-large --gpu a100-40gb --devices many
expect 2 bert-large --gpu a100-40gb --global-batch 10 --microbatch-size 3
expect 2 bert-large --gpu a100-40gb --efficiency 1.5
expect 2 bert-large --gpu a100-40gb --gpu-memory 12XB
expect 2 bert-large --gpu a100-40gb --kv-heads 5
expect 2 bert-large --gpu a100-40gb --mlp relu
expect 2 bert-large --gpu a100-40gb --max-tp 3
expect 2 bert-large --gpu a100-40gb extra-argument
grep -q "piper gen: " "$work/err" || { echo "FAIL: no 'piper gen:' message"; status=1; }

expect 0 --list
for name in bert-large gpt3-1.3b gpt3-13b gpt3-175b llama2-7b llama2-70b llama3.1-405b \
            a100-40gb a100-80gb h100-80gb h200-141gb; do
  grep -q "^  $name " "$work/out" || { echo "FAIL: --list lacks $name"; status=1; }
done
expect 0 --help
for flag in --gpu --devices --global-batch --microbatch-size --hidden --layers --heads --kv-heads --ffn --seq \
            --vocab --gpu-memory --flops --efficiency --nvlink --network --gpus-per-node --split-blocks \
            --flash-attention --precision --optimizer --output; do
  grep -q -- "$flag" "$work/out" || { echo "FAIL: --help lacks $flag"; status=1; }
done

# Standard output and -o give the same bytes; overrides are applied.
expect 0 gpt3-1.3b --gpu h100-80gb --layers 4 --split-blocks --devices 16 --network 100GB/s
cp "$work/out" "$work/stdout.json"
expect 0 gpt3-1.3b --gpu h100-80gb --layers 4 --split-blocks --devices 16 --network 100GB/s -o "$work/file.json"
cmp -s "$work/stdout.json" "$work/file.json" || { echo "FAIL: -o and stdout differ"; status=1; }
grep -q '"maxDevices": 16,' "$work/file.json" || { echo "FAIL: --devices not applied"; status=1; }
grep -q '"bandwidth": 100000000000,' "$work/file.json" || { echo "FAIL: --network not applied"; status=1; }
grep -q '"name": "block.3.mlp"' "$work/file.json" || { echo "FAIL: --layers/--split-blocks not applied"; status=1; }

# Overwriting keeps no temporary; a failed write leaves the old file intact.
echo old > "$work/keep.json"
expect 0 bert-large --gpu a100-40gb --output "$work/keep.json"
grep -q maxDevices "$work/keep.json" || { echo "FAIL: -o did not replace the file"; status=1; }
left=$(ls -A "$work" | grep -c 'partial')
[ "$left" -eq 0 ] || { echo "FAIL: temporary files left: $(ls -A "$work")"; status=1; }
# A missing folder or a folder as the target: usage error naming it, nothing created.
expect 2 bert-large --gpu a100-40gb -o "$work/no/such/dir/x.json"
grep -q "does not exist" "$work/err" || { echo "FAIL: missing folder not named: $(cat "$work/err")"; status=1; }
[ ! -e "$work/no" ] || { echo "FAIL: created $work/no"; status=1; }
mkdir -p "$work/adir"
expect 2 bert-large --gpu a100-40gb -o "$work/adir"
grep -q "is a folder" "$work/err" || { echo "FAIL: folder target not refused: $(cat "$work/err")"; status=1; }
# An unwritable folder: I/O failure, the old file untouched (skipped as root: root writes anyway).
if [ "$(id -u)" -ne 0 ]; then
  mkdir -p "$work/ro" && echo old > "$work/ro/x.json" && chmod 555 "$work/ro"
  expect 1 bert-large --gpu a100-40gb -o "$work/ro/x.json"
  [ "$(cat "$work/ro/x.json")" = old ] || { echo "FAIL: unwritable target changed"; status=1; }
  chmod 755 "$work/ro"
fi
# The file gets the mode of a plain creation, not mkstemp's private 0600.
mode=$(stat -c %a "$work/keep.json")
[ "$mode" != 600 ] || { echo "FAIL: output file is private (0600)"; status=1; }
exit $status
