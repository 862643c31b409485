/*
 * test_front_rows.c - the rows of the v = 1 Pareto-row tables hold only
 * what each adds to the whole row before it (src/core/dp_front.c), and the
 * whole rows that a k-range part starting at k0 > 0 extends come from
 * keyframes (src/core/dp_front_whole.c).
 *
 * On random chains and DAGs whose tables are long enough for several
 * keyframes, under 1f1b, gpipe and --uniform 1f1b, for every table:
 *   - every row after the first adds entries, none of which the whole row
 *     before holds, and the merge keeps them all (pp_dp_table_valid);
 *   - pp__dpf_whole_at gives at every row, asked in rising, falling and
 *     scattered order, exactly the union of the rows up to it pruned
 *     (pp__dpf_whole_row), entry by entry;
 *   - the table's whole last row (pp_dp_tail) is that of its last row.
 * The test fails if no table of the family made two keyframes (the
 * instances would no longer reach the keyframes' merge path).
 *
 * And the check of tables read back (pp_dp_table_valid, whose test of the
 * rows against the rows before them goes through the index of
 * dp_front_dom.c) against a brute force over every pair of entries, on the
 * tables of those instances altered at random: an entry of an earlier row
 * copied or moved into a later one, an entry's A or H changed to another
 * value of the table (ties included), an entry dropped.  The test fails if
 * fewer than a quarter or more than three quarters of the altered tables
 * are valid (the alterations would no longer reach both verdicts).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_front.h"
#include "dp_impl.h"
#include "testutil.h"

static tu_spec *make_instance(int it, int kind, pp_problem *p) {
  tu_rng r = {0xf2e5a0ull + (uint64_t)it * 7919 + (uint64_t)kind * 1000003};
  double need, sum_max;
  tu_spec *s = tu_random_kind(&r, kind, &need, &sum_max);
  static const int Ns[] = {32, 64, 128};
  s->microbatches = Ns[tu_int(&r, 0, 2)];
  static const int Ks[] = {64, 96, 128};
  s->devices = Ks[tu_int(&r, 0, 2)];
  s->memory = floor(need * (1.0 + 0.5 * tu_unit(&r)) + tu_unit(&r) * 0.6 * sum_max);
  *p = tu_problem(s);
  return s;
}

/* Entries a[n] and b[m] are equal. */
static void assert_same_entries(const pp__fent *a, int n, const pp__fent *b, int m, int id, int r,
                                const char *what) {
  cr_assert_eq(n, m, "%s: downset %d, row %d: %d entries vs %d", what, id, r, n, m);
  for (int i = 0; i < n; i++)
    cr_assert(a[i].cls == b[i].cls && a[i].s == b[i].s && a[i].A == b[i].A && a[i].H == b[i].H,
              "%s: downset %d, row %d, entry %d: (%d, %d, %.17g, %.17g) vs (%d, %d, %.17g, %.17g)", what, id,
              r, i, a[i].cls, a[i].s, a[i].A, a[i].H, b[i].cls, b[i].s, b[i].A, b[i].H);
}

/* Checks every table of dp; returns the most keyframes a table made. */
static int check_tables(pp_dp *dp, const char *what) {
  pp__dp_front *f = dp->front;
  pp__fent *ref = NULL;
  int cap = 0, most = 0;
  for (int id = 1; id < dp->ds->count; id++) {
    const pp_stairs *t = pp_dp_table(dp, id);
    const char *why = NULL;
    cr_assert(pp_dp_table_valid(dp, id, t, &why), "%s: downset %d: %s", what, id, why);
    const int R = t->n_rows;
    for (int pass = 0; pass < 3; pass++)
      for (int q = 0; q < R; q++) {
        const int r = pass == 0 ? q : pass == 1 ? R - 1 - q : (int)(((long long)q * 7919) % R);
        const pp__fent *got;
        const int m = pp__dpf_whole_at(dp, id, r, &got), n = pp__dpf_whole_row(f, t, r, &ref, &cap);
        assert_same_entries(ref, n, got, m, id, r, what);
      }
    pp_stairs *tail = pp_dp_tail(dp, t);
    const int n = pp__dpf_whole_row(f, t, R - 1, &ref, &cap);
    cr_assert_eq(tail->n_rows, 1, "%s: downset %d: the tail has %d rows", what, id, tail->n_rows);
    cr_assert_eq(tail->k_last, t->k_last, "%s: downset %d: the tail's budget", what, id);
    pp__fent *tr = NULL;
    int tcap = 0;
    const int m = pp__dpf_whole_row(f, tail, 0, &tr, &tcap);
    assert_same_entries(ref, n, tr, m, id, R - 1, what);
    free(tr);
    pp_stairs_free(tail);
    const int kf = pp__dpf_whole_keyframes(dp, id);
    if (kf > most) most = kf;
  }
  free(ref);
  return most;
}

/* A table's entries by row (sentinels left out), in pp__dpf_cmp order. */
typedef struct rows_of {
  pp__fent *e;
  int *start, n_rows, n;
} rows_of;

static rows_of decode(const pp__dp_front *f, const pp_stairs *t) {
  rows_of o = {pp_xmalloc(sizeof(pp__fent) * (size_t)(t->row_start[t->n_rows] / f->E + 2)),
               pp_xmalloc(sizeof(int) * (size_t)(t->n_rows + 1)), t->n_rows, 0};
  for (int r = 0; r < t->n_rows; r++) {
    o.start[r] = o.n;
    for (int i = 0, c = pp__dpf_row_entries(f, t, r); i < c; i++) {
      const pp__fent e = pp__dpf_entry(f, t, r, i);
      if (e.H != INFINITY) o.e[o.n++] = e;
    }
  }
  o.start[o.n_rows] = o.n;
  return o;
}

/* The table of rows o (budgets as in t), encoded as dp_front_rows.c
 * writes it: E slots an entry, a sentinel in an empty row. */
static pp_stairs *encode(const pp__dp_front *f, const pp_stairs *t, const rows_of *o) {
  int slots = 0;
  for (int r = 0; r < o->n_rows; r++) {
    const int n = o->start[r + 1] - o->start[r];
    slots += f->E * (n > 0 ? n : 1);
  }
  pp_stairs *u = pp_stairs_new(t->k_first, t->k_last, o->n_rows, slots);
  int x = 0;
  for (int r = 0; r < o->n_rows; r++) {
    u->row_k[r] = t->row_k[r];
    u->row_start[r] = x;
    const int n = o->start[r + 1] - o->start[r];
    for (int i = 0; i < (n > 0 ? n : 1); i++) {
      const pp__fent e = n > 0 ? o->e[o->start[r] + i] : (pp__fent){-1, 0, INFINITY, INFINITY};
      for (int q = 0; q < f->E; q++) u->s[x + q] = e.s;
      u->v[x] = e.A;
      u->v[x + 1] = e.H;
      if (f->E > 2) u->v[x + 2] = e.cls;
      x += f->E;
    }
  }
  u->row_start[o->n_rows] = x;
  return u;
}

/* y is no larger than x in s, A and H, within x's class. */
static int covers(const pp__fent *y, const pp__fent *x) {
  return y->cls == x->cls && y->s <= x->s && y->A <= x->A && y->H <= x->H;
}

/* The brute force: every row sorted without repeats and pruned, every row
 * after the first not empty, and no entry covered by an entry of a row
 * before it. */
static int brute_valid(const rows_of *o) {
  for (int r = 0; r < o->n_rows; r++) {
    const int a = o->start[r], b = o->start[r + 1];
    if (r > 0 && a == b) return 0;
    for (int i = a; i < b; i++) {
      if (i > a && pp__dpf_cmp(&o->e[i - 1], &o->e[i]) >= 0) return 0;
      for (int j = 0; j < b; j++)
        if (j != i && covers(&o->e[j], &o->e[i])) return 0;
    }
  }
  return 1;
}

/* Alters o at random (see the file's head); keeps every row sorted. */
static void alter(rows_of *o, tu_rng *g) {
  const int kind = tu_int(g, 0, 3), n = o->n;
  const int i = tu_int(g, 0, n - 1);
  int row_i = 0;
  while (o->start[row_i + 1] <= i) row_i++;
  if (kind == 2) { /* A or H of entry i set to a value of another entry */
    const pp__fent src = o->e[tu_int(g, 0, n - 1)];
    if (tu_int(g, 0, 1))
      o->e[i].A = src.A;
    else
      o->e[i].H = src.H;
  } else if (kind == 3 && o->start[row_i + 1] - o->start[row_i] >= 2) { /* entry i dropped */
    memmove(o->e + i, o->e + i + 1, sizeof(pp__fent) * (size_t)(n - i - 1));
    for (int r = row_i + 1; r <= o->n_rows; r++) o->start[r]--;
    o->n--;
  } else if (row_i + 1 < o->n_rows) { /* entry i copied (0) or moved (1) into a later row */
    const pp__fent e = o->e[i];
    const int to = tu_int(g, row_i + 1, o->n_rows - 1);
    int at = o->start[to];
    while (at < o->start[to + 1] && pp__dpf_cmp(&o->e[at], &e) < 0) at++;
    memmove(o->e + at + 1, o->e + at, sizeof(pp__fent) * (size_t)(o->n - at));
    o->e[at] = e;
    for (int r = to + 1; r <= o->n_rows; r++) o->start[r]++;
    o->n++;
    if (kind == 1 && o->start[row_i + 1] - o->start[row_i] >= 2) {
      memmove(o->e + i, o->e + i + 1, sizeof(pp__fent) * (size_t)(o->n - i - 1));
      for (int r = row_i + 1; r <= o->n_rows; r++) o->start[r]--;
      o->n--;
    }
  }
  for (int r = 0; r < o->n_rows; r++) /* (an altered A or H may move its entry) */
    qsort(o->e + o->start[r], (size_t)(o->start[r + 1] - o->start[r]), sizeof(pp__fent), pp__dpf_cmp);
}

/* Compares the check with the brute force on altered copies of dp's
 * tables; counts the altered tables and the valid ones. */
static void check_altered(pp_dp *dp, tu_rng *g, const char *what, int *tried, int *valid) {
  const pp__dp_front *f = dp->front;
  for (int id = 1; id < dp->ds->count; id++) {
    const pp_stairs *t = pp_dp_table(dp, id);
    rows_of base = decode(f, t);
    if (base.n < 2 || base.n_rows < 2) { /* (too small to alter) */
      free(base.e);
      free(base.start);
      continue;
    }
    for (int a = 0; a < 4; a++) {
      rows_of o = {pp_xmalloc(sizeof(pp__fent) * (size_t)(base.n + 4)),
                   pp_xmalloc(sizeof(int) * (size_t)(base.n_rows + 1)), base.n_rows, base.n};
      memcpy(o.e, base.e, sizeof(pp__fent) * (size_t)base.n);
      memcpy(o.start, base.start, sizeof(int) * (size_t)(base.n_rows + 1));
      alter(&o, g);
      pp_stairs *u = encode(f, t, &o);
      const char *why = NULL;
      const int got = pp_dp_table_valid(dp, id, u, &why), want = brute_valid(&o);
      cr_assert_eq(got, want, "%s: downset %d, alteration %d: the check says %s (%s), the brute force %s",
                   what, id, a, got ? "valid" : "invalid", why ? why : "-", want ? "valid" : "invalid");
      (*tried)++;
      *valid += want;
      pp_stairs_free(u);
      free(o.e);
      free(o.start);
    }
    free(base.e);
    free(base.start);
  }
}

static void run_family(pp_schedule sched, int uniform) {
  const int instances = getenv("PIPER_SANITIZED") ? 6 : 24;
  int most = 0, tried = 0, valid = 0;
  tu_rng alt = {0x5eed0fa1ull + (uint64_t)sched * 31 + (uint64_t)uniform};
  for (int it = 0; it < instances; it++) {
    pp_problem p;
    tu_spec *s = make_instance(it, it % 3, &p);
    p.schedule = sched;
    p.uniform = uniform;
    pp_graph *g = tu_load(s);
    pp_downsets *ds = NULL;
    pp_error err = {0};
    cr_assert_eq(pp_downsets_enumerate(g, 1000000, &ds, &err), PP_OK, "%s", err.msg);
    pp_dp *dp = NULL;
    cr_assert_eq(pp_dp_create(g, &p, ds, 0, &dp, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(pp_dp_solve(dp, NULL, NULL, &err), PP_OK, "%s", err.msg);
    char what[64];
    snprintf(what, sizeof what, "instance %d (K %d, N %d)", it, p.devices, p.microbatches);
    const int kf = check_tables(dp, what);
    if (kf > most) most = kf;
    check_altered(dp, &alt, what, &tried, &valid);
    pp_dp_free(dp);
    pp_downsets_free(ds);
    pp_graph_free(g);
    free(s);
  }
  cr_assert(most >= 2, "no table made two keyframes (most %d): the instances are too small", most);
  cr_assert(tried > 0 && 4 * valid >= tried && 4 * valid <= 3 * tried,
            "%d of %d altered tables valid: the alterations no longer reach both verdicts", valid, tried);
}

Test(front_rows, one_f_one_b, .timeout = 600) { run_family(PP_SCHEDULE_1F1B, 0); }
Test(front_rows, gpipe, .timeout = 600) { run_family(PP_SCHEDULE_GPIPE, 0); }
Test(front_rows, uniform_1f1b, .timeout = 600) { run_family(PP_SCHEDULE_1F1B, 1); }
