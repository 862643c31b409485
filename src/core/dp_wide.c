/*
 * dp_wide.c - the 2bw transition for large tables as a sweep over k.
 *
 * dp.c relaxes every candidate into a dense (k1 - k0 + 1) x (S + 1) block
 * and takes prefix minima at the end; at K = 98,304, S = 16,384 that block
 * is 12.9 GB.  Here the candidates are the same (the same rows of J, the
 * same steps of each row, the same values), but they are applied budget by
 * budget: row k of the new table is row k - 1 (the prefix minimum in k)
 * lowered by the candidates that land at k, held as one dense row R[0..S]
 * that keeps its prefix minimum in s.  A new row is emitted when it
 * changed.  The table is therefore the same, bit for bit; the memory is one
 * row, the per-(J, t, d) "streams" and their stage costs.
 *
 * Because R is the exact table at k - 1 (and at k, for what has landed),
 * a candidate can be tested against it before it is written:
 *   - exact screen: a value v at s with v >= R[s] cannot lower the table
 *     (R only falls, and the final table at (k, s) is at most R[s]);
 *   - dead stream: every candidate of a stream (J, t, d) is at least
 *     B(ceil(s/d)) at an s >= s_J + d, where s_J is the smallest s with a
 *     finite value in J's table (the last row; rows only fall) and B is the
 *     stage cost, non-decreasing in y (the kernel's binary search relies on
 *     that too).  Once R[s_J + d] <= B at s_J, no later candidate of the
 *     stream can be below R (R falls in s and in k, B rises): it is dropped;
 *   - smaller degrees: a candidate of (t, d) from J's cell (k', f) is
 *     max(a, B_td(y)) at (k' + t d, f + d).  A stream (t', d') of the same
 *     pair with t' d' <= t d and d' <= d proposes, from the same cell,
 *     max(a, B_t'd'(ceil(f/d') + 1)) at (k' + t'd', f + d') <= (k' + t d,
 *     f + d) (rows of J before k' + t d - t'd' only hold larger values, so
 *     the table's value there is at most that).  If B_t'd' there is <= the
 *     candidate's value v (v >= a), the candidate is dominated and skipped.
 *     The predecessors used are (t/next smaller t, d) and (t, next smaller d).
 */
#include "dp_wide.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "piper/bitset.h"
#include "stage.h"
#include "table_build.h"

int pp__dpw_use(int K, int S) { return (double)(K + 1) * (double)(S + 1) > (double)(1 << 24); }

/* One (J, t, d) of the downset being computed. */
typedef struct wstream {
  int j, ti, d, td;
  int r;      /* next row of J's table */
  int landed; /* a previous row of J has landed in [k0, k1] */
  int next;   /* next stream in the same bucket, or -1 */
  int pa, pb; /* predecessor streams (smaller t, smaller d) of the same J, or -1 */
  int ylo;    /* cost[ylo..ycap]: B at y, from prof */
  int ycap;   /* B is +INFINITY at ycap and beyond, or ycap is the largest y a step reaches */
  double lb;
  const double *cost; /* B at y = ceil(f / d) + 1, indexed by y - ylo (set after the pass over J) */
  const int *yof;     /* [S + 1]: y of each f (dp->yof), or NULL */
  size_t prof;        /* offset of the costs in the profile buffer */
} wstream;

/* The buffers of a sweep, kept in dp->ws from one downset to the next, so
 * that their pages are mapped in once per process rather than once per
 * downset: freed and allocated again, the largest (the stage costs, many
 * MB) came back from the system as new pages, a fault each (the Llama 3.1
 * 405B plan on 98,304 devices: 2.1 M faults per rank on 2 ranks, 30 s of
 * system time on a virtual machine where a fault costs about 10 us). */
struct pp__dpw_scratch {
  wstream *st; /* [cap] the streams */
  int cap;
  double *prof; /* [cap_prof] their stage costs */
  size_t cap_prof;
  int *head, cap_head;  /* [cap_head >= k1 - k0 + 1] first stream of each bucket */
  int *idx;             /* [nt * nd] scratch of add_pair */
  double *R;            /* [S + 1] the row being lowered */
  uint64_t *step;       /* [S / 64 + 1] bit s set iff s is a step of R: s = 0 or R[s] < R[s - 1] */
  pp__stairs_build out; /* the table being built */
};

typedef struct wsweep {
  pp_dp *dp;
  int k0, k1, S;
  int n;         /* streams */
  size_t n_prof; /* stage costs */
  pp__dpw_scratch *b;
} wsweep;

/* dp->ws (made on first use) with room for the buckets of rows k0..k1 and
 * an empty table builder. */
static pp__dpw_scratch *scratch_for(pp_dp *dp, int k0, int k1, int n_idx) {
  if (!dp->ws) {
    dp->ws = pp_xcalloc(1, sizeof *dp->ws);
    dp->ws->idx = pp_xmalloc(sizeof(int) * ((size_t)n_idx + 1));
    dp->ws->R = pp_xmalloc(sizeof(double) * ((size_t)dp->S + 1));
    dp->ws->step = pp_xmalloc(sizeof(uint64_t) * ((size_t)dp->S / 64 + 1));
  }
  pp__dpw_scratch *b = dp->ws;
  if (k1 - k0 + 1 > b->cap_head) {
    b->cap_head = k1 - k0 + 1;
    free(b->head);
    b->head = pp_xmalloc(sizeof(int) * (size_t)b->cap_head);
  }
  b->out.n_rows = 0; /* (a sweep abandoned on a stop leaves rows) */
  b->out.n_steps = 0;
  return b;
}

void pp__dpw_scratch_free(pp__dpw_scratch *ws) {
  if (!ws) return;
  free(ws->st);
  free(ws->prof);
  free(ws->head);
  free(ws->idx);
  free(ws->R);
  free(ws->step);
  pp__sb_free(&ws->out);
  free(ws);
}

double pp__dpw_bytes(const pp_graph *g, const pp_problem *p, long long max_subsets) {
  const int K = p->devices, S = pp_problem_max_s(p);
  int nt = 0, nd = 0;
  for (int i = 0; i < g->n_degrees; i++) nt += pp_problem_allows_t(p, g->degrees[i]) != 0;
  double ys = 0; /* stage costs held per (J, t): every y of every d */
  for (int d = 1; d <= S; d++)
    if (pp_problem_allows_d(p, d)) {
      nd++;
      ys += (double)S / d + 2;
    }
  const double per_j = (double)nt * ((double)nd * sizeof(wstream) + 8.0 * ys);
  /* the row R, its step bits and the buckets; the table built is counted with the tables */
  return (double)max_subsets * per_j + 8.0 * (S + 1) + 8.0 * (S / 64 + 1) + 4.0 * (K + 2);
}

/* B of stream w at the step f (f >= s_J, f + d <= S). */
static inline double cost_at(const wsweep *w, const wstream *x, int f) {
  (void)w;
  const int y = pp__dp_y_at(x->yof, f, x->d);
  return x->cost[(y < x->ycap ? y : x->ycap) - x->ylo];
}

/* The smallest cost a predecessor of x proposes from the step f. */
static inline double pred_cost(const wsweep *w, const wstream *x, int f) {
  double m = INFINITY;
  if (x->pa >= 0) m = cost_at(w, &w->b->st[x->pa], f);
  if (x->pb >= 0) {
    const double b = cost_at(w, &w->b->st[x->pb], f);
    m = b < m ? b : m;
  }
  return m;
}

static void push(wsweep *w, int i, int k) {
  w->b->st[i].next = w->b->head[k - w->k0];
  w->b->head[k - w->k0] = i;
}

/* The streams of pair (id, j) with their stage costs; idx[ti * nd + di]
 * is scratch. */
static void add_pair(wsweep *w, int j, int *idx) {
  pp_dp *dp = w->dp;
  const pp__dp_reach *rj = &dp->reach[j];
  const int *tv, *dv;
  const int nt = pp_stage_n_degrees(dp->ev, &tv), nd = pp_stage_n_dp(dp->ev, &dv);
  const pp_stairs *tj = dp->tab[j];
  for (int i = 0; i < nt * nd; i++) idx[i] = -1;
  for (int ti = 0; ti < nt; ti++) {
    if (!pp_stage_supports(dp->ev, ti)) continue;
    for (int di = 0; di < nd; di++) {
      const int d = dv[di], td = tv[ti] * d;
      if (td > w->k1 || rj->s + d > w->S) break;
      if (rj->k + td > w->k1) continue; /* every candidate lands beyond k1 */
      const int ylo = rj->s / d + (rj->s % d != 0) + 1, ymax = (w->S - d) / d + ((w->S - d) % d != 0) + 1;
      /* the costs past the memory bound are all +INFINITY (nearly every
       * cost of the Llama 3.1 405B plan on 98,304 devices): the profile
       * stops at the first of them, and cost_at reads that one for every
       * larger y */
      const int yinf = pp_stage_inf_from(dp->ev, ti, di);
      const int yhi = ymax < yinf ? ymax : yinf > ylo ? yinf : ylo;
      if (w->n == w->b->cap) {
        w->b->cap = w->b->cap ? 2 * w->b->cap : 256;
        w->b->st = pp_xrealloc(w->b->st, sizeof *w->b->st * (size_t)w->b->cap);
      }
      const size_t len = (size_t)(yhi - ylo + 1);
      if (w->n_prof + len > w->b->cap_prof) {
        while (w->n_prof + len > w->b->cap_prof) w->b->cap_prof = w->b->cap_prof ? 2 * w->b->cap_prof : 4096;
        w->b->prof = pp_xrealloc(w->b->prof, sizeof(double) * w->b->cap_prof);
      }
      /* a span at once (a call of pp_stage_cost per y had taken half of a
       * one-rank Llama 3.1 405B plan on 98,304 devices, and setting up
       * the memo row over every y a sixth of what remained) */
      pp_stage_cost_span(dp->ev, ti, di, ylo, yhi, w->b->prof + w->n_prof);
      wstream *x = &w->b->st[w->n];
      *x = (wstream){
          .j = j, .ti = ti, .d = d, .td = td, .ylo = ylo, .ycap = yhi, .prof = w->n_prof, .next = -1};
      x->lb = pp_stage_lower_bound(dp->ev, ti, di);
      x->yof = dp->yof ? dp->yof + (size_t)di * (size_t)(w->S + 1) : NULL;
      x->pa = ti > 0 ? idx[(ti - 1) * nd + di] : -1;
      x->pb = di > 0 ? idx[ti * nd + di - 1] : -1;
      w->n_prof += len;
      idx[ti * nd + di] = w->n;
      /* the row that holds budget k0 - td, or the first with a finite value */
      int r = w->k0 - td <= 0 ? 0 : pp_stairs_row(tj, w->k0 - td);
      const int rf = pp_stairs_row(tj, rj->k);
      x->r = r > rf ? r : rf;
      const int k = pp__dp_landing(tj, x->r, td, w->k0, w->k1);
      if (k >= w->k0 && k <= w->k1) push(w, w->n, k);
      w->n++;
    }
  }
}

/* Clears the bits lo..hi of b (none if lo > hi). */
static void bits_clear(uint64_t *b, int lo, int hi) {
  for (; lo <= hi && (lo & 63); lo++) b[lo >> 6] &= ~((uint64_t)1 << (lo & 63));
  for (; lo + 63 <= hi; lo += 64) b[lo >> 6] = 0;
  for (; lo <= hi; lo++) b[lo >> 6] &= ~((uint64_t)1 << (lo & 63));
}

/* Lowers R from s on to v (v < R[s]); R keeps its prefix minimum, and
 * step its steps: R[s - 1] >= the old R[s] > v, so s is one; s + 1 .. x - 1
 * now equal the cell before them; x, the first cell not lowered (R[x] <= v
 * < the old R[x - 1], so a step before), stays one iff R[x] < v. */
static inline void lower(double *R, uint64_t *step, int S, int s, double v) {
  int x = s;
  for (; x <= S && R[x] > v; x++) R[x] = v;
  step[s >> 6] |= (uint64_t)1 << (s & 63);
  bits_clear(step, s + 1, x - 1);
  if (x <= S && !(R[x] < v)) step[x >> 6] &= ~((uint64_t)1 << (x & 63));
}

/* The candidates of stream i's current row, landing now; returns 1 if R
 * changed, and moves the stream to its next row. */
static int relax(wsweep *w, int i, int k) {
  wstream *x = &w->b->st[i];
  const pp_stairs *tj = w->dp->tab[x->j];
  const int S = w->S, d = x->d, sj = w->dp->reach[x->j].s;
  double *R = w->b->R;
  if (R[sj + d] <= cost_at(w, x, sj)) return 0; /* dead stream (see the top) */
  const int r = x->r, st = tj->row_start[r], n = tj->row_start[r + 1] - st;
  const int *f = tj->s + st;
  const double *a = tj->v + st;
  const int fs = tj->fresh_start[r], n_fresh = tj->fresh_start[r + 1] - fs;
  const int *fresh = tj->fresh + fs, full = !x->landed;
  const int m = full ? n : n_fresh;
  int changed = 0;
  /* As relax_row in dp.c: the steps before the crossing propose a_j, the
   * first after it the stage cost; on a row whose predecessor landed, only
   * fresh steps, and the crossing only if it is fresh itself. */
  for (int q = 0; q < m; q++) {
    const int jx = full ? q : fresh[q];
    if (a[jx] == INFINITY) continue; /* an infinite proposal changes nothing */
    if (f[jx] + d > S) break;
    const double g = cost_at(w, x, f[jx]);
    double val;
    const int pred = a[jx] > x->lb && a[jx] > g;
    if (pred) {
      val = a[jx];
    } else {
      /* step jx - 1 before the crossing: an infinite value there is (its
       * cost is at most g; were g infinite, the proposal would not matter) */
      if (!full && jx > 0 && a[jx - 1] != INFINITY &&
          !(a[jx - 1] > x->lb && a[jx - 1] > cost_at(w, x, f[jx - 1])))
        break;
      val = g;
    }
    const int s = f[jx] + d;
    if (val < R[s] && val < pred_cost(w, x, f[jx])) {
      lower(R, w->b->step, S, s, val);
      changed = 1;
    }
    if (!pred) break;
  }
  x->landed = 1;
  x->r++;
  if (x->r < tj->n_rows) {
    const int kn = tj->row_k[x->r] + x->td;
    if (kn <= w->k1) push(w, i, kn);
  }
  return changed;
}

/* Appends R as row k of the table being built: its steps, s = 0 and every
 * s with R[s] < R[s - 1], read from the step bits (a scan of R itself
 * had taken a third of the sweep's time where S is large and the steps
 * few: the Llama 3.1 405B plan on 98,304 devices, S = 16,384). */
static void emit(wsweep *w, int k) {
  const int S = w->S;
  const double *R = w->b->R;
  pp__sb_row_begin(&w->b->out, k, (size_t)S + 1);
  for (int x = 0; x <= S / 64; x++)
    for (uint64_t m = w->b->step[x]; m; m &= m - 1) {
      const int s = 64 * x + __builtin_ctzll(m);
      pp__sb_step(&w->b->out, s, R[s]);
    }
}

/* 1 if pp_dp_set_poll's poll asks to stop. */
static int stop_asked(const pp_dp *dp) { return dp->poll && dp->poll(dp->poll_user); }

pp_stairs *pp__dpw_rows(pp_dp *dp, int id, int k0, int k1) {
  const pp_downsets *ds = dp->ds;
  const int *tv, *dv;
  const int nt = pp_stage_n_degrees(dp->ev, &tv), nd = pp_stage_n_dp(dp->ev, &dv);
  wsweep w = {.dp = dp, .k0 = k0, .k1 = k1, .S = dp->S, .b = scratch_for(dp, k0, k1, nt * nd)};
  int *idx = w.b->idx;
  for (int k = 0; k <= k1 - k0; k++) w.b->head[k] = -1;
  const uint64_t *bi = pp_downset_bits(ds, id);
  const int end = ds->layer_start[ds->size[id]];
  for (int j = 0; j < end; j++) {
    if (dp->reach[j].k >= k1) continue;
    const uint64_t *bj = pp_downset_bits(ds, j);
    if (!pp_bits_subset(bj, bi, ds->words)) continue;
    if (stop_asked(dp)) return NULL; /* a stop: the rows are abandoned */
    pp__dp_set_stage(dp, dp->ev, bi, bj, NULL);
    add_pair(&w, j, idx);
  }
  for (int i = 0; i < w.n; i++) w.b->st[i].cost = w.b->prof + w.b->st[i].prof;
  for (int s = 0; s <= w.S; s++) w.b->R[s] = INFINITY;
  memset(w.b->step, 0, sizeof(uint64_t) * ((size_t)w.S / 64 + 1));
  w.b->step[0] = 1; /* s = 0 */
  for (int k = k0; k <= k1; k++) {
    if ((k - k0) % 1024 == 1023 && stop_asked(dp)) return NULL;
    int changed = 0;
    /* relax() pushes only to later buckets (rows of J start at rising k) */
    for (int i = w.b->head[k - k0]; i >= 0;) {
      const int nx = w.b->st[i].next;
      changed |= relax(&w, i, k);
      i = nx;
    }
    if (changed || k == k0) emit(&w, k);
  }
  return pp__sb_table(&w.b->out, k0, k1);
}
