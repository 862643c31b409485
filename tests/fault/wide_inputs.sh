#!/usr/bin/env bash
# Very wide inputs cost bounded memory: a 100,000-node chain and 100,000
# independent nodes (15-23 MB of JSON) are refused by the downset limits
# before the downsets are allocated (a downset's bitset grows with the
# nodes: 12 KiB each here, so --max-memory-use bounds their number too, and
# any graph of n nodes has at least n + 1 downsets).  Checks the exit code
# (1, a limit), the message, peak RSS (under 400 MB, most of it the JSON
# parse) and time (under 30 s each); then a 2,000-node graph stopped inside
# the enumeration by the memory bound, and a small chain still planned.
# Under default flags (the downsets' own 1 GiB default) both 100,000-node
# inputs are refused the same way; SIGINT during the downsets stops at once.
# usage: wide_inputs.sh PIPER
set -uo pipefail
piper=$1
. "$(dirname "$0")/../lib.sh"
t_need /usr/bin/time
t_need python3
t_workdir
cat >gen.py <<'PY'
import json, sys
n, kind = int(sys.argv[1]), sys.argv[2]
chain = kind == "chain"
def node(i):
    fw = {str(i - 1): 1} if chain and i > 0 else {}
    bw = {str(i + 1): 1} if chain and i < n - 1 else {}
    return {"id": i, "TMPCs": {"1": [{"id": "vanilla", "timePerSample": 1.0, "parameterSize": 1,
            "memoryUsageA": 1, "memoryUsageB": 1, "syncTimeFw": fw, "syncTimeBw": bw}]}}
edges = [{"sourceId": i, "destId": i + 1, "communicationCost": 1} for i in range(n - 1)] if chain else []
json.dump({"maxDevices": 4, "maxMemoryPerDevice": 1e12, "bandwidth": 1e9, "mbsInBatch": 4,
           "nodes": [node(i) for i in range(n)], "edges": edges}, sys.stdout)
PY
python3 gen.py 100000 chain >chain.json && python3 gen.py 100000 wide >wide.json &&
  python3 gen.py 2000 wide >w2k.json && python3 gen.py 40 chain >c40.json &&
  python3 gen.py 20000 chain >c20k.json || { bad "generating inputs"; exit 1; }

# run NAME WANT_RC PATTERN ARGS...: exit code, message, RSS and time
run() {
  local name=$1 want=$2 pat=$3
  shift 3
  /usr/bin/time -o "$name.time" -f '%e %M' "$piper" plan "$@" --no-archive --quiet >"$name.out" 2>"$name.err"
  local rc=$? secs kb
  read -r secs kb < <(tail -n 1 "$name.time") || { secs=999 kb=999999999; }
  [ $rc -eq "$want" ] || { bad "$name: exit $rc, expected $want ($(head -c 300 "$name.err"))"; return; }
  grep -q -- "$pat" "$name.err" "$name.out" || { bad "$name: no '$pat' in: $(head -c 300 "$name.err")"; return; }
  awk -v s="$secs" 'BEGIN { exit !(s < 30) }' || { bad "$name: took $secs s"; return; }
  [ "$kb" -lt 400000 ] || { bad "$name: peak RSS $kb KB"; return; }
  ok "$name: exit $rc in $secs s, peak RSS $((kb / 1024)) MB"
}
# default flags: the downsets' own 1 GiB default refuses both up front
run chain-default 1 "1 GiB is the downsets' own limit when --max-memory-use is not given" chain.json
run wide-default 1 'a bitset of 100000 nodes), --max-memory-use 1 GiB holds no more' wide.json
run chain-memory 1 'a bitset of 100000 nodes), --max-memory-use 256 MiB' chain.json --max-memory-use 256MiB
run wide-memory 1 'a bitset of 100000 nodes), --max-memory-use 256 MiB' wide.json --max-memory-use 256MiB
run chain-count 1 'more than 50000 downsets (a graph of 100000 nodes has at least 100001' chain.json \
  --max-downsets 50000
run wide-count 1 'raise --max-downsets' wide.json --max-downsets 50000
run w2k-memory 1 'stopped counting at .* --max-memory-use 1 MiB' w2k.json --max-memory-use 1MiB
run c40-plan 0 'time per sample' c40.json --max-memory-use 256MiB

# SIGINT during the downsets or their pair count (20,001 downsets, 2*10^8
# pairs: minutes of counting) stops the run within seconds: exit 75, a
# "stopped by" message, nothing on stdout.  A signal that comes during the
# JSON parse is seen at the first downset.
"$piper" plan c20k.json --no-archive --quiet >sig.out 2>sig.err &
pid=$!
sleep 2
kill -INT $pid
t0=$(date +%s.%N)
for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then
  bad "SIGINT: still running 10 s after the signal"
  kill -KILL $pid
  wait $pid
else
  wait $pid
  rc=$?
  secs=$(echo "$(date +%s.%N) - $t0" | bc)
  if [ $rc -ne 75 ]; then
    bad "SIGINT: exit $rc, expected 75 ($(head -c 300 sig.err))"
  elif ! grep -q 'stopped by' sig.err || [ -s sig.out ]; then
    bad "SIGINT: no 'stopped by' message or output printed: $(head -c 300 sig.err)"
  else
    ok "SIGINT: exit 75 in $secs s after the signal: $(head -c 200 sig.err)"
  fi
fi
t_done
