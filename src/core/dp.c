/*
 * dp.c - the dynamic programme over downsets (see include/piper/dp.h).
 *
 * The transition for a pair (I, J), degrees (t, d) and a row of J's table
 * (budget k', steps (f_j, a_j)) proposes, for budget k = k' + t*d and
 * s = f_j + d, the value max(a_j, B(ceil(s/d))), where B(y) is the stage cost
 * of I \ J.  a_j falls with j and B rises with s, so only the steps up to the
 * crossing matter: the steps before it contribute a_j, the first one after it
 * contributes B.  A binary search finds the crossing (as in the reference).
 * Rows of J that repeat for several k' contribute only at their first k'.
 * The kernels: dp_small.c (small blocks), dp_dense.c (the others) and
 * dp_wide.c (a sweep for the largest); dp_front.c for the other objectives.
 */
#include "piper/dp.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "piper/bitset.h"
#include "dp_impl.h"
#include "dp_wide.h"
#include "piper/layer.h"
#include "piper/pages.h"
#include "stage.h"

/* The arena holds the tables in chunks that double from 64 KiB up to
 * 32 MiB (or one larger block), so that a small DP takes little; those of
 * 2 MiB and more are on 2 MiB pages where the system has them
 * (pp_xmalloc_huge): a first touch of a 4 KiB page costs about 5 times as
 * much as a 4 KiB share of a huge page on a virtual machine
 * (bench/bench_pages.sh); reading an archive's tables back (show) 0.92 ->
 * 0.75 s for BERT-32 at K = 2048.  Pages are still backed only when
 * touched: a chunk's unused tail costs at most the page it starts in. */
#define ARENA_FIRST ((size_t)1 << 16)
#define ARENA_CHUNK ((size_t)1 << 25)
/* The arena's pages are mapped in this far ahead of the blocks placed:
 * by one call per 256 KB, not by a fault per page as the tables are
 * written (9-10 us a fault on a virtual machine, bench/bench_pages.sh),
 * and the tail a chunk leaves unused when a larger block needs a new one
 * stays unmapped but for at most this much. */
#define ARENA_AHEAD ((size_t)1 << 18)

/* Room for one table block of need bytes in the arena. */
static void *arena_alloc(pp_dp *dp, size_t need) {
  if (dp->n_chunks == 0 || dp->chunk_used + need > dp->chunk_size) {
    if (dp->n_chunks == dp->cap_chunks) {
      dp->cap_chunks = dp->cap_chunks ? 2 * dp->cap_chunks : 16;
      dp->chunks = pp_xrealloc(dp->chunks, sizeof(char *) * (size_t)dp->cap_chunks);
    }
    size_t size = dp->n_chunks ? 2 * dp->chunk_size : ARENA_FIRST;
    if (size > ARENA_CHUNK) size = ARENA_CHUNK;
    dp->chunk_size = need > size ? need : size;
    dp->chunks[dp->n_chunks++] = pp_xmalloc_huge(dp->chunk_size);
    dp->chunk_used = dp->chunk_mapped = 0;
  }
  char *chunk = dp->chunks[dp->n_chunks - 1], *p = chunk + dp->chunk_used;
  dp->chunk_used += need;
  if (dp->chunk_used > dp->chunk_mapped) {
    size_t to = dp->chunk_used + ARENA_AHEAD;
    if (to > dp->chunk_size) to = dp->chunk_size;
    pp_map_in(chunk + dp->chunk_mapped, to - dp->chunk_mapped);
    dp->chunk_mapped = to;
  }
  dp->own_bytes += (double)need;
  return p;
}

pp_status pp_dp_create(const pp_graph *g, const pp_problem *p, const pp_downsets *ds, double mem_limit,
                       pp_dp **out, pp_error *err) {
  assert(g && p && ds && out && p->devices >= 1 && p->microbatches >= 1 && ds->count >= 2);
  *out = NULL;
  const double W = (double)pp_problem_max_s(p) + 1;
  /* Dense scratch for one downset, plus the staircases: a row has at most
   * S + 1 steps but in practice few; count 16 steps per row. */
  const int wide = pp__dpw_use(p->devices, (int)W - 1);
  double est = (wide ? 0.0 : (double)(p->devices + 1) * W * 8.0) +
               (double)ds->count * ((double)(p->devices + 1) * (8.0 + 16 * 12.0) + 128.0);
  if (pp__dpf_bytes_estimate(g, p, ds) >= 0) est = pp__dpf_bytes_estimate(g, p, ds); /* Pareto rows */
  if (mem_limit > 0 && est > mem_limit)
    return pp_error_set(
        err, PP_ERR_LIMIT,
        "the DP tables would need about %.3g GB (%d downsets, K = %d, S = %.0f), more than the "
        "%.3g GB allowed; lower --devices or raise --max-memory-use",
        est / 1e9, ds->count, p->devices, W - 1, mem_limit / 1e9);
  long long *pairs = pp_xmalloc(sizeof(long long) * (size_t)ds->count);
  const long long n_pairs = pp_downsets_count_pairs(ds, pairs);
  if (n_pairs < 0) {
    free(pairs);
    return pp_error_set(err, PP_ERR_INTERRUPTED,
                        "stopped by a signal while counting the pairs of %d downsets; nothing saved",
                        ds->count);
  }
  if (wide && pp__dpf_bytes_estimate(g, p, ds) < 0) { /* the sweep's scratch (dp_wide.c) */
    long long most = 0;
    for (int i = 0; i < ds->count; i++) most = pairs[i] > most ? pairs[i] : most;
    est += pp__dpw_bytes(g, p, most);
  }
  est += (double)pp__dp_stage_cache_bytes(n_pairs); /* the stage cache (stage.h), once the pairs are known */
  if (mem_limit > 0 && est > mem_limit) {
    free(pairs);
    return pp_error_set(err, PP_ERR_LIMIT,
                        "the DP tables would need about %.3g GB (%d downsets, K = %d, S = %.0f), more "
                        "than the %.3g GB allowed; lower --devices or raise --max-memory-use",
                        est / 1e9, ds->count, p->devices, W - 1, mem_limit / 1e9);
  }
  pp_dp *dp = pp_xcalloc(1, sizeof *dp);
  dp->g = g;
  dp->p = p;
  dp->ds = ds;
  dp->K = p->devices;
  dp->S = pp_problem_max_s(p);
  dp->tab = pp_xcalloc((size_t)ds->count, sizeof *dp->tab);
  dp->views = pp_xcalloc((size_t)ds->count, sizeof *dp->views);
  dp->reach = pp_xcalloc((size_t)ds->count, sizeof *dp->reach);
  dp->work = pp_xmalloc(sizeof(double) * (size_t)ds->count);
  dp->pairs = n_pairs;
  dp->mem_limit = mem_limit > 0 ? mem_limit : 0.0;
  dp->estimate = est;
  for (int i = 0; i < ds->count; i++) dp->work[i] = (double)pairs[i] * (1.0 + ds->size[i] / 8.0);
  free(pairs);
  dp->ev = pp_stage_eval_new(g, p, pp__dp_stage_cache_bytes(n_pairs));
  dp->cbits = pp_xcalloc((size_t)ds->words + 1, sizeof(uint64_t));
  dp->choice = pp_xmalloc(sizeof(int) * (size_t)(g->n_nodes + 1));
  dp->front = pp__dpf_new(dp);
  dp->wide = !dp->front && wide;
  pp_dp_set_table(dp, 0, dp->front ? pp__dpf_zero(dp) : pp_stairs_zero(dp->K));
  const int *dv;
  const int nd = pp_stage_n_dp(dp->ev, &dv);
  const size_t W1 = (size_t)dp->S + 1;
  if ((size_t)nd * W1 <= ((size_t)1 << 20)) {
    dp->yof = pp_xmalloc(sizeof(int) * (size_t)nd * W1);
    for (int di = 0; di < nd; di++)
      for (size_t x = 0; x < W1; x++) dp->yof[(size_t)di * W1 + x] = pp__dp_y_at(NULL, (int)x, dv[di]);
  }
  *out = dp;
  return PP_OK;
}

void pp_dp_free(pp_dp *dp) {
  if (!dp) return;
  for (int i = 0; i < dp->n_chunks; i++) free(dp->chunks[i]);
  free(dp->chunks);
  free(dp->views);
  free(dp->reach);
  free(dp->tab);
  free(dp->work);
  pp_stage_eval_free(dp->ev);
  free(dp->cbits);
  free(dp->dense);
  free(dp->choice);
  free(dp->yof);
  pp__dpf_free(dp->front);
  pp__dp_small_free(dp->small);
  pp__dp_dense_free(dp->dk);
  pp__dpw_scratch_free(dp->ws);
  free(dp);
}

const double *pp_dp_work(const pp_dp *dp) { return dp->work; }

long long pp_dp_pairs(const pp_dp *dp) { return dp->pairs; }

void pp_dp_set_table(pp_dp *dp, int id, pp_stairs *table) {
  assert(dp && id >= 0 && id < dp->ds->count);
  /* a replaced block stays in the arena until pp_dp_free */
  if (!table) {
    dp->tab[id] = NULL;
    return;
  }
  pp_dp_index_table(dp, table);
  void *block = arena_alloc(dp, pp_stairs_flat_bytes(table));
  pp_stairs_flat_write(table, block);
  pp_stairs_free(table);
  pp_dp_view_table(dp, id, block);
}

void pp_dp_index_table(const pp_dp *dp, pp_stairs *table) {
  if (dp && dp->front)
    pp__dpf_index(dp, table);
  else if (!table->fresh_start)
    pp_stairs_index_fresh(table);
}

/* The bounds of pp__dp_reach for table t (rows are non-increasing in k
 * and staircases in s, so the last row holds the smallest s and value). */
static pp__dp_reach reach_of(const pp_stairs *t) {
  pp__dp_reach r = {INT_MAX, 0, INFINITY};
  const int last = t->n_rows - 1, a = t->row_start[last], b = t->row_start[last + 1];
  if (t->v[b - 1] == INFINITY) return r;
  int j = a;
  while (t->v[j] == INFINITY) j++;
  r.s = t->s[j];
  r.a = t->v[b - 1];
  int row = 0;
  while (t->v[t->row_start[row + 1] - 1] == INFINITY) row++;
  r.k = t->row_k[row];
  return r;
}

void pp_dp_view_table(pp_dp *dp, int id, const void *block) {
  dp->held_bytes += (double)pp_stairs_flat_view(block, &dp->views[id]);
  dp->tab[id] = &dp->views[id];
  if (!dp->front) dp->reach[id] = reach_of(dp->tab[id]);
  pp__dp_small_forget(dp->small, id);
}

pp_status pp_dp_check_held(const pp_dp *dp, int layer, int n_layers, pp_error *err) {
  if (!(dp->mem_limit > 0) || dp->held_bytes <= dp->mem_limit) return PP_OK;
  return pp_error_set(err, PP_ERR_LIMIT,
                      "the DP tables hold %.6g GB after layer %d of %d, more than the %.6g GB allowed (they "
                      "were estimated at about %.3g GB before the start); lower --devices or raise "
                      "--max-memory-use",
                      dp->held_bytes / 1e9, layer, n_layers, dp->mem_limit / 1e9, dp->estimate / 1e9);
}

int pp_dp_table_valid(const pp_dp *dp, int id, const pp_stairs *t, const char **why) {
  if (dp->front) return pp__dpf_valid(dp, id, t, why);
  if (!pp_stairs_valid(t, dp->K, dp->S, why)) return 0;
  if (id == 0 && pp_stairs_value(t, 0, 0) != 0) {
    if (why) *why = "the empty downset's table is not zero";
    return 0;
  }
  return 1;
}

double pp_dp_row_steps_max(const pp_dp *dp) {
  if (!dp->front) return (double)dp->S + 1;
  return pp__dpf_row_slots_max(dp);
}

const pp_stairs *pp_dp_table(const pp_dp *dp, int id) { return dp->tab[id]; }

double pp_dp_own_bytes(const pp_dp *dp) { return dp->own_bytes; }

void pp_dp_set_poll(pp_dp *dp, int (*poll)(void *user), void *user) {
  dp->poll = poll;
  dp->poll_user = user;
}

/* The parts joined in order, each row merged with the joined row before. */
static pp_stairs *join_in_order(const pp_dp *dp, pp_stairs *const *parts, int n_parts) {
  return dp && dp->front ? pp__dpf_join(dp, parts, n_parts) : pp_stairs_join(parts, n_parts);
}

/* 1 if dp's rows hold only what each budget adds (their last row is not
 * the whole one). */
static int rows_add(const pp_dp *dp) { return dp && dp->front && pp__dpf_rows_add(dp); }

pp_stairs *pp_dp_tail(const pp_dp *dp, const pp_stairs *t) {
  assert(t && t->n_rows >= 1);
  return rows_add(dp) ? pp__dpf_tail(dp, t) : pp_stairs_last_row(t);
}

void pp_dp_pack_tail(const pp_dp *dp, const pp_stairs *t, int id, pp_pack *w) {
  if (!rows_add(dp)) {
    pp_stairs_pack_tail(t, id, w);
    return;
  }
  pp_stairs *row = pp__dpf_tail(dp, t);
  row->k_first = t->k_first; /* the part's budgets in the header, as pp_stairs_pack_tail writes them */
  pp_stairs_pack_tail(row, id, w);
  pp_stairs_free(row);
}

pp_stairs *pp_dp_unpack_tail(const pp_dp *dp, pp_unpack *r, int *id) {
  if (!rows_add(dp)) return pp_stairs_unpack_last(r, id);
  pp_stairs *t = pp_stairs_unpack(r, id);
  if (!t) return NULL;
  pp_stairs *row = pp__dpf_tail(dp, t);
  pp_stairs_free(t);
  return row;
}

pp_stairs *pp_dp_seam(const pp_dp *dp, const pp_stairs *seam, const pp_stairs *tail) {
  assert(tail && tail->n_rows == 1 && (!seam || seam->k_last < tail->k_first));
  if (!seam) return pp_stairs_last_row(tail);
  pp_stairs *two[2] = {(pp_stairs *)seam, (pp_stairs *)tail};
  pp_stairs *j = join_in_order(dp, two, 2);
  pp_stairs *row = pp_dp_tail(dp, j);
  pp_stairs_free(j);
  return row;
}

pp_stairs *pp_dp_segment(const pp_dp *dp, const pp_stairs *seam, pp_stairs *part, int *skip) {
  assert(seam && part && seam->n_rows == 1 && seam->k_last == part->k_first - 1);
  const int kept = dp && dp->front ? 0 : pp_stairs_absorbs(part, seam);
  if (kept == 1) { /* the seam lowers none of the part's rows */
    pp_stairs_index_fresh_after(part, seam);
    *skip = 0;
    return part;
  }
  if (kept == 2) { /* the part's row 0 is the seam's: dropped, the rest as they are (BERT-32 at K = 2048 on
                    * 2 ranks: all 24 seams not absorbed, whose joins copied parts of up to 1.3 MB) */
    pp_dp_index_table(dp, part); /* (row 1's fresh steps are over row 0, the seam's row) */
    *skip = 1;
    return part;
  }
  pp_stairs *two[2] = {(pp_stairs *)seam, part};
  pp_stairs *t = join_in_order(dp, two, 2);
  pp_stairs_free(part);
  pp_dp_index_table(dp, t);
  *skip = 1;
  return t;
}

pp_stairs *pp_dp_join(const pp_dp *dp, pp_stairs *const *parts, int n_parts) {
  assert(parts && n_parts >= 1);
  const pp_stairs **pieces = pp_xmalloc(sizeof *pieces * (size_t)n_parts);
  int *skip = pp_xcalloc((size_t)n_parts, sizeof(int));
  pp_stairs *seam = NULL;
  pieces[0] = parts[0];
  for (int p = 1; p < n_parts; p++) {
    pp_stairs *tail = pp_dp_tail(dp, parts[p - 1]), *next = pp_dp_seam(dp, seam, tail);
    pp_stairs_free(tail);
    pp_stairs_free(seam);
    seam = next;
    pp_stairs *two[2] = {seam, parts[p]};
    pieces[p] = join_in_order(dp, two, 2);
    skip[p] = 1;
  }
  pp_stairs *t = pp_stairs_concat(pieces, skip, n_parts, parts[0]->k_first, parts[n_parts - 1]->k_last);
  for (int p = 1; p < n_parts; p++) pp_stairs_free((pp_stairs *)pieces[p]);
  pp_stairs_free(seam);
  free(pieces);
  free(skip);
  return t;
}

pp_stairs *pp_dp_compute_rows(pp_dp *dp, int id, int k0, int k1) {
  assert(dp && id >= 1 && id < dp->ds->count && 0 <= k0 && k0 <= k1 && k1 <= dp->K);
  if (dp->front) return pp__dpf_rows(dp, id, k0, k1);
  if (dp->wide) return pp__dpw_rows(dp, id, k0, k1);
  if (pp__dp_small_fits(dp, k0, k1)) return pp__dp_small_rows(dp, id, k0, k1);
  return pp__dp_dense_rows(dp, id, k0, k1);
}

pp_status pp_dp_solve(pp_dp *dp, pp_progress_fn progress, void *user, pp_error *err) {
  const pp_layer_comm serial = pp_layer_serial();
  const pp_layer_hooks hooks = {.progress = progress, .progress_user = user, .fine = 1};
  return pp_layer_run(dp, dp->g, dp->p, dp->ds, 1, &serial, &hooks, NULL, err);
}

double pp_dp_optimum(const pp_dp *dp, int k) {
  if (dp->front) return pp__dpf_optimum(dp, k, dp->S);
  return pp_stairs_value(dp->tab[dp->ds->count - 1], k, dp->S);
}

double pp_dp_optimum_s(const pp_dp *dp, int k, int s) {
  assert(dp && dp->tab[dp->ds->count - 1] && s >= 0);
  if (dp->front) return pp__dpf_optimum(dp, k, s);
  return pp_stairs_value(dp->tab[dp->ds->count - 1], k, s < dp->S ? s : dp->S);
}

/* Smallest k' <= k with value(t, k', s) == v. */
static int min_k(const pp_stairs *t, int k, int s, double v) {
  int lo = 0, hi = k;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (pp_stairs_value(t, mid, s) == v)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

static int min_s(const pp_stairs *t, int k, int s, double v) {
  int lo = 0, hi = s;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (pp_stairs_value(t, k, mid) == v)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

void pp__dp_record_stage(pp_stage_eval *ev, int ti, int di, int y, int t, int d, double load,
                         pp_plan_stage *st) {
  const int *nodes;
  st->n_nodes = pp_stage_nodes(ev, &nodes);
  st->nodes = pp_xmalloc(sizeof(int) * (size_t)st->n_nodes);
  st->tmpc = pp_xmalloc(sizeof(int) * (size_t)st->n_nodes);
  memcpy(st->nodes, nodes, sizeof(int) * (size_t)st->n_nodes);
  pp_stage_choose(ev, ti, di, y, st->tmpc);
  st->d = d;
  st->t = t;
  st->load = load;
}

pp_status pp_dp_reconstruct(pp_dp *dp, int k, pp_plan **out, pp_error *err) {
  return pp_dp_reconstruct_s(dp, k, dp->S, out, err);
}

pp_status pp_dp_reconstruct_s(pp_dp *dp, int k, int s, pp_plan **out, pp_error *err) {
  assert(dp && out && k >= 0 && s >= 0);
  if (dp->front) return pp__dpf_reconstruct(dp, k, s, out, err);
  const pp_downsets *ds = dp->ds;
  *out = NULL;
  int cur = ds->count - 1;
  if (s > dp->S) s = dp->S;
  double v = pp_stairs_value(dp->tab[cur], k, s);
  pp_plan *plan = pp_plan_new(dp->g->n_nodes);
  plan->n_stages = 0;
  if (v == INFINITY) {
    *out = plan;
    return PP_OK;
  }
  const int *tv, *dv;
  const int nt = pp_stage_n_degrees(dp->ev, &tv), nd = pp_stage_n_dp(dp->ev, &dv);
  while (cur != 0) {
    const pp_stairs *tc = dp->tab[cur];
    k = min_k(tc, k, s, v);
    s = min_s(tc, k, s, v);
    const uint64_t *bi = pp_downset_bits(ds, cur);
    int found = 0;
    const int end = ds->layer_start[ds->size[cur]];
    for (int j = 0; j < end && !found; j++) {
      const uint64_t *bj = pp_downset_bits(ds, j);
      if (!pp_bits_subset(bj, bi, ds->words)) continue;
      pp__dp_set_stage(dp, dp->ev, bi, bj, NULL);
      for (int ti = 0; ti < nt && !found; ti++) {
        if (!pp_stage_supports(dp->ev, ti)) continue;
        for (int di = 0; di < nd && !found; di++) {
          const int d = dv[di], td = tv[ti] * d;
          if (td > k || d > s) break;
          double a = pp_stairs_value(dp->tab[j], k - td, s - d);
          int y = (s + d - 1) / d;
          double b = pp_stage_cost(dp->ev, ti, di, y);
          if ((a > b ? a : b) != v) continue;
          found = 1;
          pp__dp_record_stage(dp->ev, ti, di, y, tv[ti], d, b, &plan->stages[plan->n_stages++]);
          cur = j;
          k -= td;
          s -= d;
          v = a;
        }
      }
    }
    if (!found) {
      pp_plan_free(plan);
      return pp_error_set(err, PP_ERR_INTERNAL,
                          "plan reconstruction found no step at downset %d (k=%d, s=%d)", cur, k, s);
    }
  }
  plan->feasible = 1;
  *out = plan;
  return PP_OK;
}

pp_dp *pp_dp_restrict(const pp_dp *dp, const pp_problem *p) {
  assert(p->devices <= dp->K);
  pp_dp *r = pp_xcalloc(1, sizeof *r);
  r->g = dp->g;
  r->p = p;
  r->ds = dp->ds;
  r->K = p->devices;
  r->S = pp_problem_max_s(p);
  r->pairs = dp->pairs;
  r->tab = pp_xcalloc((size_t)dp->ds->count, sizeof *r->tab);
  r->views = pp_xcalloc((size_t)dp->ds->count, sizeof *r->views);
  r->reach = pp_xcalloc((size_t)dp->ds->count, sizeof *r->reach);
  r->work = pp_xmalloc(sizeof(double) * (size_t)dp->ds->count);
  memcpy(r->work, dp->work, sizeof(double) * (size_t)dp->ds->count);
  if (dp->front) { /* Pareto rows: the restricted tables are read (optimum, index) as such */
    r->ev = pp_stage_eval_new(dp->g, p, pp__dp_stage_cache_bytes(dp->pairs));
    r->front = pp__dpf_new(r);
  }
  for (int i = 0; i < dp->ds->count; i++)
    if (dp->tab[i])
      pp_dp_set_table(r, i,
                      dp->front ? pp__dpf_restrict(dp, dp->tab[i], r->K, r->S)
                                : pp_stairs_restrict(dp->tab[i], r->K, r->S));
  return r;
}
