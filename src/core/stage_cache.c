/*
 * stage_cache.c - what was learnt about recent stages, kept by node set.
 *
 * The DP kernels set up the same stage I \ J for many pairs of downsets
 * (I, J): on GNMT each distinct stage 14 to 16 times over a run
 * (bench/probe_stage_repeats.sh).  Everything pp_stage_cost learns about a
 * stage depends on its node set alone: the per-degree summary (sums and
 * thresholds in y), the memo rows over y and the shared greedy's result per
 * y.  These live in the slots of a two-way set-associative cache keyed by
 * the node set, and the workspace points at the current stage's slot, so a
 * stage seen recently comes back with its summary and its costs.  Costs
 * are pure functions of the node set, so a hit returns the same bits a
 * fresh computation would.  The per-position scratch (edge bytes, offsets,
 * the knapsacks' work arrays) is not kept: stage.c rebuilds it when a cost
 * missing from the memo is asked.  A cache of one slot is the workspace
 * without a cache.
 */
#define PIPER_STAGE_MODULE
#include <stdlib.h>
#include <string.h>

#include "stage_int.h"

/* At most this many slots, whatever the byte budget. */
enum { CACHE_MAX_SLOTS = 1 << 16 };

void pp__stage_cache_alloc(pp_stage_eval *ev, size_t bytes) {
  stage_cache *ca = &ev->cache;
  const int nt = ev->pre.nt, nd = ev->pre.nd;
  ca->n_ti = (size_t)nt + 1;
  ca->rows = (size_t)nt * (size_t)nd + 1;
  ca->ys = ca->n_ti * (size_t)ev->sh.ys_len;
  const size_t words = (size_t)ev->cur.words;
  const size_t per_slot = words * sizeof(uint64_t) + 1 + ev->memo.total * sizeof(double) +
                          ca->rows * (1 + sizeof(double) + (ev->pre.zero ? 2 * sizeof(int) : 0)) +
                          ca->n_ti * (sizeof(stage_ti) + 1) + ca->ys * (1 + 3 * sizeof(double));
  size_t slots = 1;
  while (slots * 2 <= CACHE_MAX_SLOTS && slots * 2 * per_slot <= bytes) slots *= 2;
  ca->ways = slots >= 2 ? 2 : 1;
  ca->sets = (int)(slots / (size_t)ca->ways);
  ca->key = pp_xcalloc(slots * words + 1, sizeof(uint64_t));
  ca->used = pp_xcalloc(slots, 1);
  ca->mru = pp_xcalloc((size_t)ca->sets, 1);
  ca->val = pp_xmalloc(sizeof(double) * slots * ev->memo.total);
  ca->ok = pp_xmalloc(slots * ca->rows);
  ca->lb = pp_xmalloc(sizeof(double) * slots * ca->rows);
  if (ev->pre.zero) {
    ca->yfd = pp_xmalloc(sizeof(int) * slots * ca->rows);
    ca->yinfd = pp_xmalloc(sizeof(int) * slots * ca->rows);
  }
  ca->ts = pp_xmalloc(sizeof(stage_ti) * slots * ca->n_ti);
  ca->done = pp_xmalloc(slots * ca->n_ti);
  ca->ys_state = pp_xmalloc(slots * ca->ys);
  ca->ys_t = pp_xmalloc(sizeof(double) * slots * ca->ys);
  ca->ys_e = pp_xmalloc(sizeof(double) * slots * ca->ys);
  ca->ys_p = pp_xmalloc(sizeof(double) * slots * ca->ys);
}

void pp__stage_cache_free(pp_stage_eval *ev) {
  stage_cache *ca = &ev->cache;
  free(ca->key);
  free(ca->used);
  free(ca->mru);
  free(ca->val);
  free(ca->ok);
  free(ca->lb);
  free(ca->yfd);
  free(ca->yinfd);
  free(ca->ts);
  free(ca->done);
  free(ca->ys_state);
  free(ca->ys_t);
  free(ca->ys_e);
  free(ca->ys_p);
}

/* Points the workspace at slot s. */
static void point_at(pp_stage_eval *ev, size_t s) {
  const stage_cache *ca = &ev->cache;
  ev->memo.val = ca->val + s * ev->memo.total;
  ev->memo.ok = ca->ok + s * ca->rows;
  ev->memo.lb = ca->lb + s * ca->rows;
  ev->cur.ts = ca->ts + s * ca->n_ti;
  ev->cur.done = ca->done + s * ca->n_ti;
  if (ca->yfd) {
    ev->cur.yfd = ca->yfd + s * ca->rows;
    ev->cur.yinfd = ca->yinfd + s * ca->rows;
  }
  ev->sh.ys_state = ca->ys_state + s * ca->ys;
  ev->sh.ys_t = ca->ys_t + s * ca->ys;
  ev->sh.ys_e = ca->ys_e + s * ca->ys;
  ev->sh.ys_p = ca->ys_p + s * ca->ys;
}

int pp__stage_cache_enter(pp_stage_eval *ev, const uint64_t *c) {
  stage_cache *ca = &ev->cache;
  const size_t words = (size_t)ev->cur.words;
  uint64_t h = 0;
  for (size_t w = 0; w < words; w++) {
    h = (h ^ c[w]) * 0xbf58476d1ce4e5b9ull; /* splitmix64's mixing, word by word */
    h ^= h >> 31;
  }
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  const size_t set = (size_t)((h ^ (h >> 31)) & (uint64_t)(ca->sets - 1));
  const size_t s0 = set * (size_t)ca->ways;
  for (int w = 0; w < ca->ways; w++) {
    const size_t s = s0 + (size_t)w;
    const uint64_t *k = ca->key + s * words;
    size_t w2 = 0;
    while (w2 < words && k[w2] == c[w2]) w2++;
    if (ca->used[s] && w2 == words) {
      ca->mru[set] = (unsigned char)w;
      point_at(ev, s);
      return 1;
    }
  }
  /* an empty way, else the one not used last */
  int w = 0;
  if (ca->ways == 2) w = !ca->used[s0] ? 0 : !ca->used[s0 + 1] ? 1 : !ca->mru[set];
  const size_t s = s0 + (size_t)w;
  ca->used[s] = 1;
  ca->mru[set] = (unsigned char)w;
  memcpy(ca->key + s * words, c, words * sizeof(uint64_t));
  memset(ca->ok + s * ca->rows, 0, ca->rows);
  memset(ca->done + s * ca->n_ti, 0, ca->n_ti);
  memset(ca->ys_state + s * ca->ys, 0, ca->ys);
  point_at(ev, s);
  return 0;
}
