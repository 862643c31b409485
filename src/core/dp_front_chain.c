/*
 * dp_front_chain.c - the Pareto rows of dp_front.c computed budget by
 * budget, for downsets with few subsets and long rows (BERT-32: a chain of
 * 33 downsets, rows of budgets up to 2048 with a few hundred entries each).
 *
 * dp_front.c takes the subsets J one after the other and collects every
 * candidate of every budget; on such inputs about 99% of them are dominated
 * by the row of the budget before theirs, and sorting and pruning them is
 * most of the time.  Here the stages I \ J are summarised first (their
 * loads l and terms a per (J, t, d, y) into arrays: the same values, by the
 * same arithmetic, as extend_row in dp_front.c), the row extensions (J, t,
 * d, row of J) are sorted by the budget they land at, and the rows are
 * built in rising k: a candidate of budget k that an entry of row k - 1
 * dominates (s, A and H no larger) is left out.  That entry, or one that
 * dominates it, is in every row from k on, and the rows are the entries no
 * other one dominates (of equal ones one is kept): the tables do not change.
 *
 * The screen: over the entries of a whole row (in (s, A, H) order) the
 * front in (A, H) of those with s' <= s, kept at each s that the row holds
 * (A ascending, H descending); a candidate at s is covered when the front
 * of the largest such s' <= s has an entry with A and H no larger.  The
 * whole row is that of row k - 1 while it holds at most SCREEN_EVERY_ROW
 * entries; beyond, it is remade when the rows built since add an eighth
 * of it (an older whole row covers less, never wrongly: what the rows
 * store is decided by the builder, pp__dpf_build_row), so that remaking
 * it costs about 8 merges per entry added rather than the whole row per
 * row (Llama 3.1 405B on 4,096 devices: whole rows of 15,000 entries).
 *
 * Used for v = 1 without --uniform when the screens of dp_front_screen.c
 * are off and the summaries fit (pp__dpf_chain_fits).  Private to src/core.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp_front.h"

/* Whole rows up to this size are made into the screen at every new row
 * (see the file header). */
enum { SCREEN_EVERY_ROW = 4096 };

/* One row extension: the entries of row r of J = js[x] (what it adds, or
 * with whole J's whole row r: pp__dpf_whole_at) by the stage at degree
 * pair c = ti nd + di. */
typedef struct chain_ev {
  int x, c, r, whole;
} chain_ev;

/* The summary of stage I \ js[x] at pair c: l and a at y in sum[off + 2 yi]
 * and sum[off + 2 yi + 1] (yi = y, or 0 with gpipe; n slots); off < 0 if the
 * pair is not used.  lmin, amin: the least finite l and a. */
typedef struct chain_pair {
  long long off;
  int n, across;
  double lmin, amin;
} chain_pair;

struct pp__fchain {
  uint64_t *sbits;          /* [count * words_s]: s values of any entry of the downset's table */
  const double **skey;      /* [count]: the table's values sbits was made from */
  double **corners;         /* [count]: per row of each table the least s, A and H of its finite entries
                          * (3 r ..; +inf if none), made on first use */
  const double **cornerkey; /* [count]: the table's values corners was made from */
  int words_s;              /* (S + 1 + 63) / 64 */
  int n_corners;            /* count */
  double *sum;              /* l, a per pair of each J */
  long long sum_cap;
  chain_pair *pair; /* [nj * nc] */
  int pair_cap;
  chain_ev *ev; /* the extensions, by landing budget */
  int ev_cap;
  int *ev_pos; /* [ev_start_cap]: where the next extension of each budget goes */
  int *ev_start, ev_start_cap;
  /* the screen: fronts per group g of equal s, entries fa/fh[fs[g] ..
   * fs[g + 1]); gi[s] the group of the largest s' <= s, or -1; made from
   * the whole row sw[sw_n] of the rows built up to the table's entry
   * sw_upto */
  double *fa, *fh;
  int f_cap, *fs, fs_cap, *gi;
  pp__fent *sw;
  int sw_n, sw_cap, sw_upto;
};

void pp__dpf_chain_free(pp__fchain *ch) {
  if (!ch) return;
  free(ch->sbits);
  free(ch->skey);
  for (int i = 0; ch->corners && i < ch->n_corners; i++) free(ch->corners[i]);
  free(ch->corners);
  free(ch->cornerkey);
  free(ch->sum);
  free(ch->pair);
  free(ch->ev);
  free(ch->ev_pos);
  free(ch->ev_start);
  free(ch->fa);
  free(ch->fh);
  free(ch->fs);
  free(ch->gi);
  free(ch->sw);
  free(ch);
}

/* Slots of a pair's l (and a) arrays: y = ceil(s / d) + 1 for s + d <= S. */
static int pair_slots(const pp_dp *dp, int d) { return dp->front->gpipe ? 1 : (dp->S - d) / d + 3; }

/* Doubles of the summaries of nj subsets. */
static double summary_doubles(const pp_dp *dp, int nj, int k1) {
  const pp__dp_front *f = dp->front;
  double per = 0.0;
  for (int ti = 0; ti < f->nt; ti++)
    for (int di = 0; di < f->nd && f->tv[ti] * f->dv[di] <= k1; di++) per += 2.0 * pair_slots(dp, f->dv[di]);
  return per * nj;
}

int pp__dpf_chain_fits(const pp_dp *dp, int nj, int k1) {
  const pp__dp_front *f = dp->front;
  if (f->uniform || f->v > 1 || f->scr) return 0;
  /* at most 8M doubles (64 MB) of summaries per downset, and the s bits of
   * every downset within 64 MB */
  const double words_s = (dp->S + 1 + 63) / 64;
  return summary_doubles(dp, nj, k1) <= 8.0 * 1024 * 1024 && words_s * dp->ds->count <= 8.0 * 1024 * 1024;
}

/* The s values of downset j's table entries, as bits (made on first use
 * and kept with the table's address, as dp_front_screen.c's jmin). */
static const uint64_t *s_bits(pp_dp *dp, int j) {
  pp__fchain *ch = dp->front->chain;
  const pp_stairs *t = dp->tab[j];
  uint64_t *b = ch->sbits + (size_t)j * (size_t)ch->words_s;
  if (ch->skey[j] == t->v) return b;
  memset(b, 0, sizeof(uint64_t) * (size_t)ch->words_s);
  const int E = dp->front->E, end = t->row_start[t->n_rows];
  for (int x = 0; x < end; x += E)
    if (t->v[x + 1] != INFINITY) b[t->s[x] / 64] |= 1ull << (t->s[x] % 64);
  ch->skey[j] = t->v;
  return b;
}

/* The row corners of downset j's table (made on first use and kept with
 * the table's address, as s_bits). */
static const double *row_corners(pp_dp *dp, int j) {
  const pp__dp_front *f = dp->front;
  pp__fchain *ch = f->chain;
  const pp_stairs *t = dp->tab[j];
  if (ch->cornerkey[j] == t->v) return ch->corners[j];
  double *mn = ch->corners[j] = pp_xrealloc(ch->corners[j], sizeof(double) * 3 * (size_t)(t->n_rows + 1));
  for (int r = 0; r < t->n_rows; r++) {
    double *m = mn + 3 * r;
    m[0] = m[1] = m[2] = INFINITY;
    for (int q = 0, n = pp__dpf_row_entries(f, t, r); q < n; q++) {
      const pp__fent e = pp__dpf_entry(f, t, r, q);
      if (e.H == INFINITY) continue;
      if (e.s < m[0]) m[0] = e.s;
      if (e.A < m[1]) m[1] = e.A;
      if (e.H < m[2]) m[2] = e.H;
    }
  }
  ch->cornerkey[j] = t->v;
  return mn;
}

/* The summary of the current stage (I \ js[x]) for every pair, into
 * ch->sum from *used on. */
static void summarise(pp_dp *dp, int x, int j, int k1, long long *used) {
  pp__dp_front *f = dp->front;
  pp__fchain *ch = f->chain;
  const uint64_t *sb = s_bits(dp, j);
  const double N = dp->p->microbatches;
  for (int ti = 0; ti < f->nt; ti++)
    for (int di = 0; di < f->nd; di++) {
      chain_pair *pr = &ch->pair[x * f->nt * f->nd + ti * f->nd + di];
      pr->off = -1;
      const int d = f->dv[di];
      if (!pp_stage_supports(dp->ev, ti) || f->tv[ti] * d > k1) continue;
      const int n = pair_slots(dp, d);
      pr->off = *used;
      pr->n = n;
      *used += 2 * n;
      double *la = ch->sum + pr->off;
      for (int i = 0; i < n; i++) la[2 * i] = NAN;
      pr->lmin = pr->amin = INFINITY;
      /* extend_row's arithmetic (dp_front.c) */
      const double rr = pp__dpf_resync_fixed(dp, ti, di);
      pr->across = !isnan(rr) || f->a0 || f->gpipe;
      for (int w = 0; w < ch->words_s; w++)
        for (uint64_t bits = sb[w]; bits; bits &= bits - 1) {
          const int s = w * 64 + __builtin_ctzll(bits);
          if (s + d > dp->S) break;
          const int y = pp__dpf_y_of(dp, s, d), yi = f->gpipe ? 0 : y;
          if (!isnan(la[2 * yi])) continue;
          const double c = pp_stage_cost(dp->ev, ti, di, y);
          const double a = c == INFINITY ? INFINITY
                           : f->a0       ? 0.0
                           : !isnan(rr)  ? d * (c - rr) / N
                                         : pp__dpf_stage_a(dp, ti, di, y, c);
          la[2 * yi] = c;
          la[2 * yi + 1] = a;
          if (c < pr->lmin) pr->lmin = c;
          if (c != INFINITY && a < pr->amin) pr->amin = a;
        }
    }
}

/* The extensions of J = js[x] for every used pair: the rows extend_pair
 * (dp_front.c) walks, with their landing budgets.  Without fill it counts
 * them per budget (ch->ev_start[k - k0 + 1]), with fill it writes them at
 * ch->ev_pos[k - k0]: two passes in the same order, so the extensions of
 * each budget stay in the order (x, c, r). */
static void collect(pp_dp *dp, int x, int j, int k0, int k1, int fill) {
  pp__dp_front *f = dp->front;
  pp__fchain *ch = f->chain;
  const pp_stairs *tj = dp->tab[j];
  for (int c = 0; c < f->nt * f->nd; c++) {
    if (ch->pair[x * f->nt * f->nd + c].off < 0) continue;
    const int td = f->tv[c / f->nd] * f->dv[c % f->nd];
    for (int r = pp__dp_first_landing_row(tj, td, k0); r < tj->n_rows; r++) {
      const int k = pp__dp_landing(tj, r, td, k0, k1);
      if (k > k1) break;
      if (k < 0) continue;
      const int whole = pp__dpf_lands_whole(tj, r, td, k0, k1);
      if (fill)
        ch->ev[ch->ev_pos[k - k0]++] = (chain_ev){x, c, r, whole};
      else
        ch->ev_start[k - k0 + 1]++;
    }
  }
}

/* The extensions of the nj subsets by landing budget into ch->ev:
 * ch->ev_start[k - k0] .. [k - k0 + 1] are those of budget k (a counting
 * sort: count, prefix sums, fill). */
static void sort_ev(pp_dp *dp, const int *js, int nj, int k0, int k1) {
  pp__fchain *ch = dp->front->chain;
  const int nk = k1 - k0 + 1;
  if (nk + 1 > ch->ev_start_cap) {
    ch->ev_start_cap = nk + 1;
    ch->ev_start = pp_xrealloc(ch->ev_start, sizeof(int) * (size_t)(nk + 1));
    ch->ev_pos = pp_xrealloc(ch->ev_pos, sizeof(int) * (size_t)(nk + 1));
  }
  memset(ch->ev_start, 0, sizeof(int) * (size_t)(nk + 1));
  for (int x = 0; x < nj; x++) collect(dp, x, js[x], k0, k1, 0);
  for (int k = 0; k < nk; k++) ch->ev_start[k + 1] += ch->ev_start[k];
  if (ch->ev_start[nk] > ch->ev_cap) {
    ch->ev_cap = ch->ev_start[nk];
    free(ch->ev);
    ch->ev = pp_xmalloc(sizeof(chain_ev) * (size_t)ch->ev_cap);
  }
  memcpy(ch->ev_pos, ch->ev_start, sizeof(int) * (size_t)nk);
  for (int x = 0; x < nj; x++) collect(dp, x, js[x], k0, k1, 1);
}

/* The screen from row e[n] (sorted, pruned; see the file header). */
static void screen_build(pp_dp *dp, const pp__fent *e, int n) {
  pp__dp_front *f = dp->front;
  pp__fchain *ch = f->chain;
  pp__dpf_grow(&f->front, &f->front_cap, n + 1);
  pp__fent *fr = f->front;
  int fn = 0, g = 0, used = 0;
  for (int s = 0; s <= dp->S; s++) ch->gi[s] = -1;
  for (int i = 0; i < n; i++) {
    const pp__fent x = e[i];
    /* x is not dominated by an earlier entry (the row is pruned): it enters
     * the front and drops the entries with A and H no smaller */
    int pos = 0;
    while (pos < fn && fr[pos].A < x.A) pos++;
    fn = pp__dpf_front_put(fr, fn, pos, x);
    if (i + 1 < n && e[i + 1].s == x.s) continue;
    if (used + fn > ch->f_cap) {
      ch->f_cap = 2 * (used + fn);
      ch->fa = pp_xrealloc(ch->fa, sizeof(double) * (size_t)ch->f_cap);
      ch->fh = pp_xrealloc(ch->fh, sizeof(double) * (size_t)ch->f_cap);
    }
    if (g + 2 > ch->fs_cap) {
      ch->fs_cap = 2 * (g + 2);
      ch->fs = pp_xrealloc(ch->fs, sizeof(int) * (size_t)ch->fs_cap);
    }
    ch->fs[g] = used;
    for (int q = 0; q < fn; q++) {
      ch->fa[used + q] = fr[q].A;
      ch->fh[used + q] = fr[q].H;
    }
    used += fn;
    const int s_end = i + 1 < n ? e[i + 1].s : dp->S + 1;
    for (int s = x.s; s < s_end; s++) ch->gi[s] = g;
    g++;
  }
  ch->fs[g] = used;
}

/* 1 if the screen covers (s, A, H). */
static inline int screen_covers(const pp__fchain *ch, int s, double A, double H) {
  const int g = ch->gi[s];
  if (g < 0) return 0;
  int lo = ch->fs[g], hi = ch->fs[g + 1]; /* the last entry with fa <= A */
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (ch->fa[mid] <= A)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo > ch->fs[g] && ch->fh[lo - 1] <= H;
}

/* Extends entry (s, A, H) by the stage of pair pr at degree d into a
 * candidate unless the screen covers it (on), with the cut of extend_row
 * (dp_front.c) in *cut_s, *cut_a. */
static inline void extend_one(pp_dp *dp, const chain_pair *pr, const double *la, int d, int on, int s,
                              double A, double H, int *cut_s, double *cut_a, pp__fvec *out) {
  pp__dp_front *f = dp->front;
  if (s + d > dp->S || A >= *cut_a || s == *cut_s) return;
  const int yi = f->gpipe ? 0 : pp__dpf_y_of(dp, s, d);
  const double l = la[2 * yi];
  if (l == INFINITY) return;
  const double a = la[2 * yi + 1];
  const double h1 = H + a, h2 = A + l;
  const pp__fent x = {0, s + d, A + a, h1 > h2 ? h1 : h2};
  if (!on || !screen_covers(f->chain, x.s, x.A, x.H)) pp__dpf_push(f, out, x);
  if (h2 >= h1) {
    *cut_s = s;
    if (pr->across && A < *cut_a) *cut_a = A;
  }
}

/* extend_row of dp_front.c for extension ev from the summaries, leaving
 * out what the screen covers (on: the screen holds row k - 1): the row's
 * entries, after the corner of all of them (their least
 * s, A, H with the pair's least l and a; rounding is monotone) is tested. */
static void extend(pp_dp *dp, const int *js, const chain_ev *ev, int on, pp__fvec *out) {
  pp__dp_front *f = dp->front;
  const pp__fchain *ch = f->chain;
  const chain_pair *pr = &ch->pair[ev->x * f->nt * f->nd + ev->c];
  const double *la = ch->sum + pr->off;
  const int d = f->dv[ev->c % f->nd], r = ev->r;
  if (pr->lmin == INFINITY) return;
  int cut_s = -1;
  double cut_a = INFINITY;
  if (ev->whole) {
    const pp__fent *w;
    for (int q = 0, n = pp__dpf_whole_at(dp, js[ev->x], r, &w); q < n; q++)
      extend_one(dp, pr, la, d, on, w[q].s, w[q].A, w[q].H, &cut_s, &cut_a, out);
    return;
  }
  const pp_stairs *tj = dp->tab[js[ev->x]];
  const double *m = row_corners(dp, js[ev->x]) + 3 * r;
  if (m[0] + d > dp->S) return;
  if (on) {
    const double h1 = m[2] + pr->amin, h2 = m[1] + pr->lmin;
    if (screen_covers(ch, (int)m[0] + d, m[1] + pr->amin, h1 > h2 ? h1 : h2)) return;
  }
  for (int q = 0, n = pp__dpf_row_entries(f, tj, r); q < n; q++) {
    const pp__fent e = pp__dpf_entry(f, tj, r, q);
    if (e.H != INFINITY) extend_one(dp, pr, la, d, on, e.s, e.A, e.H, &cut_s, &cut_a, out);
  }
}

pp_stairs *pp__dpf_chain_rows(pp_dp *dp, int id, int k0, int k1, const int *js, int nj) {
  pp__dp_front *f = dp->front;
  const pp_downsets *ds = dp->ds;
  if (!f->chain) {
    pp__fchain *ch = pp_xcalloc(1, sizeof *ch);
    ch->words_s = (dp->S + 1 + 63) / 64;
    ch->sbits = pp_xmalloc(sizeof(uint64_t) * (size_t)ds->count * (size_t)ch->words_s);
    ch->skey = pp_xcalloc((size_t)ds->count, sizeof(const double *));
    ch->gi = pp_xmalloc(sizeof(int) * (size_t)(dp->S + 1));
    ch->n_corners = ds->count;
    ch->corners = pp_xcalloc((size_t)ds->count, sizeof(double *));
    ch->cornerkey = pp_xcalloc((size_t)ds->count, sizeof(const double *));
    f->chain = ch;
  }
  pp__fchain *ch = f->chain;
  const int nc = f->nt * f->nd;
  if (nj * nc > ch->pair_cap) {
    ch->pair_cap = nj * nc;
    ch->pair = pp_xrealloc(ch->pair, sizeof(chain_pair) * (size_t)ch->pair_cap);
  }
  const long long need = (long long)summary_doubles(dp, nj, k1) + 1;
  if (need > ch->sum_cap) {
    free(ch->sum);
    ch->sum = pp_xmalloc(sizeof(double) * (size_t)need);
    ch->sum_cap = need;
  }
  const uint64_t *bi = pp_downset_bits(ds, id);
  long long used = 0;
  for (int x = 0; x < nj; x++) {
    pp__dp_set_stage(dp, dp->ev, bi, pp_downset_bits(ds, js[x]), NULL);
    pp__dpf_set_stage_p(dp);
    summarise(dp, x, js[x], k1, &used);
  }
  sort_ev(dp, js, nj, k0, k1);
  pp__fbuild b;
  pp__dpf_build_begin(dp, &b);
  for (int k = k0; k <= k1; k++) {
    if (k == k0) ch->sw_n = ch->sw_upto = 0;
    const int pending = b.n - ch->sw_upto;
    if (pending > 0 && (ch->sw_n <= SCREEN_EVERY_ROW || 8 * pending >= ch->sw_n)) {
      pp__dpf_grow(&ch->sw, &ch->sw_cap, ch->sw_n + pending + 1);
      memcpy(ch->sw + ch->sw_n, b.e + ch->sw_upto, sizeof(pp__fent) * (size_t)pending);
      ch->sw_n = pp__dpf_prune(f, ch->sw, ch->sw_n + pending);
      ch->sw_upto = b.n;
      screen_build(dp, ch->sw, ch->sw_n);
    }
    const int on = k > k0 && ch->sw_n > 0;
    for (int i = ch->ev_start[k - k0]; i < ch->ev_start[k - k0 + 1]; i++)
      extend(dp, js, &ch->ev[i], on, &f->cand[k - k0]);
    pp__dpf_build_row(dp, &b, k, k0);
  }
  return pp__dpf_build_finish(dp, &b, k0, k1);
}
