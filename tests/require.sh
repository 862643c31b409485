#!/bin/sh
# Runs a test only if what it needs is there; otherwise says what is missing
# and exits 77, which CTest (SKIP_RETURN_CODE 77) reports as Skipped.
# usage: require.sh [-f FILE] [-c COMMAND] [-p PYTHON_MODULE]... -- PROGRAM ARGS...
#   -f FILE    a readable file (e.g. the reference table of the shared folder)
#   -c COMMAND a program on PATH (e.g. h5dump)
#   -p MODULE  a module Debian's python3 (/usr/bin/python3, where python3-h5py
#              installs; else python3 on PATH) can import (e.g. h5py)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
  -f) [ -r "$2" ] || { echo "SKIPPED: $2 not found"; exit 77; } ;;
  -c) command -v "$2" >/dev/null 2>&1 || { echo "SKIPPED: $2 is not installed"; exit 77; } ;;
  -p) "$py" -c "import $2" 2>/dev/null || { echo "SKIPPED: python3 module $2 is not installed"; exit 77; } ;;
  *) echo "require.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
[ "${1:-}" = "--" ] || { echo "require.sh: missing -- PROGRAM" >&2; exit 2; }
shift
exec "$@"
