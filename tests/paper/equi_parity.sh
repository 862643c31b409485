#!/usr/bin/env bash
# The equi baseline against the reference's PipeDream-2BW-like planner on the Piper paper's
# Fig. 1 and appendix configurations (bench/paper/equi_parity.py): same feasibility, TPS within
# a relative 1e-9.  Skipped (77) without g++, nlohmann-json or the shared inputs.
#   equi_parity.sh PIPER SOURCE_DIR SHARED_DIR BUILD_DIR [--quick]
set -euo pipefail
piper=$1 src=$2 shared=$3 build=$4
shift 4
if [ ! -d "$shared/piper-inputs" ]; then echo "SKIP: $shared/piper-inputs is missing" >&2; exit 77; fi
set +e
ref=$(bash "$src/tests/paper/ref_build.sh" "$shared" "$build")
rc=$?
set -e
[ $rc -eq 0 ] || exit $rc
exec python3 "$src/bench/paper/equi_parity.py" "$piper" "$ref" "$shared/piper-inputs" "$@"
