/*
 * fuzz_archive.c - libFuzzer target: the archive reader on arbitrary bytes,
 * along the paths of `piper show` (the stored plan, checked), `piper show
 * --devices k` (a plan rebuilt from the tables, checked) and, for a file the
 * reader takes, `piper collect` (a study's row).  The bytes go to a
 * temporary file (HDF5 opens by name).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "piper/archive.h"
#include "piper/check.h"

static char path[64];

static void remove_file(void) { unlink(path); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!path[0]) {
    snprintf(path, sizeof path, "/tmp/piper-fuzz-archive-%d.h5", (int)getpid());
    atexit(remove_file);
  }
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  pp_archive *a = NULL;
  pp_error err = {0};
  if (pp_archive_open(path, &a, &err) != PP_OK) return 0;
  pp_plan *plan = NULL;
  pp_problem p = *pp_archive_problem(a);
  if (pp_archive_read_plan(a, &plan, &err) == PP_OK && plan->feasible && pp_archive_dp(a))
    pp_check_plan_optimum(pp_archive_graph(a), &p, plan, pp_dp_optimum(pp_archive_dp(a), p.devices), &err);
  pp_plan_free(plan);
  plan = NULL;
  if (pp_archive_dp(a)) {
    p.devices = p.devices > 3 ? 3 : p.devices;
    if (pp_dp_reconstruct(pp_archive_dp(a), p.devices, &plan, &err) == PP_OK && plan->feasible)
      pp_check_plan_optimum(pp_archive_graph(a), &p, plan, pp_dp_optimum(pp_archive_dp(a), p.devices), &err);
    pp_plan_free(plan);
  }
  pp_archive_close(a);
  pp_archive_summary row;
  (void)pp_archive_read_summary(path, &row, &err);
  return 0;
}
