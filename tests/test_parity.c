/*
 * test_parity.c - the reference optima (shared/reference/expected.tsv)
 * reproduced through the library API: load, enumerate downsets, solve,
 * reconstruct, check.  One test per row, named after the case.
 *
 * expected.tsv columns: case, input (relative to the shared folder), devices,
 * memory_bytes, microbatches, bandwidth_bytes_per_s, flags (none, nodp, notp,
 * noar), tps or "infeasible", stages, ref_cpu_seconds.
 *
 * Without the shared folder every test is skipped, saying so.  With
 * PIPER_SKIP_SLOW=1 in the environment the rows whose reference run took
 * more than SLOW_SECONDS are skipped (for sanitizer builds).
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "piper/check.h"
#include "piper/dp.h"
#include "piper/downsets.h"
#include "piper/graph.h"

#define SLOW_SECONDS 100.0

typedef struct row {
  char name[128];
  char input[512];
  int devices;
  double memory;
  int microbatches;
  double bandwidth;
  char flags[16];
  int infeasible;
  double tps;
  int stages;
  double ref_seconds;
} row;

static const char *shared_dir(void) {
  const char *env = getenv("PIPER_SHARED_DIR");
  return env && *env ? env : PIPER_SHARED_DIR;
}

static void tsv_path(char *buf, size_t n) { snprintf(buf, n, "%s/reference/expected.tsv", shared_dir()); }

/* Parses one data line into r; returns 1 on success. */
static int parse_row(char *line, row *r) {
  char *f[10];
  int n = 0;
  for (char *p = line; n < 10;) {
    f[n++] = p;
    char *tab = strchr(p, '\t');
    if (!tab) break;
    *tab = 0;
    p = tab + 1;
  }
  if (n != 10) return 0;
  char *nl = strpbrk(f[9], "\r\n");
  if (nl) *nl = 0;
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", f[0]);
  snprintf(r->input, sizeof r->input, "%s", f[1]);
  char *end;
  r->devices = (int)strtol(f[2], &end, 10);
  if (*end) return 0;
  r->memory = strtod(f[3], &end);
  if (*end) return 0;
  r->microbatches = (int)strtol(f[4], &end, 10);
  if (*end) return 0;
  r->bandwidth = strtod(f[5], &end);
  if (*end) return 0;
  snprintf(r->flags, sizeof r->flags, "%s", f[6]);
  if (strcmp(f[7], "infeasible") == 0) {
    r->infeasible = 1;
    r->tps = INFINITY;
  } else {
    r->tps = strtod(f[7], &end);
    if (*end) return 0;
  }
  r->stages = (int)strtol(f[8], &end, 10);
  if (*end) return 0;
  r->ref_seconds = strtod(f[9], &end);
  return 1;
}

/* Reads every row (caller frees *rows); returns the count, -1 if the file
 * cannot be opened.  A malformed line fails the test. */
static int read_rows(row **rows) {
  char path[1024], line[4096];
  tsv_path(path, sizeof path);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int n = 0, cap = 16, lineno = 0;
  *rows = malloc(sizeof(row) * (size_t)cap);
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (lineno == 1 || line[0] == '\n' || line[0] == '#') continue;
    if (n == cap) *rows = realloc(*rows, sizeof(row) * (size_t)(cap *= 2));
    cr_assert(parse_row(line, &(*rows)[n]), "%s:%d: malformed line", path, lineno);
    n++;
  }
  fclose(f);
  return n;
}

/* Skips the test (saying why) if the shared folder is missing. */
static void require_shared(void) {
  char path[1024];
  tsv_path(path, sizeof path);
  if (access(path, R_OK) != 0)
    cr_skip_test("%s not found (no shared folder): reference parity not checked", path);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Plans the row through the library and compares with the reference. */
static void run_case(const char *name) {
  require_shared();
  row *rows = NULL, r;
  int n = read_rows(&rows), found = 0;
  for (int i = 0; i < n; i++)
    if (strcmp(rows[i].name, name) == 0) r = rows[i], found = 1;
  free(rows);
  cr_assert(found, "case %s is not in expected.tsv", name);
  const char *skip = getenv("PIPER_SKIP_SLOW");
  if (skip && strcmp(skip, "1") == 0 && r.ref_seconds > SLOW_SECONDS)
    cr_skip_test("%s: skipped under PIPER_SKIP_SLOW=1 (reference took %.0f s)", name, r.ref_seconds);

  char input[1200];
  snprintf(input, sizeof input, "%s/%s", shared_dir(), r.input);
  pp_graph *g = NULL;
  pp_downsets *ds = NULL;
  pp_dp *dp = NULL;
  pp_plan *plan = NULL;
  pp_error err = {0};
  double t0 = now();
  cr_assert_eq(pp_graph_load_file(input, NULL, &g, &err), PP_OK, "%s: %s", name, err.msg);
  pp_problem p;
  memset(&p, 0, sizeof p);
  p.devices = r.devices;
  p.memory = r.memory;
  p.microbatches = r.microbatches;
  p.bandwidth = r.bandwidth;
  p.knapsack = PP_KNAPSACK_GREEDY;
  if (strcmp(r.flags, "nodp") == 0)
    p.no_dp = 1;
  else if (strcmp(r.flags, "notp") == 0)
    p.no_tp = 1;
  else if (strcmp(r.flags, "noar") == 0)
    p.no_recompute = 1;
  else
    cr_assert_str_eq(r.flags, "none", "%s: unknown flags '%s'", name, r.flags);

  cr_assert_eq(pp_downsets_enumerate(g, 100000000, &ds, &err), PP_OK, "%s: %s", name, err.msg);
  cr_assert_eq(pp_dp_create(g, &p, ds, 0, &dp, &err), PP_OK, "%s: %s", name, err.msg);
  cr_assert_eq(pp_dp_solve(dp, NULL, NULL, &err), PP_OK, "%s: %s", name, err.msg);
  double opt = pp_dp_optimum(dp, p.devices);
  cr_assert_eq(pp_dp_reconstruct(dp, p.devices, &plan, &err), PP_OK, "%s: reconstruction: %s", name, err.msg);
  if (r.infeasible) {
    cr_assert(isinf(opt), "%s: the reference finds no plan, we find TPS %.17g", name, opt);
    cr_assert_eq(plan->feasible, 0, "%s", name);
    cr_assert_eq(plan->n_stages, 0, "%s", name);
  } else {
    cr_assert(!isinf(opt), "%s: infeasible, the reference's TPS is %.17g", name, r.tps);
    cr_assert(fabs(opt - r.tps) <= 1e-9 * r.tps, "%s: TPS %.17g, reference %.17g (relative difference %.3g)",
              name, opt, r.tps, fabs(opt - r.tps) / r.tps);
    cr_assert(plan->feasible, "%s: no plan rebuilt", name);
    cr_assert_eq(pp_check_plan(g, &p, plan, &err), PP_OK, "%s: the plan fails the check: %s", name, err.msg);
    cr_assert(fabs(plan->tps - opt) <= 1e-9 * opt, "%s: checked TPS %.17g differs from the optimum %.17g",
              name, plan->tps, opt);
    cr_assert_leq(plan->devices_used, p.devices, "%s", name);
    cr_assert_leq(plan->sum_d, p.microbatches, "%s", name);
  }
  /* The stage count is not compared: equal optima can have different plans. */
  cr_log_info("%s: %s, %d stages (reference %d), %d downsets, %.1f s (reference %.1f s)", name,
              r.infeasible ? "infeasible" : "same TPS", plan->n_stages, r.stages, ds->count, now() - t0,
              r.ref_seconds);
  pp_plan_free(plan);
  pp_dp_free(dp);
  pp_downsets_free(ds);
  pp_graph_free(g);
}

/* The cases of expected.tsv, one test each. */
#define PARITY_CASES(X)    \
  X(bert32_k512_m8_n1920)  \
  X(bert32_k2048_m8_n1920) \
  X(bert32_k64_m8_n512)    \
  X(bert32_k32_m2_n480)    \
  X(bert32_k8_m1_n1920)    \
  X(bert32_k128_m80_n1920) \
  X(bert32_k512_m8_nodp)   \
  X(bert32_k512_m8_notp)   \
  X(bert32_k512_m8_noar)   \
  X(gnmt_k16_m1_2)         \
  X(gnmt_k8_m0_6)          \
  X(resnet_k8_m4)          \
  X(resnet_k32_m2)

/* Case names with '.' are written with '_' in test names. */
static void case_name(const char *ident, char *out, size_t n) {
  snprintf(out, n, "%s", ident);
  if (strncmp(out, "gnmt_", 5) == 0) {
    /* gnmt_k16_m1_2 -> gnmt_k16_m1.2 */
    char *last = strrchr(out, '_');
    if (last && last > out + 5 && last[-1] >= '0' && last[-1] <= '9' && strchr(out + 5, 'm') < last)
      *last = '.';
  }
}

#define PARITY_TEST(id)                  \
  Test(parity, id, .timeout = 600) {     \
    char name_[128];                     \
    case_name(#id, name_, sizeof name_); \
    run_case(name_);                     \
  }
PARITY_CASES(PARITY_TEST)

/* Every row of the file has a test above (a new row must get one). */
Test(parity, every_row_has_a_test) {
  require_shared();
  row *rows = NULL;
  int n = read_rows(&rows);
  cr_assert_gt(n, 0, "expected.tsv has no rows");
  char known[64][128];
  int n_known = 0;
#define PARITY_NAME(id) case_name(#id, known[n_known++], sizeof known[0]);
  PARITY_CASES(PARITY_NAME)
#undef PARITY_NAME
  for (int i = 0; i < n; i++) {
    int ok = 0;
    for (int j = 0; j < n_known; j++) ok |= strcmp(rows[i].name, known[j]) == 0;
    cr_expect(ok, "row %s of expected.tsv has no test in test_parity.c", rows[i].name);
  }
  cr_assert_eq(n, n_known, "expected.tsv has %d rows, test_parity.c knows %d cases", n, n_known);
  free(rows);
}
