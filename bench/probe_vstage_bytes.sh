#!/usr/bin/env bash
# The interleaved (--virtual-stages) searches of bench/validate.sh, one
# process each: the estimate that --max-memory-use checks before the start
# (from the refusal at a tiny limit), the tables held at the end
# (PIPER_DEBUG_DIST's own_table_bytes), their ratio, peak RSS and wall time.
# The models are those of the published runs R06 (GPT 76.1B on 1,024 GPUs,
# v = 3), R07 (145.6B on 1,536, v = 2) and R08 (310.1B on 1,920, v = 2) of
# ../shared/validation/published-runs-dev.tsv, generated as validate.sh
# generates them (A100 80 GB, fp16), planned with --uniform --schedule 1f1b.
# usage: [CASES="R06 R07 R08"] bench/probe_vstage_bytes.sh [PIPER]   (writes only a temp folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
piper=$(realpath "${1:-$here/../build/piper}")
cases=${CASES:-R06 R07 R08}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# row: layers hidden heads ffn global_batch microbatch gpus v
spec() {
  case $1 in
  R06) echo 60 10240 80 40960 1792 2 1024 3 ;;
  R07) echo 80 12288 96 49152 2304 2 1536 2 ;;
  R08) echo 96 16384 128 65536 2160 1 1920 2 ;;
  *) echo "unknown case $1" >&2; exit 2 ;;
  esac
}
echo "# piper interleaved-search bytes against the estimate, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$piper" --version | head -1)"
printf "%-5s %6s %2s %12s %12s %8s %10s %8s\n" case gpus v estimate_GB tables_GB ratio peak_MB wall_s
for c in $cases; do
  read -r L h a f B b n v < <(spec "$c")
  "$piper" gen gpt3-175b --gpu a100-80gb --layers "$L" --hidden "$h" --heads "$a" --kv-heads "$a" --ffn "$f" \
    --vocab 51200 --seq 2048 --global-batch "$B" --microbatch-size "$b" --devices "$n" --precision fp16 \
    -o "$work/in.json" >/dev/null
  opts=(--uniform --schedule 1f1b --virtual-stages "$v" --no-archive)
  est=$({ "$piper" plan "$work/in.json" "${opts[@]}" --max-memory-use 1e5 2>&1 || true; } |
    sed -n 's/.*would need about \([0-9.e+-]*\) GB.*/\1/p')
  PIPER_DEBUG_DIST=1 /usr/bin/time -f "%M %e" -o "$work/time" "$piper" plan "$work/in.json" "${opts[@]}" \
    --quiet >/dev/null 2>"$work/err"
  tab=$(sed -n 's/.*own_table_bytes \([0-9]*\).*/\1/p' "$work/err")
  read -r rss wall <"$work/time"
  awk -v c="$c" -v n="$n" -v v="$v" -v e="$est" -v t="$tab" -v r="$rss" -v w="$wall" \
    'BEGIN { printf "%-5s %6s %2s %12.4f %12.4f %7.2fx %10.1f %8.2f\n", c, n, v, e, t / 1e9, t / 1e9 / e, r / 1024, w }'
done
echo "# ratio = tables / estimate: above 1x the estimate falls short, and only the check after each layer"
echo "# keeps --max-memory-use"
