# shellcheck shell=sh
# The set-up the command-line test scripts share (POSIX sh; bash scripts use
# it too).  Source it first thing:   . "$(dirname "$0")/../lib.sh"
# (tests/require.sh, beside it, is the wrapper form of t_need for CTest
# commands.)
#
#   t_need CMD [WHAT]  exit 77 (CTest: Skipped) with "SKIPPED: WHAT is not
#                      installed" unless the program CMD is on PATH (or, for a
#                      path, executable)
#   t_workdir [DIR]    a fresh work folder, made the current one and kept in
#                      $work: DIR (emptied first, left for inspection) or,
#                      without DIR, a temporary folder removed at exit; the
#                      exit trap first runs the commands in $t_at_exit (e.g.
#                      stopping a background job), set them before or after
#   t_mpi_env          the Open MPI settings every MPI test uses: run as root,
#                      shared memory between the ranks, oversubscribed cores
#   ok MSG / bad MSG   print "ok   MSG" / "FAIL MSG"; bad marks the test
#                      failed (t_status=1) and goes on
#   die MSG            print "FAIL MSG" and exit 1 at once
#   has FILE TEXT      bad unless FILE contains TEXT (then FILE is printed)
#   t_exit CODE CMD... runs CMD (its output in out and err, in the current
#                      folder): bad, printing both, unless it exits CODE
#   t_done             print whether all passed; exit 0 if so, else 1
#   t_plan             the plan of a `piper plan --format json` report read
#                      on standard input, without what varies from run to run
#                      (times, ranks, bytes, archive): one line of JSON with
#                      its keys sorted, for comparing two runs' plans
t_status=0
t_tmp=
t_at_exit=

ok() { echo "ok   $*"; }
bad() {
  echo "FAIL $*"
  t_status=1
}
die() {
  echo "FAIL $*"
  exit 1
}
has() { grep -F -q -- "$2" "$1" || { bad "'$2' not in $1:"; cat "$1"; }; }

t_exit() {
  t_want=$1
  shift
  "$@" > out 2> err
  t_got=$?
  [ "$t_got" -eq "$t_want" ] || { bad "$* exited $t_got, expected $t_want"; cat out err; }
}

t_need() {
  case $1 in
  */*) [ -x "$1" ] ;;
  *) command -v "$1" > /dev/null 2>&1 ;;
  esac || {
    echo "SKIPPED: ${2:-$1} is not installed"
    exit 77
  }
}

t_on_exit() {
  eval "${t_at_exit:-:}"
  [ -z "$t_tmp" ] || rm -rf "$t_tmp"
}

t_workdir() {
  if [ -n "${1:-}" ]; then
    work=$1
    rm -rf "$work" && mkdir -p "$work" || exit 1
  else
    work=$(mktemp -d) || exit 1
    t_tmp=$work
  fi
  trap t_on_exit EXIT
  cd "$work" || exit 1
}

t_mpi_env() {
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
  export OMPI_MCA_rmaps_base_oversubscribe=1
}

t_plan() {
  python3 -c 'import json,sys; d=json.load(sys.stdin); d={k:d[k] for k in ("feasible","tps","devices_used","sum_dp_degrees","stages","downsets") if k in d}; print(json.dumps(d,sort_keys=True))'
}

t_done() {
  if [ "$t_status" -eq 0 ]; then echo "all passed"; else echo "some failed"; fi
  exit "$t_status"
}
