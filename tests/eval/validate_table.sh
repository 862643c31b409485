#!/bin/sh
# validate_table.sh PIPER SOURCE_DIR WORK_DIR
# bench/validate.sh on a small table cut from the development table: one
# covered row, one whose GPU has no preset, sequence parallelism at t = 1
# (covered as --variants sp-full: the same prediction as without it), one
# with ZeRO-3 (covered, --zero 3), selective recomputation (--variants
# selective; the published shape then does not fit) and sequence parallelism with selective
# recomputation at t = 4 (R39's shape, --variants sp-selective); the summary line has the documented form; the planner check
# line says "never slower", and names R37 as violated when a wrapper reports
# the planner's time per sample as 1e9 s.  Skipped (77)
# without the shared table.
set -u
piper=$1
src=$2
work=$3
table=$src/../shared/validation/published-runs-dev.tsv
[ -f "$table" ] || { echo "no $table"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
head -1 "$table" > "$work/t.tsv"
grep -P '^R37\t' "$table" >> "$work/t.tsv"
grep -P '^R37\t' "$table" | sed 's/^R37\t/X01\t/; s/A100 (DGX-A100)/TPU v9/' >> "$work/t.tsv"
grep -P '^R37\t' "$table" | awk -F'\t' 'BEGIN { OFS = "\t" } { $1 = "X02"; $24 = "yes"; print }' >> "$work/t.tsv"
grep -P '^R37\t' "$table" | awk -F'\t' 'BEGIN { OFS = "\t" } { $1 = "X03"; $25 = "ZeRO-3"; print }' >> "$work/t.tsv"
grep -P '^R37\t' "$table" | awk -F'\t' 'BEGIN { OFS = "\t" } { $1 = "X04"; $23 = "selective"; print }' >> "$work/t.tsv"
grep -P '^R39\t' "$table" | awk -F'\t' 'BEGIN { OFS = "\t" } { $1 = "X05"; $23 = "selective"; $24 = "yes"; print }' \
  >> "$work/t.tsv"
bash "$src/bench/validate.sh" "$work/t.tsv" "$piper" > "$work/out" 2>&1 || { cat "$work/out"; exit 1; }
cat "$work/out"
status=0
grep -q "^X01 .*not covered: no preset for GPU 'TPU v9'" "$work/out" || { echo "FAIL: X01"; status=1; }
grep -q "^X02 .*full *149.8 .*\[--variants sp-full\]$" "$work/out" || { echo "FAIL: X02 (SP at t = 1)"; status=1; }
grep -q "^R37 .*full *149.8 " "$work/out" || { echo "FAIL: R37 not covered"; status=1; }
grep -q "^X04 .*selective .*\[--variants selective\]$" "$work/out" || { echo "FAIL: X04 (selective)"; status=1; }
grep -q "^X05 .*selective .*\[--variants sp-selective\]$" "$work/out" || { echo "FAIL: X05 (SP + selective)"; status=1; }
# both rows have a prediction (X04: the published shape does not fit under the model with selective)
t37=$(awk '$1 == "R37" { print $0 }' "$work/out" | grep -o '[0-9.]* *[-+][0-9.]*%' | head -1)
t04=$(awk '$1 == "X04" { print $0 }' "$work/out" | grep -o '[0-9.]* *[-+][0-9.]*%' | head -1)
[ -n "$t37" ] && [ -n "$t04" ] || { echo "FAIL: no prediction for R37/X04"; status=1; }
grep -q "^X03 .*full *149.8 .*\[ZeRO-3: --zero 3\]$" "$work/out" || { echo "FAIL: X03 (ZeRO-3) not covered"; status=1; }
last=$(tail -1 "$work/out")
printf '%s\n' "$last" | grep -Eq '^validation: covered 5 of 6 rows; median \|error\| [0-9.]+%; max \|error\| [0-9.]+%$' ||
  { echo "FAIL: summary line '$last'"; status=1; }
grep -q '^planner check: never slower than a feasible published configuration (4 rows compared)$' "$work/out" ||
  { echo "FAIL: planner check line"; status=1; }
cat > "$work/slow-planner" << EOF
#!/bin/sh
if [ "\$1" = plan ]; then
  "$piper" "\$@" | sed 's/"tps": \([0-9.e+-]*\)/"tps": 1e9/'
else
  exec "$piper" "\$@"
fi
EOF
chmod +x "$work/slow-planner"
bash "$src/bench/validate.sh" "$work/t.tsv" "$work/slow-planner" > "$work/out2" 2>&1 || { cat "$work/out2"; exit 1; }
cat "$work/out2"
grep -q '^R37 .*SLOWER THAN PUBLISHED' "$work/out2" || { echo "FAIL: R37 not marked slower"; status=1; }
grep -q '^planner check: VIOLATED: .* on 4 of 4 rows: R37 X02 X03 X05$' "$work/out2" || { echo "FAIL: violation line"; status=1; }
exit $status
