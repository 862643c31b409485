#!/usr/bin/env bash
# How often the 2bw kernels set up the same stage again: counts the calls of
# pp__dp_set_stage (one per pair (I, J) that passes the pair screens, the
# stage I \ J) and the distinct stages among them (by a 64-bit hash of the
# stage's node bitset), on GNMT at K = 16 (1.2 GiB) and K = 128 (2.5 GiB).
# A probe, not a change: it copies the tree to a temp folder, adds the counter
# there (a hash set behind pp__dp_set_stage, printed at exit), builds that
# copy and runs it; the repository is not touched.  The ratio calls/distinct
# is what a cache of stage summaries keyed by the node set could save at most.
# Then, where perf can sample, the share of the one-rank GNMT K = 16 run's
# samples (PIPER, default build/piper: the tree as it is, without the
# counter) in the stage set-up and the knapsacks, the part such a cache can
# spare (pp_stage_set_some, summarise, pp__knap_*, sift_down, pp_stage_cost,
# memo_row, find_thresholds; self time); since src/core/stage_cache.c, what
# it leaves of that part.
# usage: [PIPER=...] bench/probe_stage_repeats.sh   (needs the build dependencies; ~2 min)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
shared=$(realpath "$here/../shared")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$here" archive HEAD | tar -x -C "$work"
python3 - "$work" <<'PY'
import sys
root = sys.argv[1]
p = root + '/src/core/dp_impl.h'
s = open(p).read()
old = '''  for (int w = 0; w < dp->ds->words; w++) dp->cbits[w] = bi[w] & ~bj[w];'''
new = '''  unsigned long long h = 1469598103934665603ull;
  for (int w = 0; w < dp->ds->words; w++) {
    dp->cbits[w] = bi[w] & ~bj[w];
    h = (h ^ dp->cbits[w]) * 1099511628211ull;
    h ^= h >> 29;
  }
  pp__probe_count(h ? h : 1);'''
assert old in s, 'pp__dp_set_stage changed: update the probe'
s = s.replace(old, new)
s = s.replace('static inline void pp__dp_set_stage(', 'void pp__probe_count(unsigned long long h);\nstatic inline void pp__dp_set_stage(', 1)
open(p, 'w').write(s)
p = root + '/src/core/dp.c'
s = open(p).read()
s += '''
#include <stdio.h>
static unsigned long long *probe_set;
static long long probe_calls, probe_distinct;
static void probe_print(void) { fprintf(stderr, "stage set-ups %lld, distinct stages %lld\\n", probe_calls, probe_distinct); }
void pp__probe_count(unsigned long long h) {
  const unsigned long long mask = (1ull << 26) - 1;
  if (!probe_set) {
    probe_set = calloc(mask + 1, sizeof *probe_set);
    atexit(probe_print);
  }
  probe_calls++;
  unsigned long long x = h & mask;
  while (probe_set[x] && probe_set[x] != h) x = (x + 1) & mask;
  if (!probe_set[x]) {
    probe_set[x] = h;
    probe_distinct++;
  }
}
'''
open(p, 'w').write(s)
PY
cmake -S "$work" -B "$work/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j"$(nproc)" --target piper >/dev/null
echo "# stage set-ups of the 2bw kernels, $(date -u +%Y-%m-%dT%H:%MZ), main at $(git -C "$here" rev-parse --short HEAD)"
for run in "16 1.2GiB" "128 2.5GiB"; do
  set -- $run
  printf 'gnmt K = %-4s %-7s ' "$1" "$2"
  "$work/build/piper" plan "$shared/piper-inputs/gnmt.json" --devices "$1" --memory "$2" --quiet --no-archive \
    2>&1 >/dev/null | tail -1 | awk '{ gsub(",", ""); printf "%s (%.1f set-ups per distinct stage)\n", $0, $3 / $6 }'
done
piper=${PIPER:-$here/build/piper}
if command -v perf >/dev/null && [ -x "$piper" ] &&
  perf record -q -o "$work/perf.data" "$piper" plan "$shared/piper-inputs/gnmt.json" --devices 16 --memory 1.2GiB \
    --quiet --no-archive >/dev/null 2>&1; then
  perf report -i "$work/perf.data" --no-children --sort sym --stdio 2>/dev/null |
    awk '/^ +[0-9.]+%/ { p = $1; sub("%", "", p); all += p
           if ($3 ~ /^(pp_stage_set_some|summarise|pp__knap_|sift_down|pp_stage_cost|memo_row|find_thresholds)/) { st += p } }
         END { printf "gnmt K = 16, one rank, perf: %.1f%% of the samples in stage set-up and knapsacks (of %.1f%% listed)\n", st, all }'
else
  echo "gnmt K = 16, one rank, perf: not measured (no perf, no $piper, or perf cannot sample here)"
fi
