#!/bin/sh
# eval_cli.sh PIPER WORK_DIR
# `piper eval`: a plan printed by `plan` (JSON or archive) evaluates to the
# same time per sample; each kind of violation is named and exits 3; bad
# plans, inputs and usage exit 2; the throughput fields are reported.
set -u
piper=$1
. "$(dirname "$0")/../lib.sh"
t_workdir "$2"

# run CODE ARGS...: runs piper eval ARGS, checks the exit code; output in out/err.
run() {
  code=$1
  shift
  t_exit "$code" "$piper" eval "$@"
}

"$piper" gen gpt3-1.3b --gpu a100-80gb --devices 16 -o g.json || exit 1

# 1b. --zero: plan's optimum under ZeRO-3 evaluates to plan's TPS with
# --zero 3 and to another one without (ZeRO-3's extra all-gather); an input
# without the byte fields is refused.
sed 's/\("parameterSize": [0-9]*, \)/\1"weightBytes": 0, "gradientBytes": 0, "optimizerBytes": 0, /g' g.json > gz.json
"$piper" plan gz.json --zero 3 --quiet --no-archive --format json > pz.json || bad "plan --zero 3 exited $?"
run 0 gz.json --plan pz.json --zero 3 --format json
[ "$(sed 's/.*"tps": \([^,]*\),.*/\1/' out)" = "$(sed 's/.*"tps": \([^,]*\),.*/\1/' pz.json)" ] ||
  bad "eval --zero 3: tps differs from plan --zero 3's"
run 0 gz.json --plan pz.json --format json
[ "$(sed 's/.*"tps": \([^,]*\),.*/\1/' out)" != "$(sed 's/.*"tps": \([^,]*\),.*/\1/' pz.json)" ] ||
  bad "eval without --zero: the same tps as under --zero 3"
run 2 g.json --plan pz.json --zero 1
has err "missing optimizerBytes, which --zero 1 needs"

# 1. plan's JSON and archive evaluate to plan's TPS (same checker code).
"$piper" plan g.json --quiet --format json --out plan.h5 > plan.json || bad "plan exited $?"
tps() { sed 's/.*"tps": \([^,]*\),.*/\1/' "$1"; }
run 0 g.json --plan plan.json --format json
[ "$(tps out)" = "$(tps plan.json)" ] || bad "eval --plan plan.json: tps $(tps out), plan $(tps plan.json)"
has out '"feasible": true'
run 0 g.json --plan plan.h5 --format json
[ "$(tps out)" = "$(tps plan.json)" ] || bad "eval --plan plan.h5: tps $(tps out), plan $(tps plan.json)"
run 0 g.json --plan - --format json < plan.json
[ "$(tps out)" = "$(tps plan.json)" ] || bad "eval --plan -: tps differs"
# eval's own JSON reads back as a plan
cp out again.json
run 0 g.json --plan again.json --format json
[ "$(tps out)" = "$(tps plan.json)" ] || bad "eval of eval's JSON: tps differs"
run 0 g.json --plan plan.json
has out "feasible: yes, no violations"
has out "bottleneck: stage"
# the same under the synchronous schedules and the uniform restriction
for opts in "--schedule 1f1b --uniform" "--schedule gpipe" "--schedule 1f1b"; do
  # shellcheck disable=SC2086 # the options are words on purpose
  "$piper" plan g.json $opts --quiet --no-archive --format json > sync.json || bad "plan $opts exited $?"
  # shellcheck disable=SC2086
  run 0 g.json --plan sync.json $opts --format json
  [ "$(tps out)" = "$(tps sync.json)" ] || bad "eval $opts: tps $(tps out), plan $(tps sync.json)"
done

# 2. the shorthand: Megatron's even split of the 24 blocks
run 0 g.json --pp 4 --tp 2 --dp 2 --recompute all
has out "24 transformer blocks over 4 stages, 6 per stage"
has out "    1  0-6  "
has out "    4  19-26  "
run 0 g.json --pp 5 --tp 1 --dp 1
has out "24 transformer blocks over 5 stages, 4 per stage (the first 4 one more)"

# synchronous schedules: the bubble of 4 stages; interleaved, the chunks
# are paced by the slowest one (the head's), so the bubble need not shrink
run 0 g.json --pp 4 --tp 2 --dp 2 --schedule 1f1b --format json
b1=$(sed 's/.*"bubble_fraction": \([^,]*\),.*/\1/' out)
run 0 g.json --pp 4 --tp 2 --dp 2 --schedule 1f1b --virtual-stages 2 --format json
b2=$(sed 's/.*"bubble_fraction": \([^,]*\),.*/\1/' out)
has out "24 transformer blocks over 8 chunks (virtual stages), 3 per chunk"
awk -v a="$b1" -v b="$b2" 'BEGIN { exit !(a > 0 && b > 0 && b != a) }' || bad "bubbles 1f1b $b1, interleaved $b2"
# plan --virtual-stages: its plan evaluates to its TPS, under 1f1b and gpipe
for sch in 1f1b gpipe; do
  "$piper" plan g.json --uniform --schedule $sch --virtual-stages 2 --quiet --no-archive --format json > pv.json ||
    bad "plan --virtual-stages 2 --schedule $sch exited $?"
  run 0 g.json --plan pv.json --uniform --schedule $sch --virtual-stages 2 --format json
  [ "$(tps out)" = "$(tps pv.json)" ] || bad "eval of plan --virtual-stages 2 ($sch): tps $(tps out), plan $(tps pv.json)"
done
run 0 g.json --pp 4 --tp 2 --dp 2 --schedule 1f1b
has out "schedule 1f1b"
has out "bubble fraction 0.0"
run 2 g.json --pp 4 --tp 2 --dp 2 --virtual-stages 2

# 3. each kind of violation, alone and all together (exit 3)
run 3 g.json --pp 2 --tp 2 --dp 2 --memory 2GiB
has out "memory over the limit at stage 1 by 9.15 GiB (needs 11.15 GiB per device, the limit is 2 GiB)"
has out "memory over the limit at stage 2 by"
run 3 g.json --pp 2 --tp 8 --dp 2
has out "devices over the budget: the plan uses 32 devices, 16 more than K = 16"
run 3 g.json --pp 1 --tp 1 --dp 3
has out "stage 1: d = 3 does not divide the 512 microbatches per batch"
run 3 g.json --pp 1 --tp 16 --dp 1
has out "stage 1: t = 16 is a degree the input does not offer for node 0 (nor do 26 more nodes)"
has out "time per sample: undefined"
run 3 g.json --pp 2 --tp 2 --dp 1 --no-tp
has out "stage 1: tensor-parallel degree 2 is not allowed"
run 3 g.json --pp 2 --tp 1 --dp 2 --recompute all --no-recompute
has out "recomputes activations"
run 3 g.json --pp 2 --tp 2 --dp 3 --memory 1GiB --devices 8 --format json
has out '"kind": "memory"'
has out '"kind": "devices"'
has out '"kind": "divides"'
has out '"feasible": false'
run 3 g.json --pp 2 --tp 16 --dp 1 --format json
has out '"kind": "degree"'
has out '"tps": null'
# a plan file whose stages break a rule: the same messages
sed '0,/"d": [0-9]*/s//"d": 5/' plan.json > bad-d.json
run 3 g.json --plan bad-d.json
has out "d = 5 does not divide the 512 microbatches per batch"
"$piper" eval g.json --pp 2 --tp 1 --dp 2 --format json > two.json
sed '0,/"d": 2/s//"d": 4/' two.json > mixed.json
run 0 g.json --plan mixed.json
run 3 g.json --plan mixed.json --uniform
has out "differs from stage 0's"

# 4. bad input and usage: exit 2 with a message naming the problem
run 2
run 2 g.json
run 2 g.json --pp 2 --tp 1
run 2 g.json --plan plan.json --pp 2 --tp 1 --dp 1
run 2 g.json --pp 0 --tp 1 --dp 1
run 2 g.json --pp 25 --tp 1 --dp 1
has err "only 24 transformer blocks"
run 2 g.json --pp 2 --tp 1 --dp 1 --recompute some
run 2 g.json --pp 2 --tp 1 --dp 1 --bogus
run 2 missing.json --pp 2 --tp 1 --dp 1
run 2 g.json --plan missing.json
printf '{"stages": [' > trunc.json
run 2 g.json --plan trunc.json
has err "trunc.json: line 1"
run 2 g.json --plan g.json
has err "stages: missing or not an array"
sed 's/"nodes": \[0,/"nodes": [999,/' plan.json > bad-node.json
run 2 g.json --plan bad-node.json
has err "stages[0].nodes[0]: node 999 is not in the graph"
sed 's/"vanilla"/"no-such-tmpc"/' plan.json > bad-tmpc.json
run 2 g.json --plan bad-tmpc.json
has err "has no TMPC \"no-such-tmpc\""
sed '0,/"d": [0-9]*/s//"d": 0/' plan.json > zero-d.json
run 2 g.json --plan zero-d.json
has err "stages[0].d: must be an integer >= 1"
sed 's/"nodes": \[0, 1,/"nodes": [0, 0, 1,/' two.json > twice.json
run 2 g.json --plan twice.json
has err "node 0 is already in a stage"
echo '{"stages": [{"nodes": [1], "d": 1, "t": 1, "tmpc": {"1": "vanilla"}}]}' > partial.json
run 2 g.json --plan partial.json
has err "is in no stage"
head -c 100 plan.h5 > broken.h5
run 2 g.json --plan broken.h5

# 5. help
run 0 --help
has out "usage: piper eval"
has out "--virtual-stages"

# 6. throughput fields (piper gen writes them): tokens/s, TFLOP/s per device, MFU
run 0 g.json --pp 1 --tp 1 --dp 16 --format json
has out '"tokens_per_second": '
has out '"mfu": 0.'
run 0 g.json --pp 1 --tp 1 --dp 16
has out "tokens/s: "
has out "model TFLOP/s per device: "
has out "MFU "
grep -v '"flopsPerSample"\|"tokensPerSample"\|"peakFlops"' g.json > gnone.json
run 0 gnone.json --pp 1 --tp 1 --dp 16 --format json
grep -q tokens_per_second out && bad "throughput members without the fields"
sed 's/"peakFlops": [0-9e.+]*/"peakFlops": -1/' g.json > gbad.json
run 2 gbad.json --pp 1 --tp 1 --dp 16
has err "peakFlops: must be > 0"
"$piper" plan g.json --quiet --no-archive > plan.txt || bad "plan of g.json"
has plan.txt "MFU "
t_done
