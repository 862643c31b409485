#!/usr/bin/env bash
# Reruns every experiment of the Piper paper this repository reproduces and redraws the
# pictures (bench/paper/results/): Fig. 1, Fig. 2, Fig. 3, the appendix tables, and the equi
# baseline against the reference on every Fig. 1 and appendix configuration.  Everything runs
# under nice on one rank; about 20-30 minutes of CPU on a 2-core machine, most of it Fig. 3 and
# the GNMT rows.  The reference driver is built into build/piper-ref if g++ and
# nlohmann-json3-dev are installed; without it the reference columns stay empty.
#   bash bench/paper/run_all.sh [PIPER] [SHARED_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
piper=$(realpath "${1:-$src/build/piper}")
shared=$(realpath "${2:-$src/../shared}")
inputs=$shared/piper-inputs
work=$src/build/paper
mkdir -p "$work" "$here/results"
ref=$(bash "$src/tests/paper/ref_build.sh" "$shared" "$src/build" || true)
cd "$here"
echo "== equi against the reference" >&2
[ -n "$ref" ] && nice python3 equi_parity.py "$piper" "$ref" "$inputs" --out results/equi_parity.tsv
echo "== Fig. 1" >&2
nice python3 fig1.py "$piper" "$inputs"
echo "== Fig. 2" >&2
nice python3 fig2.py "$piper" "$inputs" "$work/fig2"
echo "== appendix tables" >&2
nice python3 appendix.py "$piper" "$inputs" ${ref:+"$ref"}
echo "== Fig. 3" >&2
nice python3 fig3.py "$piper" "$inputs" "$work/inputs" ${ref:+"$ref"}
echo "== pictures" >&2
bash "$here/draw.sh" "$piper" "$work/fig2"
