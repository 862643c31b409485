#!/usr/bin/env bash
# Hostile archives and checkpoints: derives malformed files from a valid
# archive (tests/archive/craft.py) and runs `show`, `show --devices`,
# `show --curve` and `collect` on every archive and `plan --resume` on every
# checkpoint (an attribute only a study's row reads: `collect` must name it,
# `show` give the valid file's output).  Each must exit 2 with "not a valid piper archive|checkpoint"
# and the name of the damaged dataset or attribute (truncations and bit flips:
# any clear message, or for a flip that hits nothing piper reads, the same
# output as the valid file), with no sanitizer report, no signal, and peak
# memory under 400 MB (the files are 140-200 KB; the bombs declare up to
# 2^62 elements).
# With FLAGS (e.g. --uniform --schedule 1f1b --virtual-stages 2) the valid
# archive and the resumed plans are made with them: the same damage to
# another kind of table.
# usage: run_crafted.sh PIPER SOURCE_DIR [FLAGS...]
set -uo pipefail
piper=$(realpath "$1") src=$(realpath "$2")
shift 2
flags=("$@")
py=/usr/bin/python3
if ! $py -c 'import h5py, numpy' 2>/dev/null; then
  echo "SKIPPED: python3-h5py is not installed"
  exit 77
fi
. "$(dirname "$0")/../lib.sh"
t_need /usr/bin/time "/usr/bin/time (package time)"
t_workdir
input=$src/inputs/gpt3-1.3b-a100-80gb.json
limit_kb=$((400 * 1024))
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL  $1"; fail=$((fail + 1)); }

# run NAME EXPECT_RC PATTERN CMD...: runs CMD, checks exit code, that stderr
# matches PATTERN (grep -E), no sanitizer report, memory under the limit
run() {
  local name=$1 want=$2 pat=$3
  shift 3
  /usr/bin/time -o mem.txt -f '%M' "$@" >out.txt 2>err.txt
  local rc=$? kb
  kb=$(tail -n 1 mem.txt)
  if [ "$rc" != "$want" ]; then
    bad "$name: exit $rc, expected $want: $(head -c 300 err.txt)"
  elif ! grep -Eq -- "$pat" err.txt; then
    bad "$name: message does not match '$pat': $(head -c 300 err.txt)"
  elif grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:' err.txt; then
    bad "$name: sanitizer report: $(grep -Em1 'Sanitizer|runtime error' err.txt)"
  elif [ "${kb:-0}" -gt $limit_kb ]; then
    bad "$name: peak memory ${kb} KB, more than $limit_kb KB"
  else
    ok
  fi
}

"$piper" plan "$input" --devices 8 "${flags[@]}" --quiet --format json --out base.h5 >base.json 2>base.err ||
  { echo "FAIL  cannot write the base archive: $(cat base.err)"; exit 1; }
$py "$src/tests/archive/craft.py" base.h5 corpus || { echo "FAIL  craft.py"; exit 1; }
"$piper" show base.h5 >show.txt 2>/dev/null
"$piper" show base.h5 --devices 3 >show3.txt 2>/dev/null
"$piper" show base.h5 --curve >curve.txt 2>/dev/null

# the derived valid checkpoint resumes to the same plan (so a refusal below
# is for the damage, not the format)
mkdir -p r && cp corpus/valid.ckpt r/out.h5.ckpt
"$piper" plan "$input" --devices 8 "${flags[@]}" --quiet --format json --out r/out.h5 --resume >r.json 2>r.err
if [ $? -eq 0 ] && grep -q "resuming after layer" r.err &&
  $py -c 'import json,sys; a,b=(json.load(open(x)) for x in sys.argv[1:]); assert a["tps"]==b["tps"]' base.json r.json; then
  ok
else
  bad "the derived valid checkpoint does not resume to the same plan: $(head -c 300 r.err)"
fi

while IFS=$'\t' read -r kind file expect; do
  name=$(basename "$file")
  if [ "$kind" != checkpoint ]; then
    if [ "$expect" = "-" ] || [ "$expect" = "=" ]; then
      # truncations, flips: a clear refusal, or (a flip in bytes piper does not read) the same output;
      # "=": a valid archive stored otherwise, the same output only
      for args in "" "--devices 3" "--curve"; do
        # shellcheck disable=SC2086
        /usr/bin/time -o mem.txt -f '%M' "$piper" show "$file" $args >out.txt 2>err.txt
        rc=$? kb=$(tail -n 1 mem.txt)
        ref=show.txt
        [ "$args" = "--devices 3" ] && ref=show3.txt
        [ "$args" = "--curve" ] && ref=curve.txt
        if grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:' err.txt || [ "${kb:-0}" -gt $limit_kb ]; then
          bad "$name show $args: sanitizer report or ${kb} KB"
        elif [ "$expect" = "-" ] && [ $rc -eq 2 ] &&
          grep -Eq "$name: (not a valid piper archive|not an HDF5 file|cannot open as HDF5)" err.txt; then
          ok
        elif [ $rc -eq 0 ] && diff <(grep -Ev '^(input|search):' out.txt) <(grep -Ev '^(input|search):' $ref) >/dev/null; then
          ok
        else
          bad "$name show $args: exit $rc: $(head -c 300 err.txt)"
        fi
      done
      continue
    fi
    pat="$name: not a valid piper archive: .*$expect"
    if [ "$kind" = summary ]; then # show does not read it: the valid file's output; collect names it
      "$piper" show "$file" >out.txt 2>err.txt
      if [ $? -eq 0 ] && diff <(grep -Ev '^(input|search):' out.txt) <(grep -Ev '^(input|search):' show.txt) >/dev/null; then
        ok
      else
        bad "$name show: not the valid file's output: $(head -c 300 err.txt)"
      fi
      run "$name collect" 2 "skipping .*$pat" "$piper" collect "$file" --format csv
      continue
    fi
    run "$name show" 2 "$pat" "$piper" show "$file"
    run "$name show --devices 3" 2 "$pat" "$piper" show "$file" --devices 3
    run "$name show --curve" 2 "$pat" "$piper" show "$file" --curve
    run "$name collect" 2 "skipping .*$pat" "$piper" collect "$file" --format csv
  else
    rm -rf r && mkdir r && cp "$file" r/out.h5.ckpt
    pat="out.h5.ckpt: (not a valid piper checkpoint: .*$expect|the checkpoint belongs to another)"
    run "$name plan --resume" 2 "$pat" "$piper" plan "$input" --devices 8 "${flags[@]}" --quiet --out r/out.h5 --resume
    [ -e r/out.h5 ] && bad "$name: an archive was written from a damaged checkpoint"
  fi
done <corpus/cases.tsv

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
