/*
 * test_layer.c - the pure parts of the layer driver (include/piper/layer.h):
 * the work split, the table packing, the install step, and the driver with
 * several simulated participants in one process; no MPI.
 */
#define _POSIX_C_SOURCE 200809L
#include "piper/layer.h"

#include "testutil.h"

/* A random graph: n nodes, degrees 1 and sometimes 2, random edges. */
static tu_spec *layer_spec(tu_rng *r, int n) {
  tu_spec *s = tu_spec_new(n);
  tu_random_edges(s, r, 0.2 + 0.6 * tu_unit(r));
  for (int v = 0; v < n; v++) {
    tu_tmpc_add(s, v, 1, "vanilla", tu_int(r, 1, 100), tu_int(r, 0, 2000), tu_int(r, 0, 20),
                tu_int(r, 1, 60));
    if (tu_int(r, 0, 1))
      tu_tmpc_add(s, v, 2, "vanilla", tu_int(r, 1, 50), tu_int(r, 0, 900), 1, tu_int(r, 1, 40));
  }
  tu_random_sync(s, r, 100);
  s->memory = 10 * n + tu_int(r, 0, 400);
  s->devices = tu_int(r, 1, 24);
  s->microbatches = tu_int(r, 1, 12);
  return s;
}

/* A test case: a spec, its graph and problem and, with tables, its
 * downsets and the serial DP's tables (case_free frees it all). */
typedef struct layer_case {
  tu_spec *sp;
  pp_graph *g;
  pp_problem p;
  pp_downsets *ds; /* NULL without tables */
  pp_dp *serial;   /* NULL without tables */
} layer_case;

/* The schedule options a case's problem takes (0: Piper's 2bw, the default;
 * 1: 1f1b; 2: --uniform 1f1b; 3: --uniform gpipe with 2 virtual stages). */
static void set_schedule(pp_problem *p, int which) {
  if (which >= 1) p->schedule = which == 3 ? PP_SCHEDULE_GPIPE : PP_SCHEDULE_1F1B;
  if (which >= 2) p->uniform = 1;
  if (which == 3) p->virtual_stages = 2;
}

static layer_case case_with(tu_spec *sp, int with_tables, int schedule) {
  layer_case c = {sp, tu_load(sp), tu_problem(sp), NULL, NULL};
  set_schedule(&c.p, schedule);
  if (!with_tables) return c;
  pp_error err = {0};
  cr_assert_eq(pp_downsets_enumerate(c.g, 100000, &c.ds, &err), PP_OK);
  cr_assert_eq(pp_dp_create(c.g, &c.p, c.ds, 0, &c.serial, &err), PP_OK);
  cr_assert_eq(pp_dp_solve(c.serial, NULL, NULL, &err), PP_OK, "%s", err.msg);
  return c;
}

static layer_case case_of(tu_spec *sp, int with_tables) { return case_with(sp, with_tables, 0); }

/* A random case of n nodes (layer_spec). */
static layer_case random_case(tu_rng *r, int n, int with_tables) {
  return case_of(layer_spec(r, n), with_tables);
}

/* One node with one TMPC, K devices, N microbatches. */
static layer_case one_node_case(int K, int N) {
  tu_spec *sp = tu_spec_new(1);
  tu_tmpc_add(sp, 0, 1, "vanilla", 1, 0, 0, 1);
  if (K) sp->devices = K;
  if (N) sp->microbatches = N;
  return case_of(sp, 0);
}

static void case_free(layer_case *c) {
  pp_dp_free(c->serial);
  pp_downsets_free(c->ds);
  pp_graph_free(c->g);
  free(c->sp);
}

/* Random estimated work for the downsets 0..39 of a layer. */
static void random_work(tu_rng *r, double work[40]) {
  for (int i = 0; i < 40; i++) work[i] = tu_int(r, 0, 3) ? tu_int(r, 1, 1000) : 5;
}

/* ---- work split ---- */

/* Every (id, k) of a layer is computed by exactly one participant. */
static void check_cover(pp_layer_split *s, const double *work, int a, int b, int K, int P, const char *what) {
  int *seen = calloc((size_t)(b - a) * (size_t)(K + 1), sizeof(int));
  pp_layer_item *items = malloc(sizeof *items * (size_t)(b - a + 1));
  for (int me = 0; me < P; me++) {
    int n = pp_layer_split_items(s, work, a, b, me, items);
    cr_assert(n >= 0 && n <= b - a, "%s: %d items", what, n);
    for (int i = 0; i < n; i++) {
      cr_assert(items[i].id >= a && items[i].id < b, "%s", what);
      cr_assert(0 <= items[i].k0 && items[i].k0 <= items[i].k1 && items[i].k1 <= K, "%s", what);
      if (!pp_layer_split_narrow(s)) cr_assert(items[i].k0 == 0 && items[i].k1 == K, "%s: wide", what);
      for (int k = items[i].k0; k <= items[i].k1; k++)
        seen[(size_t)(items[i].id - a) * (size_t)(K + 1) + (size_t)k]++;
    }
  }
  for (size_t x = 0; x < (size_t)(b - a) * (size_t)(K + 1); x++)
    cr_assert_eq(seen[x], 1, "%s: cell %zu", what, x);
  free(seen);
  free(items);
}

Test(split, covers_every_cell_once) {
  tu_rng r = {11};
  for (int it = 0; it < 200; it++) {
    layer_case lc = random_case(&r, tu_int(&r, 1, 5), 0);
    const pp_problem p = lc.p;
    int P = tu_int(&r, 1, 9), m = tu_int(&r, 1, 30);
    double work[40];
    random_work(&r, work);
    pp_layer_split *s = pp_layer_split_new(lc.g, &p, P);
    char what[64];
    snprintf(what, sizeof what, "it %d (P %d, %d downsets, K %d)", it, P, m, p.devices);
    check_cover(s, work, 3, 3 + m, p.devices, P, what);
    cr_assert_eq(pp_layer_split_narrow(s), !(m >= 2 * P || P == 1), "%s", what);
    /* after a rebalance by made-up times, still a partition */
    double secs[9];
    for (int q = 0; q < P; q++) secs[q] = tu_int(&r, 1, 100) * 0.01;
    pp_layer_split_rebalance(s, secs);
    check_cover(s, work, 3, 3 + m, p.devices, P, what);
    pp_layer_split_free(s);
    case_free(&lc);
  }
}

/* The segment of item i. */
static int seg_of(const int *seg, int members, int i) {
  int j = 0;
  while (j + 1 < members && seg[j + 1] <= i) j++;
  return j;
}

/* Whether item a comes before item b in id and k order. */
static int precedes(const pp_layer_item *a, const pp_layer_item *b) {
  return a->id < b->id || (a->id == b->id && a->k1 < b->k0);
}

/* The groups' shared lists cover every (id, k) once, within the stated room. */
Test(split, shared_lists_cover_every_cell_once) {
  tu_rng r = {12};
  for (int it = 0; it < 200; it++) {
    layer_case lc = random_case(&r, tu_int(&r, 1, 5), 0);
    const int G = tu_int(&r, 1, 4), members = tu_int(&r, 1, 6), m = tu_int(&r, 1, 30), K = lc.p.devices;
    double work[40];
    random_work(&r, work);
    pp_layer_split *s = pp_layer_split_new(lc.g, &lc.p, G);
    int *seen = calloc((size_t)m * (size_t)(K + 1), sizeof(int));
    pp_layer_item *items = malloc(sizeof *items * (size_t)(m + 4 * members));
    int seg[8];
    for (int grp = 0; grp < G; grp++) {
      const int n = pp_layer_split_shared(s, work, 3, 3 + m, grp, members, items, seg);
      cr_assert(n >= 0 && n <= m + 4 * members, "it %d: %d items", it, n);
      cr_assert(seg[0] == 0 && seg[members] == n, "it %d: segments end to end", it);
      for (int j = 0; j < members; j++) cr_assert_leq(seg[j], seg[j + 1], "it %d: segment %d", it, j);
      /* a long list in id and k order; a short one segment after segment (every item of the
       * earlier segments before each item) */
      const int long_list = n > 4 * members;
      for (int i = 1; i < n; i++)
        for (int x = long_list ? i - 1 : 0; x < (long_list ? i : seg[seg_of(seg, members, i)]); x++)
          cr_assert(precedes(&items[x], &items[i]), "it %d: items %d and %d out of order", it, x, i);
      for (int i = 0; i < n; i++) {
        cr_assert(items[i].id >= 3 && items[i].id < 3 + m && 0 <= items[i].k0 && items[i].k0 <= items[i].k1 &&
                  items[i].k1 <= K);
        for (int k = items[i].k0; k <= items[i].k1; k++)
          seen[(size_t)(items[i].id - 3) * (size_t)(K + 1) + k]++;
      }
    }
    for (size_t x = 0; x < (size_t)m * (size_t)(K + 1); x++)
      cr_assert_eq(seen[x], 1, "it %d (G %d, members %d, %d downsets, K %d): cell %zu", it, G, members, m, K,
                   x);
    free(seen);
    free(items);
    pp_layer_split_free(s);
    case_free(&lc);
  }
}

/* Segments of about equal estimated work, in id order: equal downsets
 * evenly; an item goes where the middle of its work falls. */
Test(split, shared_segments_share_the_estimated_work) {
  layer_case lc = one_node_case(0, 0);
  pp_layer_split *s = pp_layer_split_new(lc.g, &lc.p, 1);
  const double even[9] = {5, 5, 5, 5, 5, 5, 5, 5, 5}, heavy[9] = {1, 1, 40, 1, 1, 1, 1, 1, 1};
  pp_layer_item it[64];
  int seg[5];
  cr_assert_eq(pp_layer_split_shared(s, even, 0, 8, 0, 2, it, seg), 8);
  cr_assert(seg[0] == 0 && seg[1] == 4 && seg[2] == 8, "%d %d %d", seg[0], seg[1], seg[2]);
  cr_assert_eq(pp_layer_split_shared(s, even, 0, 9, 0, 3, it, seg), 9);
  cr_assert(seg[1] == 3 && seg[2] == 6 && seg[3] == 9, "%d %d %d", seg[1], seg[2], seg[3]);
  for (int i = 0; i < 9; i++) cr_assert_eq(it[i].id, i);
  /* (K = 4, and 9 downsets for 2 members: none cut) the middle of the
   * heavy one's work (22 of 48) falls in the first half */
  cr_assert_eq(pp_layer_split_shared(s, heavy, 0, 9, 0, 2, it, seg), 9);
  cr_assert(seg[0] == 0 && seg[1] == 3 && seg[2] == 9, "%d %d %d", seg[0], seg[1], seg[2]);
  pp_layer_split_free(s);
  case_free(&lc);
}

/* Items are cut only as far as the members need: one downset in as many
 * k-ranges as members; several downsets (whose estimates may be far off)
 * in at least three items per member, eight among two left whole. */
static int shared_count(const pp_graph *g, const pp_problem *p, const double *work, int m, int members) {
  pp_layer_split *s = pp_layer_split_new(g, p, 1);
  pp_layer_item items[64];
  int seg[8];
  const int n = pp_layer_split_shared(s, work, 0, m, 0, members, items, seg);
  int cuts = 0;
  for (int i = 0; i < n; i++) cuts += items[i].k0 != 0;
  pp_layer_split_free(s);
  cr_assert_eq(n, m + cuts, "%d downsets, %d members: %d items, %d cuts", m, members, n, cuts);
  return n;
}

Test(split, shared_lists_cut_only_as_far_as_needed) {
  tu_spec *sp = tu_spec_new(1);
  tu_tmpc_add(sp, 0, 1, "vanilla", 1, 0, 0, 1);
  sp->devices = 64;
  pp_graph *g = tu_load(sp);
  pp_problem p = tu_problem(sp);
  const double work[8] = {100, 100, 100, 100, 100, 100, 100, 100};
  cr_assert_eq(shared_count(g, &p, work, 1, 1), 1);
  cr_assert_eq(shared_count(g, &p, work, 1, 2), 2);
  cr_assert_eq(shared_count(g, &p, work, 1, 3), 3);
  cr_assert_eq(shared_count(g, &p, work, 2, 2), 6);
  cr_assert_eq(shared_count(g, &p, work, 3, 2), 6);
  cr_assert_eq(shared_count(g, &p, work, 8, 2), 8);
  const double skewed[2] = {60, 40};
  cr_assert_geq(shared_count(g, &p, skewed, 2, 2), 6);
  pp_graph_free(g);
  free(sp);
}

/* A short list: each segment heaviest first.  Two equal downsets among two
 * members are cut into three k-ranges each, the top one holding half the
 * estimated work: each member starts with its downset's top range. */
Test(split, short_lists_put_each_segments_heaviest_first) {
  layer_case lc = one_node_case(64, 0);
  pp_layer_split *s = pp_layer_split_new(lc.g, &lc.p, 1);
  const double work[2] = {100, 100};
  pp_layer_item it[16];
  int seg[3];
  const int n = pp_layer_split_shared(s, work, 0, 2, 0, 2, it, seg);
  cr_assert_eq(n, 6);
  cr_assert(seg[0] == 0 && seg[1] == 3 && seg[2] == 6, "%d %d %d", seg[0], seg[1], seg[2]);
  for (int j = 0; j < 2; j++) {
    cr_assert(it[seg[j]].id == j && it[seg[j]].k1 == 64 && it[seg[j]].k0 > 0,
              "segment %d starts with %d %d..%d", j, it[seg[j]].id, it[seg[j]].k0, it[seg[j]].k1);
    for (int i = seg[j] + 1; i < seg[j + 1]; i++)
      cr_assert(it[i].id == j && it[i].k1 - it[i].k0 <= it[seg[j]].k1 - it[seg[j]].k0);
  }
  pp_layer_split_free(s);
  case_free(&lc);
}

Test(split, wide_layers_go_heaviest_first_to_the_least_loaded) {
  layer_case lc = one_node_case(0, 0);
  pp_layer_split *s = pp_layer_split_new(lc.g, &lc.p, 2);
  const double work[4] = {10, 1, 7, 4}; /* ids 0..3 */
  pp_layer_item it[4];
  /* 10 -> 0, 7 -> 1, 4 -> 1 (load 8 < 11), 1 -> 0 (11 vs 13) */
  int n = pp_layer_split_items(s, work, 0, 4, 0, it);
  cr_assert_eq(n, 2);
  cr_assert_eq(it[0].id, 0);
  cr_assert_eq(it[1].id, 1);
  n = pp_layer_split_items(s, work, 0, 4, 1, it);
  cr_assert_eq(n, 2);
  cr_assert_eq(it[0].id, 2);
  cr_assert_eq(it[1].id, 3);
  pp_layer_split_free(s);
  case_free(&lc);
}

Test(split, rebalance_moves_budgets_to_the_faster_participant) {
  layer_case lc = one_node_case(100, 1);
  pp_layer_split *s = pp_layer_split_new(lc.g, &lc.p, 2);
  const double work[1] = {1};
  pp_layer_item it[1];
  cr_assert_eq(pp_layer_split_items(s, work, 0, 1, 1, it), 1);
  const int before = it[0].k0;
  const double secs[2] = {1.0, 3.0}; /* participant 1 was slower */
  pp_layer_split_rebalance(s, secs);
  cr_assert_eq(pp_layer_split_items(s, work, 0, 1, 1, it), 1);
  cr_assert_gt(it[0].k0, before, "participant 1 should start later: %d vs %d", it[0].k0, before);
  cr_assert_eq(it[0].k1, 100);
  pp_layer_split_free(s);
  case_free(&lc);
}

/* Within a node: the member of the lower k-range was slower, so the next
 * list cuts the downset lower; overlapping or missing ranges, or a layer
 * under 2 ms of CPU, teach nothing. */
Test(split, learn_moves_the_cut_to_the_slower_members_range) {
  layer_case lc = one_node_case(100, 1);
  pp_layer_split *s = pp_layer_split_new(lc.g, &lc.p, 1);
  const double work[1] = {1};
  pp_layer_item it[8];
  int seg[3];
  cr_assert_eq(pp_layer_split_shared(s, work, 0, 1, 0, 2, it, seg), 2);
  const int cut = it[0].k0 > it[1].k0 ? it[0].k0 : it[1].k0;
  pp_layer_report rep[2] = {{0, 0, 1.0, 0, cut - 1, 3.0}, {0, 0, 1.0, cut, 100, 1.0}};
  pp_layer_report overlap[2] = {{0, 0, 1.0, 0, 100, 3.0}, {0, 0, 1.0, 0, 100, 1.0}};
  pp_layer_report brief[2] = {{0, 0, 1.0, 0, cut - 1, 0.0015}, {0, 0, 1.0, cut, 100, 0.0004}}; /* 1.9 ms */
  pp_layer_split_learn(s, overlap, 2, NULL);
  pp_layer_split_learn(s, brief, 2, NULL);
  cr_assert_eq(pp_layer_split_shared(s, work, 0, 1, 0, 2, it, seg), 2);
  cr_assert_eq(it[0].k0 > it[1].k0 ? it[0].k0 : it[1].k0, cut);
  pp_layer_split_learn(s, rep, 2, NULL);
  cr_assert_eq(pp_layer_split_shared(s, work, 0, 1, 0, 2, it, seg), 2);
  const int now = it[0].k0 > it[1].k0 ? it[0].k0 : it[1].k0;
  cr_assert_lt(now, cut, "the upper range should start lower: %d vs %d", now, cut);
  pp_layer_split_free(s);
  case_free(&lc);
}

/* ---- table packing ---- */

static pp_stairs *sample_table(int k0, int k1) {
  double dense[64 * 4];
  for (int k = k0; k <= k1; k++)
    for (int x = 0; x < 4; x++) dense[(k - k0) * 4 + x] = 100.0 / (1 + k + x) + (k % 3 == 0 ? 0 : 1);
  return pp_stairs_from_dense(dense, k0, k1, 3);
}

/* A table read back whole (pp_stairs_unpack) or its last row alone
 * (pp_stairs_unpack_last: what pp_stairs_last_row gives of the table);
 * every truncation is refused, and a last row whose offsets are bad. */
Test(pack, table_round_trip_and_every_truncation_fails) {
  pp_stairs *t = sample_table(2, 9), *last = pp_stairs_last_row(t);
  pp_stairs *(*const read[2])(pp_unpack *, int *) = {pp_stairs_unpack, pp_stairs_unpack_last};
  const pp_stairs *want[2] = {t, last};
  pp_pack w = {0};
  pp_stairs_pack(t, 17, &w);
  pp_unpack r;
  int id;
  for (int m = 0; m < 2; m++) {
    pp_unpack_init(&r, w.buf, w.len);
    pp_stairs *u = read[m](&r, &id);
    cr_assert_not_null(u);
    cr_assert_eq(id, 17);
    cr_assert(pp_unpack_done(&r));
    assert_same_steps(want[m], u, m ? "last row" : "round trip");
    pp_stairs_free(u);
    for (size_t cut = 0; cut < w.len; cut++) {
      pp_unpack_init(&r, w.buf, cut);
      cr_assert_null(read[m](&r, &id), "%zu of %zu bytes accepted", cut, w.len);
      cr_assert(!pp_unpack_ok(&r));
    }
  }
  /* the last row's start past the steps */
  const size_t at = 4 * sizeof(int32_t) + sizeof(int64_t) + sizeof(int) * (2 * (size_t)t->n_rows - 1);
  const int32_t past = t->row_start[t->n_rows] + 1;
  memcpy(w.buf + at, &past, sizeof past);
  pp_unpack_init(&r, w.buf, w.len);
  cr_assert_null(pp_stairs_unpack_last(&r, &id));
  pp_pack_free(&w);
  pp_stairs_free(t);
  pp_stairs_free(last);
}

Test(pack, malformed_tables_are_refused) {
  pp_stairs *t = sample_table(0, 5);
  pp_pack w = {0};
  pp_stairs_pack(t, 1, &w);
  const size_t head = 4 * sizeof(int32_t) + sizeof(int64_t);
  /* each corruption: (byte offset of an int, value) */
  const struct {
    size_t off;
    int32_t v;
  } bad[] = {
      {sizeof(int32_t) * 3, 0},                               /* no rows */
      {sizeof(int32_t) * 3, 1 << 30},                         /* more rows than bytes */
      {sizeof(int32_t) * 2, -1},                              /* k_last < k_first */
      {head, 1},                                              /* row_k[0] != k_first */
      {head + sizeof(int) * (size_t)t->n_rows, 1},            /* row_start[0] != 0 */
      {head + sizeof(int) * (size_t)(2 * t->n_rows + 1), -5}, /* a step at s < 0 */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *copy = malloc(w.len);
    memcpy(copy, w.buf, w.len);
    memcpy(copy + bad[i].off, &bad[i].v, sizeof bad[i].v);
    pp_unpack r;
    pp_unpack_init(&r, copy, w.len);
    int id;
    pp_stairs *u = pp_stairs_unpack(&r, &id);
    cr_assert_null(u, "corruption %zu accepted", i);
    free(copy);
  }
  int64_t huge = (int64_t)1 << 40; /* step count */
  char *copy = malloc(w.len);
  memcpy(copy, w.buf, w.len);
  memcpy(copy + 4 * sizeof(int32_t), &huge, sizeof huge);
  pp_unpack r;
  pp_unpack_init(&r, copy, w.len);
  int id;
  cr_assert_null(pp_stairs_unpack(&r, &id));
  free(copy);
  pp_pack_free(&w);
  pp_stairs_free(t);
}

/* ---- install ---- */

typedef struct sunk {
  int n, ids[16];
  pp_stairs *t[16];
} sunk;

static pp_status sink_keep(void *user, int id, pp_stairs *t, pp_error *err) {
  sunk *s = user;
  s->ids[s->n] = id;
  s->t[s->n++] = t;
  return PP_OK;
}

static void sunk_free(sunk *s) {
  for (int i = 0; i < s->n; i++) pp_stairs_free(s->t[i]);
}

/* Parts of downsets 5, 6, 7 over k = 0..9, cut at the given points, packed
 * in a scrambled order. */
static void pack_parts(pp_pack *w, int skip_id, int overlap) {
  const int cuts[] = {0, 4, 7, 10};
  for (int q = 2; q >= 0; q--)
    for (int id = 7; id >= 5; id--) {
      if (id == skip_id) continue;
      int k0 = cuts[q] - (overlap && q == 1 && id == 6), k1 = cuts[q + 1] - 1;
      double dense[10 * 4];
      for (int k = k0; k <= k1; k++)
        for (int x = 0; x < 4; x++) dense[(k - k0) * 4 + x] = (double)(id * 100) / (1 + k + x);
      pp_stairs *t = pp_stairs_from_dense(dense, k0, k1, 3);
      pp_stairs_pack(t, id, w);
      pp_stairs_free(t);
    }
}

Test(install, joins_parts_in_k_order_and_sinks_by_id) {
  pp_pack w = {0};
  pack_parts(&w, -1, 0);
  sunk s = {0};
  pp_error err = {0};
  cr_assert_eq(pp_layer_install(w.buf, w.len, 5, 8, 9, NULL, sink_keep, &s, PP_ERR_INTERNAL, "test", &err),
               PP_OK, "%s", err.msg);
  cr_assert_eq(s.n, 3);
  for (int i = 0; i < 3; i++) {
    cr_assert_eq(s.ids[i], 5 + i);
    double dense[10 * 4];
    for (int k = 0; k <= 9; k++)
      for (int x = 0; x < 4; x++) dense[k * 4 + x] = (double)(s.ids[i] * 100) / (1 + k + x);
    pp_stairs *whole = pp_stairs_from_dense(dense, 0, 9, 3);
    assert_same_steps(whole, s.t[i], "joined");
    pp_stairs_free(whole);
  }
  sunk_free(&s);
  pp_pack_free(&w);
}

Test(install, refuses_missing_foreign_overlapping_and_truncated_parts) {
  pp_error err = {0};
  struct {
    int skip, overlap, a, b, K;
    size_t cut;
    const char *msg;
  } cases[] = {
      {6, 0, 5, 8, 9, 0, "no table for downset 6"},
      {7, 0, 5, 8, 9, 0, "no table for downset 7"},
      {-1, 0, 5, 7, 9, 0, "outside 5..6"},
      {-1, 1, 5, 8, 9, 0, "do not cover k = 0..9 once"},
      {-1, 0, 5, 8, 12, 0, "do not cover k = 0..12 once"},
      {-1, 0, 5, 8, 9, 7, "malformed table data"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    pp_pack w = {0};
    pack_parts(&w, cases[i].skip, cases[i].overlap);
    sunk s = {0};
    size_t len = cases[i].cut ? w.len - cases[i].cut : w.len;
    pp_status st = pp_layer_install(w.buf, len, cases[i].a, cases[i].b, cases[i].K, NULL, sink_keep, &s,
                                    PP_ERR_INPUT, "ckpt.h5", &err);
    cr_assert_eq(st, PP_ERR_INPUT, "case %zu", i);
    cr_assert(strstr(err.msg, cases[i].msg) && strncmp(err.msg, "ckpt.h5: ", 9) == 0, "case %zu: %s", i,
              err.msg);
    sunk_free(&s);
    pp_pack_free(&w);
  }
}

/* Parts of downsets 5, 6, 7 over k = 0..K (K < 16) cut at every budget of
 * cuts[], values that stop falling in k from budget flat on (so that later
 * parts repeat the seam and their pieces hold no row) and, from budget rise
 * on, are higher at s >= 2 (so that the seam lowers the later parts' rows
 * there), scrambled. */
static void pack_flat_parts(pp_pack *w, pp_pack *tails, const int *cuts, int n_cuts, int K, int flat,
                            int rise) {
  for (int q = n_cuts; q >= 0; q--)
    for (int id = 7; id >= 5; id--) {
      const int k0 = q == 0 ? 0 : cuts[q - 1], k1 = q == n_cuts ? K : cuts[q] - 1;
      double dense[16 * 4];
      for (int k = k0; k <= k1; k++)
        for (int x = 0; x < 4; x++)
          dense[(k - k0) * 4 + x] =
              (double)(id * 100) / (1 + (k < flat ? k : flat) + x) + (k >= rise && x >= 2 ? 1000 : 0);
      pp_stairs *t = pp_stairs_from_dense(dense, k0, k1, 3);
      pp_stairs_pack(t, id, w);
      if (tails) pp_stairs_pack_tail(t, id, tails);
      pp_stairs_free(t);
    }
}

/* For 1-4 installers: the parts cut among them cover all in order, and the
 * pieces of every part, written side by side into flat blocks, make the
 * blocks of the tables one install joins (rows, steps and fresh index). */
static void check_pieces(const pp_pack *w, int K, int *n_seamless, int *n_seamed) {
  pp_error err = {0};
  int n = 0;
  pp_layer_part *parts = pp_layer_parts(w->buf, w->len, 5, 8, K, &n, PP_ERR_INTERNAL, "test", &err);
  cr_assert_not_null(parts, "%s", err.msg);
  sunk s = {0};
  cr_assert_eq(pp_layer_install(w->buf, w->len, 5, 8, K, NULL, sink_keep, &s, PP_ERR_INTERNAL, "t", &err),
               PP_OK);
  for (int P = 1; P <= 4; P++) {
    int cut[5];
    pp_layer_part_cuts(parts, n, P, cut);
    cr_assert(cut[0] == 0 && cut[P] == n, "P %d", P);
    for (int q = 0; q < P; q++) cr_assert_leq(cut[q], cut[q + 1]);
  }
  for (int x = 0; x < 3; x++) {
    pp_stairs *piece[8];
    int skip[8], m = 0, first = 0;
    while (parts[first].id != 5 + x) first++;
    pp_flat_counts all = {0, 0, 0}, before[8];
    for (int i = first; i < n && parts[i].id == 5 + x; i++, m++) {
      piece[m] = pp_layer_piece(w->buf, parts, i, NULL, &skip[m], PP_ERR_INTERNAL, "t", &err);
      cr_assert_not_null(piece[m], "%s", err.msg);
      /* (a later part's row 0 is the seam, unless the seam lowers none of its rows) */
      cr_assert(skip[m] == 0 || parts[i].k_first > 0);
      *n_seamless += parts[i].k_first > 0 && skip[m] == 0;
      *n_seamed += skip[m];
      const pp_flat_counts c = pp_stairs_flat_counts(piece[m], skip[m]);
      before[m] = all;
      all = (pp_flat_counts){all.rows + c.rows, all.steps + c.steps, all.fresh + c.fresh};
    }
    char *block = calloc(1, pp_stairs_flat_size(all));
    for (int i = m - 1; i >= 0; i--) /* any order */
      pp_stairs_flat_write_rows(piece[i], skip[i], block, 0, K, all, before[i], i == 0, i == m - 1);
    /* the same pieces as spans copied by the kernel, all at once: the same bytes */
    char *block2 = calloc(1, pp_stairs_flat_size(all));
    pp_span spans[8 * PP_FLAT_SPANS];
    int *scratch[8], n_spans = 0;
    for (int i = 0; i < m; i++) {
      scratch[i] = malloc(sizeof(int) * pp_stairs_flat_scratch_ints(piece[i], skip[i]));
      n_spans += pp_stairs_flat_spans(piece[i], skip[i], block2, 0, K, all, before[i], i == 0, i == m - 1,
                                      scratch[i], spans + n_spans);
    }
    pp_pages_copy(spans, n_spans, 1);
    cr_assert_eq(memcmp(block, block2, pp_stairs_flat_size(all)), 0, "spans and write_rows differ");
    for (int i = 0; i < m; i++) free(scratch[i]);
    free(block2);
    pp_stairs view, *whole = s.t[x];
    pp_stairs_flat_view(block, &view);
    pp_stairs_index_fresh(whole);
    assert_same_steps(whole, &view, "pieces");
    for (int r = 0; r <= whole->n_rows; r++) cr_assert_eq(whole->fresh_start[r], view.fresh_start[r]);
    for (int j = 0; j < whole->fresh_start[whole->n_rows]; j++) cr_assert_eq(whole->fresh[j], view.fresh[j]);
    for (int i = 0; i < m; i++) pp_stairs_free(piece[i]);
    free(block);
  }
  sunk_free(&s);
  free(parts);
}

Test(install, pieces_of_parts_written_side_by_side_make_the_joined_tables) {
  const struct {
    int cuts[4], n_cuts, K, flat, rise;
  } cases[] = {
      {{4, 7}, 2, 9, 99, 99}, /* falling everywhere */
      {{4, 7}, 2, 9, 2, 99},  /* flat from k = 2: the later parts add no row */
      {{4, 7}, 2, 9, 99, 4},  /* higher from k = 4 on at s >= 2: the seam lowers the later parts there */
      {{4, 7}, 2, 9, 99, 5},  /* higher from k = 5, inside the second part */
      {{1, 2, 3, 4}, 4, 15, 6, 99}, {{1, 2, 3, 4}, 4, 15, 6, 3}, {{8}, 1, 15, 8, 99}, {{0}, 0, 5, 3, 99},
  };
  int n_seamless = 0, n_seamed = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    pp_pack w = {0};
    pack_flat_parts(&w, NULL, cases[c].cuts, cases[c].n_cuts, cases[c].K, cases[c].flat, cases[c].rise);
    check_pieces(&w, cases[c].K, &n_seamless, &n_seamed);
    pp_pack_free(&w);
  }
  cr_assert(n_seamless > 0 && n_seamed > 0, "both kinds of pieces: %d without the seam, %d with", n_seamless,
            n_seamed);
  /* a bad record is the installer's error, named */
  pp_pack w = {0};
  pack_parts(&w, -1, 0);
  int n = 0;
  pp_error err = {0};
  pp_layer_part *parts = pp_layer_parts(w.buf, w.len, 5, 8, 9, &n, PP_ERR_INTERNAL, "t", &err);
  cr_assert_not_null(parts);
  int64_t bad = -1; /* the first record's step count */
  memcpy(w.buf + parts[0].at + 4 * sizeof(int32_t), &bad, sizeof bad);
  int skip;
  cr_assert_null(pp_layer_piece(w.buf, parts, 1, NULL, &skip, PP_ERR_INPUT, "t", &err));
  cr_assert(strstr(err.msg, "malformed table data for downset 5"), "%s", err.msg);
  free(parts);
  pp_pack_free(&w);
}

/* Participants that share memory exchange only their parts' tails
 * (pp_stairs_pack_tail) and keep the parts: the tails name the same parts,
 * give the same last rows, and with the kept tables make the same pieces
 * (pp_layer_piece_of) as the whole records. */
Test(install, tails_and_kept_parts_make_the_pieces_of_whole_records) {
  const struct {
    int cuts[4], n_cuts, K, flat, rise;
  } cases[] = {{{4, 7}, 2, 9, 99, 99},       {{4, 7}, 2, 9, 2, 99}, {{4, 7}, 2, 9, 99, 4},
               {{1, 2, 3, 4}, 4, 15, 6, 99}, {{8}, 1, 15, 8, 99},   {{0}, 0, 5, 3, 99}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    pp_pack w = {0}, wt = {0};
    pack_flat_parts(&w, &wt, cases[c].cuts, cases[c].n_cuts, cases[c].K, cases[c].flat, cases[c].rise);
    cr_assert_lt(wt.len, w.len);
    pp_error err = {0};
    int n = 0, nt = 0;
    pp_layer_part *parts = pp_layer_parts(w.buf, w.len, 5, 8, cases[c].K, &n, PP_ERR_INTERNAL, "t", &err);
    pp_layer_part *tparts = pp_layer_parts(wt.buf, wt.len, 5, 8, cases[c].K, &nt, PP_ERR_INTERNAL, "t", &err);
    cr_assert(parts && tparts, "%s", err.msg);
    cr_assert_eq(n, nt);
    for (int i = 0; i < n; i++) {
      cr_assert(parts[i].id == tparts[i].id && parts[i].k_first == tparts[i].k_first &&
                parts[i].k_last == tparts[i].k_last);
      cr_assert_eq(pp_layer_part_index(tparts, nt, parts[i].id, parts[i].k_first), i);
      pp_unpack r, rt;
      pp_unpack_init(&r, w.buf + parts[i].at, parts[i].bytes);
      pp_unpack_init(&rt, wt.buf + tparts[i].at, tparts[i].bytes);
      int id, idt;
      pp_stairs *last = pp_stairs_unpack_last(&r, &id), *tlast = pp_stairs_unpack_last(&rt, &idt);
      cr_assert(last && tlast && id == idt);
      cr_assert(last->k_first == tlast->k_first && last->k_last == tlast->k_last);
      assert_same_steps(last, tlast, "last row");
      pp_stairs_free(last);
      pp_stairs_free(tlast);
      int skip, tskip;
      pp_stairs *piece = pp_layer_piece(w.buf, parts, i, NULL, &skip, PP_ERR_INTERNAL, "t", &err);
      pp_unpack_init(&r, w.buf + parts[i].at, parts[i].bytes);
      pp_stairs *kept = pp_stairs_unpack(&r, &id);
      pp_stairs *tpiece =
          pp_layer_piece_of(wt.buf, tparts, i, kept, NULL, &tskip, PP_ERR_INTERNAL, "t", &err);
      cr_assert(piece && tpiece, "%s", err.msg);
      cr_assert_eq(skip, tskip);
      assert_same_steps(piece, tpiece, "piece");
      pp_stairs_free(piece);
      pp_stairs_free(tpiece);
    }
    /* no part of another downset, none from a budget inside a part or past K */
    cr_assert_eq(pp_layer_part_index(parts, n, 4, 0), -1);
    cr_assert_eq(pp_layer_part_index(parts, n, 8, 0), -1);
    cr_assert_eq(pp_layer_part_index(parts, n, 5, cases[c].K + 1), -1);
    if (parts[0].k_last > 0) cr_assert_eq(pp_layer_part_index(parts, n, parts[0].id, 1), -1);
    cr_assert_eq(pp_layer_part_index(parts, 0, 5, 0), -1);
    free(parts);
    free(tparts);
    pp_pack_free(&w);
    pp_pack_free(&wt);
  }
}

/* ---- the driver with P simulated participants ---- */

/* A comm for participant me of P in one process: the exchange computes the
 * other participants' items itself (same tables, same split) and
 * concatenates every participant's bytes in order. */
typedef struct fake {
  pp_dp *dp;
  const pp_graph *g;
  const pp_problem *p;
  const pp_downsets *ds;
  int P, me;
  pp_layer_split *split;
  pp_pack all;
} fake;

static pp_status fake_exchange(void *self, int layer, const pp_layer_report *mine, const char *buf,
                               size_t len, pp_layer_report *all, const char **rbuf, size_t *rlen,
                               pp_error *err) {
  fake *f = self;
  const int a = f->ds->layer_start[layer], b = f->ds->layer_start[layer + 1];
  pp_layer_item *items = malloc(sizeof *items * (size_t)(b - a));
  f->all.len = 0;
  for (int q = 0; q < f->P; q++) {
    int n = pp_layer_split_items(f->split, pp_dp_work(f->dp), a, b, q, items);
    if (q == f->me) {
      pp_pack_bytes(&f->all, buf, len);
    } else {
      for (int i = 0; i < n; i++) {
        pp_stairs *t = pp_dp_compute_rows(f->dp, items[i].id, items[i].k0, items[i].k1);
        pp_stairs_pack(t, items[i].id, &f->all);
        pp_stairs_free(t);
      }
    }
    all[q] = (pp_layer_report){0, 0, 0.0, 1, 0, 0.0}; /* no times: no rebalancing on either side */
  }
  free(items);
  *rbuf = f->all.buf;
  *rlen = f->all.len;
  return PP_OK;
}

static pp_status fake_agree(void *self, pp_status local, pp_error *err) { return local; }

/* The driver with P simulated participants (each a rank's share of every
 * layer, the others' parts computed alongside and joined by the install):
 * the serial tables, whatever P, under each objective: the 2bw staircases
 * and the Pareto rows, whose joins differ (with virtual stages a row holds
 * only the entries of its own budget and parts follow one another). */
static void driver_parity(int schedule, unsigned seed, int n_cases) {
  tu_rng r = {seed};
  for (int it = 0; it < n_cases; it++) {
    layer_case lc = case_with(layer_spec(&r, tu_int(&r, schedule == 3 ? 2 : 1, 7)), 1, schedule);
    const pp_graph *g = lc.g;
    const pp_problem p = lc.p;
    const pp_downsets *ds = lc.ds;
    pp_error err = {0};
    pp_dp *multi = NULL;
    cr_assert_eq(pp_dp_create(g, &p, ds, 0, &multi, &err), PP_OK);
    fake f = {multi, g, &p, ds, tu_int(&r, 2, 5), 0, NULL, {0}};
    f.me = tu_int(&r, 0, f.P - 1);
    f.split = pp_layer_split_new(g, &p, f.P);
    pp_layer_comm c = {.parts = f.P, .me = f.me, .exchange = fake_exchange, .agree = fake_agree, .self = &f};
    pp_layer_stats st;
    cr_assert_eq(pp_layer_run(multi, g, &p, ds, 1, &c, NULL, &st, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(st.layers_done, ds->n_layers - 1);
    char what[64];
    for (int id = 0; id < ds->count; id++) {
      snprintf(what, sizeof what, "schedule %d, it %d, P %d, downset %d", schedule, it, f.P, id);
      assert_same_steps(pp_dp_table(lc.serial, id), pp_dp_table(multi, id), what);
      const char *why = NULL;
      cr_assert(pp_dp_table_valid(multi, id, pp_dp_table(multi, id), &why), "%s: %s", what, why);
    }
    pp_layer_split_free(f.split);
    pp_pack_free(&f.all);
    pp_dp_free(multi);
    case_free(&lc);
  }
}

Test(driver, any_number_of_participants_gives_the_serial_tables, .timeout = 300) {
  driver_parity(0, 4242, 60);
}

Test(driver, any_number_of_participants_gives_the_serial_pareto_rows, .timeout = 300) {
  driver_parity(1, 4243, 40);
  driver_parity(2, 4244, 40);
  driver_parity(3, 4245, 60);
}

/* One participant that claims every item of its group's lists itself (as
 * if the other members never came): the serial tables; and a stop request
 * in the middle of a layer abandons it, with layer_done for the layer
 * before it. */
typedef struct claimer {
  long long front[64][4], back[64][4]; /* items taken from each end of each layer's segments */
  int polls, stop_after;               /* poll says stop from call stop_after on (0: never) */
  int done_layer, done_stopping;
  int from_back; /* items taken from a segment's back */
} claimer;

static long long claim_all(void *self, int layer, int segment, long long len, int back) {
  claimer *c = self;
  cr_assert(layer >= 0 && layer < 64 && segment >= 0 && segment < 4 && len > 0);
  if (c->front[layer][segment] + c->back[layer][segment] >= len) return -1;
  c->from_back += back;
  return back ? c->back[layer][segment]++ : c->front[layer][segment]++;
}

static int poll_count(void *user) {
  claimer *c = user;
  c->polls++;
  return c->stop_after > 0 && c->polls >= c->stop_after;
}

static pp_status note_done(void *user, int layer, int stopping, pp_error *err) {
  claimer *c = user;
  c->done_layer = layer;
  c->done_stopping = stopping;
  return PP_OK;
}

Test(driver, claimed_items_give_the_serial_tables_and_a_stop_abandons_the_layer, .timeout = 300) {
  tu_rng r = {777};
  int from_back = 0; /* items taken from the other members' segments, over all cases */
  for (int it = 0; it < 40; it++) {
    layer_case lc = random_case(&r, tu_int(&r, 2, 7), 1);
    const pp_graph *g = lc.g;
    const pp_problem p = lc.p;
    const pp_downsets *ds = lc.ds;
    const pp_dp *serial = lc.serial;
    pp_error err = {0};
    cr_assert_leq(ds->n_layers, 60, "the claim counters hold 64 layers");
    pp_dp *multi = NULL, *stopped = NULL;
    cr_assert_eq(pp_dp_create(g, &p, ds, 0, &multi, &err), PP_OK);
    cr_assert_eq(pp_dp_create(g, &p, ds, 0, &stopped, &err), PP_OK);
    const int group_of[1] = {0};
    claimer cl = {{{0}}, {{0}}, 0, 0, -1, -1, 0};
    pp_layer_comm c = pp_layer_serial();
    c.claim = claim_all;
    c.groups = 1;
    c.group = 0;
    c.members = tu_int(&r, 2, 4);
    c.group_of = group_of;
    c.self = &cl;
    pp_layer_hooks h = {.poll = poll_count, .poll_user = &cl, .layer_done = note_done, .layer_user = &cl};
    pp_layer_stats st;
    cr_assert_eq(pp_layer_run(multi, g, &p, ds, 1, &c, &h, &st, &err), PP_OK, "%s", err.msg);
    from_back += cl.from_back;
    char what[64];
    for (int id = 0; id < ds->count; id++) {
      snprintf(what, sizeof what, "it %d, downset %d", it, id);
      assert_same_steps(pp_dp_table(serial, id), pp_dp_table(multi, id), what);
    }
    /* a stop after some polls: the layer it falls in is abandoned */
    claimer c2 = {{{0}}, {{0}}, 0, tu_int(&r, 1, cl.polls), -1, -1, 0};
    c.self = &c2;
    h.poll_user = &c2;
    h.layer_user = &c2;
    const pp_status s2 = pp_layer_run(stopped, g, &p, ds, 1, &c, &h, &st, &err);
    if (s2 != PP_OK) { /* (the last polls fall after the last layer's items: it completes) */
      cr_assert_eq(s2, PP_ERR_INTERRUPTED, "%s", err.msg);
      cr_assert_eq(c2.done_layer, st.layers_done, "layer_done for the last completed layer");
      cr_assert_eq(c2.done_stopping, 1);
      /* a stop seen after the layer's items completes the layer first */
      const int lost = st.layers_done + 1;
      if (!strstr(err.msg, "(abandoned")) {
        cr_assert(strstr(err.msg, "after layer") != NULL, "%s", err.msg);
        goto done;
      }
      for (int id = ds->layer_start[lost]; id < ds->layer_start[lost + 1]; id++)
        cr_assert_null(pp_dp_table(stopped, id), "downset %d of the abandoned layer %d is not set", id, lost);
      for (int id = 1; id < ds->layer_start[lost]; id++)
        assert_same_steps(pp_dp_table(serial, id), pp_dp_table(stopped, id), "completed layers");
    }
  done:
    pp_dp_free(multi);
    pp_dp_free(stopped);
    case_free(&lc);
  }
  cr_assert_gt(from_back, 0, "the participant also took the other members' segments, from their backs");
}

/* With virtual stages a row holds only the entries that land at its own
 * budget p t d; a table whose entries sit in another row (as the older
 * whole rows had them) is refused by the check of tables read back. */
Test(tables, virtual_stage_rows_out_of_their_budget_are_refused) {
  tu_rng r = {99};
  int checked = 0;
  for (int it = 0; it < 200 && checked < 10; it++) {
    layer_case lc = case_with(layer_spec(&r, tu_int(&r, 2, 6)), 1, 3);
    const int full = lc.ds->count - 1;
    const pp_stairs *t = pp_dp_table(lc.serial, full);
    const char *why = NULL;
    cr_assert(pp_dp_table_valid(lc.serial, full, t, &why), "%s", why);
    if (t->n_rows >= 2 && (t->n_rows == 2 ? t->k_last : t->row_k[2] - 1) > t->row_k[1]) {
      const int zero = 0;
      pp_stairs *moved = pp_stairs_concat(&t, &zero, 1, t->k_first, t->k_last);
      moved->row_k[1]++; /* row 1's entries one budget late */
      cr_assert_not(pp_dp_table_valid(lc.serial, full, moved, &why));
      cr_assert(strstr(why, "not in the row of its budget"), "%s", why);
      moved->row_k[1]--;
      cr_assert(pp_dp_table_valid(lc.serial, full, moved, &why), "%s", why);
      pp_stairs_free(moved);
      checked++;
    }
    case_free(&lc);
  }
  cr_assert_geq(checked, 10);
}
