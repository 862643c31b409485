#!/usr/bin/env bash
# Builds the public reference planner's driver (shared/reference-code/build.sh) once into
# BUILD_DIR/piper-ref/ and prints its path.  Exits 77 (CTest: Skipped) when g++, the
# nlohmann-json header or the reference code is missing.
#   ref_build.sh SHARED_DIR BUILD_DIR
set -euo pipefail
shared=${1:?usage: ref_build.sh SHARED_DIR BUILD_DIR}
build=${2:?usage: ref_build.sh SHARED_DIR BUILD_DIR}
src=$shared/reference-code/build.sh
if [ ! -f "$src" ]; then echo "SKIP: $src is missing" >&2; exit 77; fi
if ! command -v g++ >/dev/null; then echo "SKIP: g++ is not installed (apt-get install g++)" >&2; exit 77; fi
if [ ! -f /usr/include/nlohmann/json.hpp ]; then
  echo "SKIP: nlohmann/json.hpp is missing (apt-get install nlohmann-json3-dev)" >&2; exit 77
fi
out=$build/piper-ref
mkdir -p "$out"
# one build at a time (tests may start together); rebuild when the reference changes
exec 9>"$out/.lock"
flock 9
if [ ! -x "$out/piper-ref" ] || [ "$src" -nt "$out/piper-ref" ] || [ "$shared/reference-code/algo.cpp" -nt "$out/piper-ref" ]; then
  nice bash "$src" "$out" >&2
fi
echo "$out/piper-ref"
