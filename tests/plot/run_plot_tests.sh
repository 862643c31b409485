#!/usr/bin/env bash
# `piper plot` from the command line.
#   run_plot_tests.sh PIPER SOURCE_DIR svg [--update]   well-formed, deterministic SVG equal to the
#                                                       golden files in tests/golden/plot/; bad
#                                                       inputs exit 2 with a clear message
#   run_plot_tests.sh PIPER SOURCE_DIR render           every picture rendered by rsvg-convert
#                                                       (scripts/install-deps.sh installs it;
#                                                       Skipped, 77, where it is missing) to a PNG
#                                                       of the SVG's size that is not blank
set -uo pipefail
piper=$(realpath "$1") src=$(realpath "$2") mode=$3 update=${4:-}
golden=$src/tests/golden/plot
. "$(dirname "$0")/../lib.sh"
t_workdir # pictures name the archives as given: keep paths relative
# a fixed copy of a generated input, so that the golden pictures do not follow generator changes
in=$src/tests/plot/input.json
"$piper" plan "$in" --devices 16 --quiet --out piper.h5 >/dev/null || die "plan"
"$piper" plan "$in" --devices 16 --no-recompute --quiet --out norecompute.h5 >/dev/null || die "plan --no-recompute"
"$piper" plan "$in" --devices 16 --planner equi --quiet --out equi.h5 >/dev/null || die "plan --planner equi"
"$piper" plan "$in" --devices 8 --memory 20GiB --quiet --out small.h5 >/dev/null || die "plan small"
"$piper" collect piper.h5 norecompute.h5 equi.h5 small.h5 --format csv --out table.h5 >study.csv 2>/dev/null ||
  die "collect"
files=(piper.h5 norecompute.h5 equi.h5 study.csv table.h5)

if [ "$mode" = svg ]; then
  "$piper" plot "${files[@]}" --out-dir a --no-png >list.txt || die "plot exited $?"
  [ "$(wc -l <list.txt)" -eq 6 ] || die "expected 6 pictures, got: $(cat list.txt)"
  "$piper" plot "${files[@]}" --out-dir b --no-png >/dev/null || die "second plot"
  for f in a/*.svg; do
    cmp -s "$f" "b/$(basename "$f")" || die "$f differs between two runs (not deterministic)"
    python3 -c "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); \
sys.exit(0 if r.tag.endswith('svg') and r.get('width') and r.get('height') else 1)" "$f" ||
      die "$f is not a well-formed SVG document"
    if grep -q -E '<script|xlink:href|<image|@import|url\(' "$f"; then die "$f is not self-contained"; fi
    name=$(basename "$f")
    if [ "$update" = --update ]; then
      cp "$f" "$golden/$name"
      echo "wrote tests/golden/plot/$name"
    elif ! diff -u "$golden/$name" "$f" >diff.txt; then
      head -40 diff.txt
      die "$name differs from tests/golden/plot/$name (intended? rerun with --update)"
    fi
  done
  grep -q 'norecompute (piper, no recompute)' a/curve.svg || die "the curve's legend lacks an archive"
  grep -q 'equi (equi)' a/curve.svg || die "the curve's legend lacks the equi archive"
  # bad inputs: exit 2 and a message naming the problem
  expect2() { # pattern args...
    local pat=$1
    shift
    "$piper" plot "$@" --out-dir bad --no-png >/dev/null 2>err.txt
    local rc=$?
    [ $rc -eq 2 ] || die "plot $*: exit $rc, expected 2"
    grep -q -- "$pat" err.txt || die "plot $*: message '$(cat err.txt)' lacks '$pat'"
  }
  expect2 "not an HDF5 file" "$in"
  head -1 study.csv >empty.csv
  expect2 "no rows (an empty study" empty.csv
  expect2 "has no column 'shoe_size'" study.csv --x shoe_size
  expect2 "no archive or table given"
  expect2 "cannot open" missing.h5
  expect2 "has no column 'shoe_size'" piper.h5 --study s --x shoe_size
  expect2 "expected a name without '/'" piper.h5 --study a/b
  # the HDF5 study table of collect --out: its heatmap is the one of the same table as CSV (title aside)
  diff <(sed 's/study\.csv/T/' a/study-study.svg) <(sed 's/table\.h5/T/' a/study-table.svg) >/dev/null ||
    die "the heatmap of collect --out's table differs from that of its CSV"
  expect2 "table.h5: the table has no column 'shoe_size'" table.h5 --y shoe_size
  expect2 "input.json: not an HDF5 file: neither a piper archive nor a study table" "$in"
  # damaged HDF5 tables (h5copy, h5mkgrp: hdf5-tools, in scripts/install-deps.sh)
  h5copy -i piper.h5 -o other.h5 -s /graph -d /graph || die "h5copy"
  expect2 "other.h5: an HDF5 file that is neither a piper archive (no /problem) nor a study table" other.h5
  h5copy -p -i table.h5 -o part.h5 -s /study/devices -d /study/devices || die "h5copy"
  expect2 "part.h5: not a valid study table: /study/microbatches: missing" part.h5
  h5mkgrp empty.h5 /study || die "h5mkgrp"
  expect2 "empty.h5: not a valid study table: /study/devices: missing" empty.h5
  # --study: the archives' own heatmap is the one of collect's table of them (title aside)
  "$piper" plot piper.h5 norecompute.h5 equi.h5 small.h5 --study s --out-dir st --no-png >st.txt ||
    die "plot --study exited $?"
  grep -q "st/study-s.svg" st.txt || die "plot --study did not list study-s.svg: $(cat st.txt)"
  diff <(sed 's/study\.csv/T/' a/study-study.svg) <(sed 's/--study s (4 archives)/T/' st/study-s.svg) >/dev/null ||
    die "plot --study differs from the heatmap of collect's table"
  "$piper" plot --help | grep -q "curve.svg" || die "--help does not describe the pictures"
  echo "plot svg: ok"
  exit 0
fi

# render
command -v rsvg-convert >/dev/null || { echo "SKIP: rsvg-convert is not installed (apt-get install librsvg2-bin, or scripts/install-deps.sh)"; exit 77; }
"$piper" plot "${files[@]}" --out-dir r >list.txt || die "plot exited $?"
[ "$(grep -c '\.png$' list.txt)" -eq 6 ] || die "expected 6 PNG files listed: $(cat list.txt)"
for f in r/*.svg; do
  png=${f%.svg}.png
  [ -s "$png" ] || die "no $png"
  python3 - "$f" "$png" <<'PY' || die "$png"
import struct, sys, zlib, xml.etree.ElementTree as E
svg = E.parse(sys.argv[1]).getroot()
data = open(sys.argv[2], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", data[16:24])
want = (int(float(svg.get("width"))), int(float(svg.get("height"))))
if (w, h) != want:
    sys.exit(f"PNG is {w}x{h}, the SVG {want[0]}x{want[1]}")
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IDAT":
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
# not blank: many distinct byte values, and a fair share of bytes away from the background
counts = [0] * 256
for b in raw:
    counts[b] += 1
top = max(counts)
if sum(1 for c in counts if c) < 16 or len(raw) - top < len(raw) // 50:
    sys.exit("the picture looks blank")
PY
done
echo "plot render: ok"
