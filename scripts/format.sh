#!/usr/bin/env bash
# Formats the C sources with the tree's .clang-format; with --check, changes
# nothing and exits 1 listing the files that differ (CI runs it that way).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' 'tests/*.c' 'tests/*.h')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! clang-format --style=file "$f" | cmp -s - "$f"; then echo "format: $f differs from .clang-format"; bad=1; fi
  done
  [ $bad -eq 0 ] && echo "format: ${#files[@]} files match .clang-format"
  exit $bad
fi
clang-format --style=file -i "${files[@]}"
