#!/usr/bin/env bash
# Runs every test: a Release build with the whole CTest suite (unit tests,
# reference parity, brute force, bad inputs, generator, archive, MPI at 1-8
# ranks, Slurm), then an AddressSanitizer/UBSan build running the unit, input,
# archive and quick MPI tests (leak reports from Open MPI's own libraries are
# suppressed by tests/sanitizer.supp), each stage running as many tests at a
# time as the machine has cores.  Installs dependencies first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader

echo "== Source format"
bash scripts/format.sh --check

echo "== Release build and full test suite"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure --timeout 3000 -j"$jobs")

echo "== AddressSanitizer + UBSan build"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPIPER_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
# fast_unwind_on_malloc=0: full stacks, so that allocations made inside Open MPI match the
# suppressions; use_tls=0: LeakSanitizer's thread scan stumbles on the thread-local storage of the
# components Open MPI loads at run time (a bogus range, then a crash of its tracer).
export ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitizer.supp:use_tls=0:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export PIPER_SKIP_SLOW=1
export PIPER_SANITIZED=1 # tests that cannot run under the sanitizers (ulimit -v) skip those parts
(cd build-asan && ctest --output-on-failure --timeout 3000 -j"$jobs" -LE 'slow|slurm')

echo "== Fuzzing (libFuzzer + ASan/UBSan, 1,000 runs per target from a fixed seed; a longer run: nice tests/fuzz/run.sh 600)"
PIPER_FUZZ_RUNS=1000 bash tests/fuzz/run.sh 30 build-fuzz
