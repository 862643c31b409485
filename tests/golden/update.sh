#!/usr/bin/env bash
# Rewrites the golden files of this folder from the program as built, for a
# change of --help or of a report made on purpose; review `git diff
# tests/golden` before committing.
# usage: tests/golden/update.sh [PIPER]   (default: build/piper)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
piper=${1:-$src/build/piper}
[ -x "$piper" ] || { echo "no executable $piper (build first)" >&2; exit 1; }
bash "$src/tests/golden/run.sh" "$piper" "$src" --update
