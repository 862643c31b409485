#!/bin/bash
# Predicted against measured training throughput of published runs.
#
# For every row of a table with the columns of ../shared/validation/README.md
# (default: the development table published-runs-dev.tsv): generate the model
# with `piper gen` (the row's architecture, sequence length, global batch,
# microbatch, GPU preset and GPU count; --memory-parts with optimizer
# sharding; --variants sp, selective, sp-selective or sp-full for rows with
# sequence parallelism or selective recomputation), evaluate the published configuration with `piper eval --pp --tp
# --dp [--virtual-stages] --recompute [--zero]` under the
# published schedule (1F1B, interleaved when vp > 1), and compare the
# predicted TFLOP/s per GPU with the measured one in the row's FLOP
# convention (Narayanan et al. 2021, eq. 3: 96 B s l h^2 (1 + s/6h + V/16lh)
# per iteration with full recomputation, 72 B s l h^2 (1 + s/6h + V/12lh)
# without).  Then `piper plan --uniform` under the same schedule says what the
# planner would pick and its predicted gain.  One line per row (covered, or
# why not), a line saying whether the planner's uniform optimum was ever
# predicted slower than a published configuration that is feasible under the
# model (it must not be: that configuration is one of the plans it searches;
# a violation is marked on its row and named here), then exactly one summary
# line:
#   validation: covered N of M rows; median |error| X%; max |error| Y%
# The planner column runs one `piper plan` per row, under limits taken from
# the environment (defaults in brackets):
#   PIPER_VALIDATE_MAX_MEMORY  [100GB]  its --max-memory-use, the gate on the
#       DP's memory estimate (and, after each layer, on the tables held); the
#       default is far above every development row's (R08: 0.24 GB estimated,
#       bench/probe_vstage_bytes.sh), so the real bound is the next one
#   PIPER_VALIDATE_ADDRESS_SPACE  [16GiB; unlimited when PIPER_SANITIZED is set]  ulimit -v of that process: past it
#       an allocation fails and the run ends with an error on its row instead
#       of taking the machine's memory
#   PIPER_VALIDATE_PLAN_SECONDS  [3600]  time limit of that process
# The column ends with the run's wall time and peak RSS.
# usage: bench/validate.sh [TABLE.tsv] [PIPER]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
table=${1:-$here/../shared/validation/published-runs-dev.tsv}
P=${2:-$here/build/piper}
[ -f "$table" ] || { echo "no table $table" >&2; exit 2; }
[ -x "$P" ] || { echo "no executable $P (build first)" >&2; exit 1; }
plan_memory=${PIPER_VALIDATE_MAX_MEMORY:-100GB}
# (a sanitizer build reserves terabytes of address space: no limit there)
plan_vsize=${PIPER_VALIDATE_ADDRESS_SPACE:-$([ -n "${PIPER_SANITIZED:-}" ] && echo unlimited || echo 16GiB)}
plan_seconds=${PIPER_VALIDATE_PLAN_SECONDS:-3600}
# ulimit -v takes KiB
vsize_kib=unlimited
[ "$plan_vsize" = unlimited ] || vsize_kib=$(awk -v s="$plan_vsize" 'BEGIN {
  n = s + 0; u = toupper(substr(s, length(n "") + 1))
  m = u == "" ? 1 / 1024 : u ~ /^KI/ ? 1 : u ~ /^MI/ ? 1024 : u ~ /^GI/ ? 1048576 : u ~ /^K/ ? 1000 / 1024 : u ~ /^M/ ? 1e6 / 1024 : u ~ /^G/ ? 1e9 / 1024 : -1
  if (n <= 0 || m < 0) exit 1
  printf "%d", n * m }') || { echo "PIPER_VALIDATE_ADDRESS_SPACE: '$plan_vsize' is not a size (e.g. 16GiB)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The GPU preset for a row's gpu_type (one set of generator defaults per GPU
# type; nothing is fitted per row).  Empty: not covered.
gpu_preset() {
  case "$1" in
  *A100*80*) echo a100-80gb ;;
  *A100*40* | "A100 (DGX-A100)"*) echo a100-40gb ;; # the 2020 DGX A100 shipped the 40 GB part
  *A100*) echo a100-80gb ;;
  *V100*) echo v100-32gb ;;
  *H200*) echo h200-141gb ;;
  *H100*) echo h100-80gb ;;
  *) echo "" ;;
  esac
}

# Architecture flags for piper gen from the model's name: Llama-family models
# (SwiGLU, RMSNorm, rotary positions, untied head, no dropout), else GPT.
arch_flags() {
  case "$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')" in
  *llama* | *mistral* | *mixtral* | *qwen* | *gemma* | *nemotron*)
    echo "--mlp swiglu --norm rmsnorm --positions rotary --tied-embeddings no --dropout no" ;;
  *) echo "" ;;
  esac
}

# Column numbers by header name.
IFS=$'\t' read -r -a header < "$table"
col() {
  local i
  for i in "${!header[@]}"; do [ "${header[$i]}" = "$1" ] && { echo $((i + 1)); return; }; done
  echo 0
}
need=(row_id model layers hidden heads kv_heads ffn_hidden vocab seq_len global_batch_seqs micro_batch gpu_type
  num_gpus tp pp dp vp recompute seq_parallel optimizer_sharding tflops_per_gpu tokens_per_s_per_gpu iter_time_s
  flop_convention precision cp ep)
for c in "${need[@]}"; do
  [ "$(col "$c")" -gt 0 ] || { echo "table $table lacks the column $c" >&2; exit 2; }
done

get() { printf '%s\n' "$line" | cut -f"$(col "$1")"; }
json() { sed -n "s/.*\"$2\": \\([^,}]*\\).*/\\1/p" "$1" | head -1; }

printf '%-5s %-22s %5s %3s %3s %4s %3s %4s %9s %9s %8s  %s\n' row model gpus tp pp dp vp rec "meas_TF" "pred_TF" \
  "error" "planner (--uniform, same schedule)"
errors=$work/errors
: > "$errors"
compared=$work/compared slower=$work/slower
: > "$compared"
: > "$slower"
rows=0
while IFS= read -r line; do
  rows=$((rows + 1))
  id=$(get row_id)
  fullmodel=$(get model)
  model=$(printf '%s\n' "$fullmodel" | cut -c1-22)
  L=$(get layers) h=$(get hidden) a=$(get heads) g=$(get kv_heads) f=$(get ffn_hidden) V=$(get vocab)
  s=$(get seq_len) B=$(get global_batch_seqs) b=$(get micro_batch) n=$(get num_gpus)
  tp=$(get tp) pp=$(get pp) dp=$(get dp) vp=$(get vp) rec=$(get recompute) meas=$(get tflops_per_gpu)
  sp=$(get seq_parallel) zero=$(get optimizer_sharding) cp=$(get cp) ep=$(get ep)
  gpu=$(gpu_preset "$(get gpu_type)")
  why=""
  [ -z "$gpu" ] && why="no preset for GPU '$(get gpu_type)'"
  # optimizer sharding as the model's ZeRO stage (Rajbhandari et al. 2020):
  # parameters sharded (ZeRO-3, FSDP) 3, gradients too 2, else (ZeRO-1,
  # Megatron's distributed optimizer) 1; the generator then writes each
  # TMPC's weight, gradient and optimizer bytes
  shard_note="" zl=0
  case "$(printf '%s' "$zero" | tr '[:upper:]' '[:lower:]')" in
  none | no | "" | 0) ;;
  *3* | *fsdp* | *full*) zl=3 ;;
  *2*) zl=2 ;;
  *) zl=1 ;;
  esac
  zflags=()
  if [ "$zl" -gt 0 ]; then
    zflags=(--zero "$zl")
    shard_note=" [$zero: --zero $zl]"
  fi
  # sequence parallelism and selective recomputation as the generator's layer
  # variants (Korthikanti et al. 2022; piper gen --variants): one variant per
  # row, so each node has one TMPC per t and eval takes it; full recomputation
  # without SP stays the default pair (none, full) with --recompute all
  spon=0
  case "$(printf '%s' "$sp" | tr '[:upper:]' '[:lower:]')" in
  yes | true | 1 | y | on | sp) spon=1 ;;
  no | false | 0 | n | off | "" | n/a) ;;
  *) [ -z "$why" ] && why="seq_parallel '$sp' not understood" ;;
  esac
  variant=""
  case "$rec" in
  full) [ "$spon" = 1 ] && variant=sp-full ;;
  selective) variant=selective && [ "$spon" = 1 ] && variant=sp-selective ;;
  none | no | "") [ "$spon" = 1 ] && variant=sp ;;
  *) [ -z "$why" ] && why="recompute '$rec' not understood" ;;
  esac
  [ -z "$why" ] && { [ "$cp" != 1 ] || [ "$ep" != 1 ]; } && why="context/expert parallelism not modelled"
  tok=$(get tokens_per_s_per_gpu) it=$(get iter_time_s)
  metric=tflops
  [ -z "$meas" ] && [ -n "$tok" ] && metric=tokens meas=$tok
  [ -z "$meas" ] && [ -n "$it" ] && metric=iter meas=$(printf '%s' "$it" | tr -d '~')
  [ -z "$why" ] && [ -z "$meas" ] && why="no measured throughput"
  [ -z "$why" ] && [ $((tp * pp * dp)) -ne "$n" ] && why="tp x pp x dp != num_gpus"
  if [ -n "$why" ]; then
    printf '%-5s %-22s not covered: %s\n' "$id" "$model" "$why"
    continue
  fi
  case "$vp" in '' | n/a) vp=1 ;; esac
  prec=$(get precision)
  case "$prec" in fp16 | bf16) ;; *) prec=bf16 ;; esac
  conv=$(get flop_convention)
  [ "$rec" = "full" ] && [ -z "$variant" ] && recflag=all || recflag=none
  vflags=()
  [ -n "$variant" ] && vflags=(--variants "$variant")
  # shellcheck disable=SC2046 # the architecture flags are words on purpose
  if ! "$P" gen gpt3-175b --gpu "$gpu" --layers "$L" --hidden "$h" --heads "$a" --kv-heads "$g" --ffn "$f" \
    --vocab "$V" --seq "$s" --global-batch "$B" --microbatch-size "$b" --devices "$n" --precision "$prec" \
    $(arch_flags "$fullmodel") $([ "$zl" -gt 0 ] && echo --memory-parts) "${vflags[@]}" -o "$work/$id.json" \
    2> "$work/$id.err"; then
    printf '%-5s %-22s not covered: gen failed: %s\n' "$id" "$model" "$(head -1 "$work/$id.err")"
    continue
  fi
  sched=(--schedule 1f1b)
  [ "$vp" -gt 1 ] && sched+=(--virtual-stages "$vp")
  "$P" eval "$work/$id.json" --pp "$pp" --tp "$tp" --dp "$dp" --recompute "$recflag" "${sched[@]}" "${zflags[@]}" \
    --format json > "$work/$id.eval" 2> "$work/$id.err"
  rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
    printf '%-5s %-22s not covered: eval failed: %s\n' "$id" "$model" "$(head -1 "$work/$id.err")"
    continue
  fi
  batch=$(json "$work/$id.eval" batch_seconds)
  feasible=$(json "$work/$id.eval" feasible)
  if [ "$batch" = "null" ] || [ -z "$batch" ]; then
    printf '%-5s %-22s not covered: the model gives no time (%s)\n' "$id" "$model" \
      "$(sed -n 's/.*"message": "\([^"]*\)".*/\1/p' "$work/$id.eval" | head -1)"
    continue
  fi
  # the prediction in the row's metric: TFLOP/s per GPU in its FLOP convention
  # (GPT: Narayanan et al. eq. 3 with full recomputation counted, the model
  # FLOPs 72 B s l h^2 (1 + s/6h + V/12lh) otherwise; other architectures:
  # the generator's model FLOPs, x 4/3 when the convention counts a full
  # recomputation), tokens/s per GPU, or seconds per iteration
  mflops=$(json "$work/$id.eval" model_flops_per_second_per_device)
  pred=$(awk -v B="$B" -v s="$s" -v l="$L" -v h="$h" -v V="$V" -v T="$batch" -v n="$n" -v r="$rec" \
    -v metric="$metric" -v conv="$conv" -v gptlike="$([ -z "$(arch_flags "$fullmodel")" ] && echo 1)" \
    -v mf="$mflops" 'BEGIN {
    hfu = (conv ~ /HFU/ && r == "full")
    if (metric == "tokens") { printf "%.1f", B * s / T / n; exit }
    if (metric == "iter") { printf "%.3f", T; exit }
    if (gptlike) f = hfu ? 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)) \
                         : 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))
    else f = mf * T * n * (hfu ? 4 / 3 : 1)
    # hardware FLOPs with selective recomputation: one more forward pass of
    # the attention core, 4 B s^2 h per layer (Korthikanti et al. 2022, Sec. 5)
    if (conv ~ /HFU/ && r == "selective") f += 4 * B * s * s * h * l
    printf "%.1f", f / T / n / 1e12 }')
  # error of the predicted throughput (for iteration times: measured / predicted)
  err=$(awk -v p="$pred" -v m="$meas" -v metric="$metric" 'BEGIN {
    printf "%+.1f", metric == "iter" ? 100 * (m / p - 1) : 100 * (p / m - 1) }')
  echo "$err" >> "$errors"
  note=""
  [ "$feasible" = "true" ] || note=" [published config infeasible under the model: $(sed -n 's/.*"message": "\([^"]*\)".*/\1/p' "$work/$id.eval" | head -1)]"
  # what the planner picks with the framework's shape
  plan_args=(--uniform --schedule 1f1b --quiet --no-archive --format json --max-memory-use "$plan_memory")
  [ "$vp" -gt 1 ] && plan_args+=(--virtual-stages "$vp")
  plan_args+=("${zflags[@]}")
  if (ulimit -v "$vsize_kib" && exec /usr/bin/time -f '%e %M' -o "$work/$id.time" timeout "$plan_seconds" \
    "$P" plan "$work/$id.json" "${plan_args[@]}") > "$work/$id.plan" 2> "$work/$id.perr"; then
    ptps=$(json "$work/$id.plan" tps)
    nst=$(grep -o '"d": [0-9]*, "t": [0-9]*' "$work/$id.plan" | head -1 | tr -d '"' | sed 's/: / = /g')
    nstages=$(grep -o '"nodes"' "$work/$id.plan" | wc -l)
    etps=$(json "$work/$id.eval" tps)
    planner=$(awk -v a="$etps" -v b="$ptps" -v k="$nstages" -v dt="$nst" 'BEGIN {
      printf "%d stages of %s: %+.1f%% throughput", k, dt, 100 * (a / b - 1) }')
    [ "$feasible" = "true" ] && echo "$id" >> "$compared"
    if [ "$feasible" = "true" ] && awk -v a="$etps" -v b="$ptps" 'BEGIN { exit !(b > a * (1 + 1e-9)) }'; then
      planner="$planner  SLOWER THAN PUBLISHED"
      echo "$id" >> "$slower"
    fi
  else
    planner="n/a: $(sed -e 's/^piper: error: //' -e 's/the search for \(.*\) is not available in this build/no search for \1 in this build/' "$work/$id.perr" | head -1 | cut -c1-70)"
    grep -q 'status 124$' "$work/$id.time" 2> /dev/null &&
      planner="n/a: stopped after $plan_seconds s (PIPER_VALIDATE_PLAN_SECONDS)"
    grep -q 'status 3$' "$work/$id.time" 2> /dev/null && [ ! -s "$work/$id.perr" ] &&
      planner="n/a: no feasible uniform plan (exit 3)"
    [ -s "$work/$id.perr" ] || [ "${planner#n/a: }" != "" ] || planner="n/a: $(head -1 "$work/$id.time")"
  fi
  [ -s "$work/$id.time" ] && planner="$planner (plan $(tail -1 "$work/$id.time" |
    awk '{ printf "%.0f s, %.2f GiB", $1, $2 / 1048576 }'))"
  printf '%-5s %-22s %5s %3s %3s %4s %3s %4s %9s %9s %7s%%  %s%s\n' "$id" "$model" "$n" "$tp" "$pp" "$dp" "$vp" \
    "$rec" "$meas" "$pred" "$err" "$planner" \
    "$note$shard_note${variant:+ [--variants $variant]}$([ "$metric" = tflops ] || echo " [$metric]")"
done < <(tail -n +2 "$table")
covered=$(wc -l < "$errors")
if [ -s "$slower" ]; then
  echo "planner check: VIOLATED: the uniform optimum is predicted slower than the feasible published configuration" \
    "on $(wc -l < "$slower") of $(wc -l < "$compared") rows: $(tr '\n' ' ' < "$slower" | sed 's/ $//')"
else
  echo "planner check: never slower than a feasible published configuration ($(wc -l < "$compared") rows compared)"
fi
awk '{ print ($1 < 0 ? -$1 : $1) }' "$errors" | sort -g | awk -v n="$covered" -v m="$rows" '
  { a[NR] = $1 }
  END {
    if (n == 0) { printf "validation: covered 0 of %d rows; median |error| n/a; max |error| n/a\n", m; exit }
    med = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    printf "validation: covered %d of %d rows; median |error| %.1f%%; max |error| %.1f%%\n", n, m, med, a[n]
  }'
