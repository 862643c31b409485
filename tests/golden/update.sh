#!/usr/bin/env bash
# Rewrites the golden files of this folder and the example archives of
# outputs/example/ from the program as built, for a change of --help, of a
# report or of the archive made on purpose; review `git diff tests/golden
# outputs` before committing.
# usage: tests/golden/update.sh [PIPER]   (default: build/piper)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
piper=${1:-$src/build/piper}
[ -x "$piper" ] || { echo "no executable $piper (build first)" >&2; exit 1; }
bash "$src/tests/golden/run.sh" "$piper" "$src" --update
bash "$src/tests/outputs/check.sh" "$piper" "$src" --update
