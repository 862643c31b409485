# shellcheck shell=bash
# grid.sh - reading and validating the grid files of jobs/sweep.sbatch.  Sourced, never run.
#
# A grid is tab-separated text: a header naming the columns (any order)
#   input devices memory bandwidth microbatches flags [name]
# then one row per plan.  Blank lines and lines starting with '#' are ignored.  Rows are
# numbered from 0 in file order.  See docs/slurm.md.

GRID_COLUMNS=(input devices memory bandwidth microbatches flags)

# Sizes as piper parses them: a number, optional blanks, an optional unit (and /s for rates).
GRID_SIZE_RE='^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)? *(B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)?$'

grid_error() {
  printf '%s:%s: %s\n' "$GRID_FILE" "$1" "$2" >&2
  GRID_ERRORS=$((GRID_ERRORS + 1))
}

# grid_check_size LINE COLUMN VALUE [per_second]
grid_check_size() {
  local v=$3
  if [[ ${4:-} == per_second ]]; then v=${v%/s}; fi
  if [[ ! $v =~ $GRID_SIZE_RE ]]; then
    grid_error "$1" "$2: '$3' is not a size (e.g. 8GiB, 80GB, 1288490188.8${4:+, 25GiB/s})"
  elif [[ ${BASH_REMATCH[1]} =~ ^[0.]*$ ]]; then
    grid_error "$1" "$2: must be more than 0, got '$3'"
  fi
}

grid_check_count() {
  if [[ ! $3 =~ ^[1-9][0-9]{0,8}$ ]]; then grid_error "$1" "$2: expected a positive integer, got '$3'"; fi
}

# grid_flag_options LINE VALUE: sets GRID_OPTS to piper's options (one a line) for a flags value,
# none or a comma list.
grid_flag_options() {
  local f list=()
  GRID_OPTS=
  if [[ $2 == none ]]; then return 0; fi
  if [[ -z $2 || $2 == *, || $2 == ,* || $2 == *,,* ]]; then
    grid_error "$1" "flags: '$2' has an empty entry (use none, or e.g. no-dp,no-tp)"
    return 0
  fi
  IFS=, read -r -a list <<<"$2"
  for f in "${list[@]}"; do
    case $f in
      no-dp | no-tp | no-recompute) GRID_OPTS+="--$f"$'\n' ;;
      zero1 | zero2 | zero3) GRID_OPTS+="--zero=${f#zero}"$'\n' ;;
      1f1b | gpipe) GRID_OPTS+="--schedule=$f"$'\n' ;;
      *) grid_error "$1" "flags: unknown flag '$f' (expected none, or a comma list of no-dp, no-tp, no-recompute, zero1, zero2, zero3, 1f1b, gpipe)" ;;
    esac
  done
}

# grid_split LINE: sets the array GRID_FIELDS to the tab-separated fields of LINE, keeping
# empty ones (read -a would merge neighbouring tabs).
grid_split() {
  local line=$1
  GRID_FIELDS=()
  while [[ $line == *$'\t'* ]]; do
    GRID_FIELDS+=("${line%%$'\t'*}")
    line=${line#*$'\t'}
  done
  GRID_FIELDS+=("$line")
}

# grid_read FILE: reads and validates FILE into the arrays GRID_INPUT, GRID_DEVICES, GRID_MEMORY,
# GRID_BANDWIDTH, GRID_MICRO, GRID_FLAGS (piper options, one string per row, newline-separated),
# GRID_NAME and GRID_LINE.  Prints every problem as FILE:LINE: message and returns 1 if any.
grid_read() {
  GRID_FILE=$1
  GRID_ERRORS=0
  GRID_INPUT=() GRID_DEVICES=() GRID_MEMORY=() GRID_BANDWIDTH=() GRID_MICRO=() GRID_FLAGS=() GRID_NAME=() GRID_LINE=()
  local dir line n=0 header_line=0 c i
  local -A col=() names=()
  dir=$(cd "$(dirname "$GRID_FILE")" && pwd)
  while IFS= read -r line || [[ -n $line ]]; do
    n=$((n + 1))
    line=${line%$'\r'}
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    grid_split "$line"
    if ((header_line == 0)); then
      header_line=$n
      for i in "${!GRID_FIELDS[@]}"; do
        c=${GRID_FIELDS[i]}
        case " ${GRID_COLUMNS[*]} name " in
          *" $c "*) ;;
          *)
            grid_error "$n" "header: unknown column '$c' (expected tab-separated: ${GRID_COLUMNS[*]} [name])"
            continue
            ;;
        esac
        if [[ -n ${col[$c]:-} ]]; then grid_error "$n" "header: column '$c' appears twice"; fi
        col[$c]=$i
      done
      for c in "${GRID_COLUMNS[@]}"; do
        if [[ -z ${col[$c]:-} ]]; then grid_error "$n" "header: missing column '$c' (expected tab-separated: ${GRID_COLUMNS[*]} [name])"; fi
      done
      ((GRID_ERRORS == 0)) || return 1
      continue
    fi
    if ((${#GRID_FIELDS[@]} != ${#col[@]})); then
      grid_error "$n" "expected ${#col[@]} tab-separated fields like the header, found ${#GRID_FIELDS[@]}"
      continue
    fi
    local input=${GRID_FIELDS[${col[input]}]} devices=${GRID_FIELDS[${col[devices]}]}
    local memory=${GRID_FIELDS[${col[memory]}]} bandwidth=${GRID_FIELDS[${col[bandwidth]}]}
    local micro=${GRID_FIELDS[${col[microbatches]}]} flags=${GRID_FIELDS[${col[flags]}]}
    local name='' row=${#GRID_NAME[@]} before=$GRID_ERRORS
    if [[ -n ${col[name]:-} ]]; then name=${GRID_FIELDS[${col[name]}]}; fi

    if [[ -z $input ]]; then
      grid_error "$n" "input: empty"
    else
      [[ $input == /* ]] || input=$(realpath -m -s "$dir/$input")
      if [[ ! -f $input ]]; then grid_error "$n" "input: '$input' not found"; fi
    fi
    grid_check_count "$n" devices "$devices"
    grid_check_size "$n" memory "$memory"
    grid_check_size "$n" bandwidth "$bandwidth" per_second
    grid_check_count "$n" microbatches "$micro"
    grid_flag_options "$n" "$flags"
    if [[ -n $name ]]; then
      if [[ ! $name =~ ^[A-Za-z0-9_][A-Za-z0-9._-]*$ ]]; then
        grid_error "$n" "name: '$name' is not a file name of letters, digits, '.', '_' and '-'"
      fi
    else
      name=$(grid_make_name "$row" "$input" "$devices" "$memory" "$micro" "$bandwidth" "$flags")
    fi
    if [[ -n ${names[$name]:-} ]]; then
      grid_error "$n" "name: '$name' is also the name of the row on line ${names[$name]}"
    fi
    names[$name]=$n
    ((GRID_ERRORS == before)) || continue
    GRID_INPUT+=("$input") GRID_DEVICES+=("$devices") GRID_MEMORY+=("$memory")
    GRID_BANDWIDTH+=("$bandwidth") GRID_MICRO+=("$micro") GRID_FLAGS+=("$GRID_OPTS")
    GRID_NAME+=("$name") GRID_LINE+=("$n")
  done <"$GRID_FILE"
  if ((header_line == 0)); then grid_error 1 "empty grid: expected a header line (${GRID_COLUMNS[*]} [name])"; fi
  if ((GRID_ERRORS == 0 && ${#GRID_NAME[@]} == 0)); then grid_error "$n" "no rows after the header"; fi
  if ((GRID_ERRORS > 0)); then
    printf '%s: %d problem(s); nothing was run\n' "$GRID_FILE" "$GRID_ERRORS" >&2
    return 1
  fi
  return 0
}

# grid_make_name ROW INPUT DEVICES MEMORY MICROBATCHES BANDWIDTH FLAGS: a file name for a row
# without a name column, e.g. row003-bert-large-a100-40gb-k8-m8GiB-n512-bw25GiBps-nodp.
grid_make_name() {
  local stem=${2##*/} suffix=''
  stem=${stem%.json}
  if [[ $7 != none ]]; then suffix=-${7//,/-}; suffix=${suffix//no-/no}; fi
  local name
  name=$(printf 'row%03d-%s-k%s-m%s-n%s-bw%s%s' "$1" "$stem" "$3" "$4" "$5" "${6//\/s/ps}" "$suffix")
  printf '%s\n' "${name//[^A-Za-z0-9._-]/_}"
}

# grid_row_args ROW: sets the array GRID_ARGS to piper plan's input and options for ROW.
grid_row_args() {
  local r=$1 f
  GRID_ARGS=("${GRID_INPUT[r]}" --devices "${GRID_DEVICES[r]}" --memory "${GRID_MEMORY[r]}"
    --bandwidth "${GRID_BANDWIDTH[r]}" --microbatches "${GRID_MICRO[r]}")
  while IFS= read -r f; do
    if [[ -n $f ]]; then GRID_ARGS+=("$f"); fi
  done <<<"${GRID_FLAGS[r]}"
}

# grid_print OUTDIR: lists the rows, their names and their commands.
grid_print() {
  local r n=${#GRID_NAME[@]}
  printf '%s: %d rows\n' "$GRID_FILE" "$n"
  for ((r = 0; r < n; r++)); do
    grid_row_args "$r"
    printf 'row %d (line %d) %s: piper plan %s --out %s/%s.h5\n' "$r" "${GRID_LINE[r]}" "${GRID_NAME[r]}" \
      "${GRID_ARGS[*]}" "$1" "${GRID_NAME[r]}"
  done
  printf 'submit with: sbatch --array=0-%d jobs/sweep.sbatch %s %s\n' "$((n < 64 ? n - 1 : 63))" "$GRID_FILE" "$1"
}

# grid_piper_check PIPER: asks piper itself whether it accepts each row read by grid_read (its
# own limits and unit parsing: e.g. devices beyond 1000000, a memory of 1e400 or 999999999
# microbatches), so that a grid that passes --check does not fail row by row later.  Each row
# runs `piper plan ROW --no-archive --max-downsets 1`: piper checks the options and the input
# before it counts a single downset, and stops at once after that (exit 1, "more than 1
# downsets"); exit 2 is a refusal, reported as FILE:LINE: piper: MESSAGE.  Returns 1 if any row
# is refused.  Runs without MPI (PIPER_MPI=0), about 0.1 s a row.
grid_piper_check() {
  local bin=$1 r rc msg n=${#GRID_NAME[@]} errors=0
  for ((r = 0; r < n; r++)); do
    grid_row_args "$r"
    msg=$(PIPER_MPI=0 "$bin" plan "${GRID_ARGS[@]}" --no-archive --quiet --max-downsets 1 </dev/null 2>&1 >/dev/null)
    rc=$?
    if ((rc == 2)); then
      msg=${msg#piper: error: }
      printf '%s:%s: piper refuses this row: %s\n' "$GRID_FILE" "${GRID_LINE[r]}" "${msg%%$'\n'*}" >&2
      errors=$((errors + 1))
    fi
  done
  if ((errors > 0)); then
    printf '%s: %d row(s) refused by piper; nothing was run\n' "$GRID_FILE" "$errors" >&2
    return 1
  fi
  return 0
}
