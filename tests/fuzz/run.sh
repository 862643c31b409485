#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for a
# bounded time on its seed corpus; fails on any finding (a crash, a leak, a
# sanitizer report) in piper's code, leaving the reproducer in OUT/crashes/;
# a fault whose innermost frame is inside the HDF5 library is reported but
# does not fail (see inside_hdf5 below).
#   tests/fuzz/run.sh [SECONDS_EACH] [OUT]     (default 60 s each, OUT=build-fuzz)
# A longer, niced run (e.g. ten minutes each):
#   nice tests/fuzz/run.sh 600
# Targets: fuzz_json (the JSON loader), fuzz_archive (the archive reader along
# show, show --devices and collect), fuzz_checkpoint (the checkpoint reader).  Seeds:
# tests/fuzz/seeds/json (the shipped inputs and the bad-input corpus),
# seeds/archive and seeds/checkpoint (a small valid archive and checkpoint and
# the crafted corpus of tests/archive/craft.py, made here, and valid archives
# of 1f1b and interleaved 1f1b).
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
out=${2:-build-fuzz}
if ! command -v clang >/dev/null; then
  echo "SKIPPED: clang is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
mkdir -p "$out"/corpus "$out"/crashes
src=$PWD
flags=(-g -O1 -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  -DPIPER_VERSION='"fuzz"' -Iinclude -Isrc/archive -Isrc/core -Isrc/dist
  $(pkg-config --cflags hdf5-openmpi jansson) $(mpicc -showme:compile))
# HDF5's shared library here, unlike piper's static link (CMakeLists.txt): a
# frame's library name is how inside_hdf5 below tells HDF5's faults apart.
libs=($(pkg-config --libs hdf5-openmpi jansson zlib) $(mpicc -showme:link) -lm)
lib_srcs=(src/base/*.c src/model/*.c src/core/*.c src/dist/*.c src/archive/*.c)
for t in json archive checkpoint; do
  [ -x "$out/fuzz_$t" ] && [ -z "$(find tests/fuzz src include -newer "$out/fuzz_$t" -name '*.[ch]' | head -n 1)" ] && continue
  clang "${flags[@]}" tests/fuzz/fuzz_$t.c "${lib_srcs[@]}" "${libs[@]}" -o "$out/fuzz_$t"
done
# seeds: inputs, and archives/checkpoints made by this build's piper if there is one
mkdir -p "$out"/seeds/{json,archive,checkpoint}
cp inputs/*.json tests/bad-inputs/*.json "$out"/seeds/json/
piper=${PIPER:-build/piper}
if [ -x "$piper" ] && /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
  (cd "$out" && PIPER_MPI=0 "$src/$piper" plan "$src/inputs/gpt3-1.3b-a100-80gb.json" --devices 8 --quiet \
    --out seeds/base.h5 --force >/dev/null 2>&1 || true)
  if [ -s "$out/seeds/base.h5" ]; then
    rm -rf "$out/seeds/crafted"
    /usr/bin/python3 tests/archive/craft.py "$out/seeds/base.h5" "$out/seeds/crafted" >/dev/null
    cp "$out/seeds/base.h5" "$out"/seeds/crafted/a-*.h5 "$out/seeds/archive/"
    cp "$out/seeds/crafted/valid.ckpt" "$out"/seeds/crafted/c-*.ckpt "$out/seeds/checkpoint/"
  fi
  # the other kinds of tables: the Pareto rows of 1f1b, plain and interleaved
  for kind in "1f1b:--schedule 1f1b" "vstage:--uniform --schedule 1f1b --virtual-stages 2"; do
    # shellcheck disable=SC2086
    (cd "$out" && PIPER_MPI=0 "$src/$piper" plan "$src/inputs/gpt3-1.3b-a100-80gb.json" --devices 8 \
      ${kind#*:} --quiet --out "seeds/archive/${kind%%:*}.h5" --force >/dev/null 2>&1 || true)
  done
fi
export PIPER_FUZZ_INPUT=$src/inputs/gpt3-1.3b-a100-80gb.json
# allocator_may_return_null=1: a corrupt file can make HDF5's own metadata
# cache ask for an absurd block (seen: 3.5e18 bytes in H5C_protect); in a
# normal build malloc returns NULL there and HDF5 reports an error, which is
# what this keeps (ASan would otherwise abort inside HDF5).
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$src/tests/fuzz/lsan.supp:print_suppressions=0
# PIPER_FUZZ_RUNS=N: a fixed number of runs from a fixed seed instead of a
# time bound, so that the same tree gives the same inputs (what CI uses).
if [ -n "${PIPER_FUZZ_RUNS:-}" ]; then
  bound=(-runs="$PIPER_FUZZ_RUNS" -seed=1)
else
  bound=(-max_total_time="$secs")
fi
# inside_hdf5 LOG: true when the sanitizer report's innermost frame that is
# not a sanitizer interceptor lies in the HDF5 library itself, i.e. the
# fault is in HDF5's own parsing of a corrupt file (Debian 12 ships HDF5
# 1.10.8; three such faults are known, in its object-header and attribute
# code, one a strdup of an attribute name that is not terminated).  Such a
# finding is reported and its reproducer kept, but it is not counted
# against piper's code; every other finding fails the stage.  An
# interceptor is a frame of the fuzz binary without a source line
# ("in strdup (.../fuzz_archive+0x...)"): piper's own frames have one.
inside_hdf5() {
  awk '/ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:/ {on = 1; next}
       on && /^ *#[0-9]+ / {
         if ($0 ~ /__interceptor_|__asan_|__sanitizer|__ubsan/) next
         if ($0 ~ /\(.*\/fuzz_[a-z]+\+0x[0-9a-f]+\)/) next
         found = ($0 ~ /libhdf5/); exit}
       END {exit found ? 0 : 1}' "$1"
}
status=0
for t in json archive checkpoint; do
  mkdir -p "$out/corpus/$t"
  echo "== fuzz_$t: ${bound[*]}"
  if ! "$out/fuzz_$t" "${bound[@]}" -max_len=1048576 -rss_limit_mb=2048 -timeout=30 \
    -artifact_prefix="$out/crashes/$t-" -print_final_stats=1 "$out/corpus/$t" "$out/seeds/$t" \
    >"$out/fuzz_$t.log" 2>&1; then
    if inside_hdf5 "$out/fuzz_$t.log"; then
      echo "HDF5: fuzz_$t stopped on a fault inside the HDF5 library (not piper's code; see $out/fuzz_$t.log and $out/crashes/)"
      grep -E "^SUMMARY|^ *#[0-9]+ " "$out/fuzz_$t.log" | head -n 8
    else
      echo "FAIL: fuzz_$t found a problem (see $out/fuzz_$t.log and $out/crashes/)"
      tail -n 40 "$out/fuzz_$t.log"
      status=1
    fi
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$out/fuzz_$t.log" | tr '\n' ' '
  echo
done
exit $status
