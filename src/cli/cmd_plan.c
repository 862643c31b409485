/*
 * cmd_plan.c - `piper plan`: load, enumerate, solve (distributed), rebuild,
 * check, archive, report.  Collective: every rank runs it with the same
 * arguments; rank 0 alone prints.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "piper/archive.h"
#include "piper/check.h"
#include "cli.h"
#include "commands.h"
#include "piper/dist.h"
#include "piper/dp.h"
#include "piper/downsets.h"
#include "piper/graph.h"
#include "piper/progress.h"
#include "plan_equi.h"
#include "plan_steps.h"
#include "report.h"
#include "piper/file.h"
#include "piper/signals.h"

static double default_memory_use(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || size <= 0) return 0;
  return 0.8 * (double)pages * (double)size;
}

static double peak_rss_bytes(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (double)ru.ru_maxrss * 1024.0;
}

static double cpu_seconds(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

/* The value in kB of the line "key N kB" of a /proc file (0 if absent). */
static double proc_kb(const char *path, const char *key) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[256];
  double v = 0;
  const size_t n = strlen(key);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, key, n) == 0) {
      v = strtod(line + n, NULL);
      break;
    }
  fclose(f);
  return v;
}

static int file_exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

/* outputs/<input stem>-k<K>-n<N>.h5 */
static void default_archive_path(const char *input, const pp_problem *p, char *out, size_t n) {
  const char *base = strrchr(input, '/');
  base = base ? base + 1 : input;
  if (strcmp(input, "-") == 0) base = "stdin";
  size_t len = strlen(base);
  if (len > 5 && strcmp(base + len - 5, ".json") == 0) len -= 5;
  snprintf(out, n, "outputs/%.*s-k%d-n%d.h5", (int)len, base, p->devices, p->microbatches);
}

int pp_cmd_plan(pp_dist *d, const pp_cmd_env *env, int argc, char **argv, FILE *out, FILE *log) {
  const int root = pp_dist_rank(d) == 0;
  pp_error err = {0};
  pp_plan_args args;
  pp_graph *g = NULL;
  pp_downsets *ds = NULL;
  pp_dp *dp = NULL;
  pp_plan *plan = NULL;
  char *hosts = NULL;
  pp_status st;
  double t0 = pp_now();
  char archive[4096] = "", ckpt[4200] = "", identity[65];
  pp_ckpt_state cs = {0};
  pp_progress pr;
  double t_write = 0;

  if ((st = pp_cli_parse_plan(argc, argv, &args, &err))) goto done;
  if (args.help || args.version) {
    if (root && args.help) pp_cli_help_plan(out);
    if (root && args.version) fprintf(out, "piper %s\n", PIPER_VERSION);
    return PP_EXIT_OK;
  }
  pp_signals_install();
  if ((st = pp_dist_load_graph(d, args.input, root ? log : NULL, &g, &err))) goto done;
  pp_problem prob;
  if ((st = pp_cli_make_problem(&args, g, &prob, &err))) goto done;
  if (pp_problem_chunks(&prob) > g->n_nodes) {
    st = pp_error_set(&err, PP_ERR_USAGE,
                      "--virtual-stages %d: %s has %d nodes, too few for %d chunks on even one device group",
                      pp_problem_chunks(&prob), args.input, g->n_nodes, pp_problem_chunks(&prob));
    goto done;
  }
  pp_archive_identity(g, &prob, identity);
  if (!args.no_archive) {
    if (args.out)
      snprintf(archive, sizeof archive, "%s", args.out);
    else
      default_archive_path(args.input, &prob, archive, sizeof archive);
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", archive);
    st = PP_OK;
    if (root) {
      if (!args.out && !file_exists("outputs") && mkdir("outputs", 0777) != 0 && errno != EEXIST)
        st = pp_error_set(&err, PP_ERR_IO, "cannot create the folder outputs/: %s", strerror(errno));
      else if (file_exists(archive) && !args.force && !args.resume)
        st = pp_error_set(&err, PP_ERR_USAGE,
                          "%s exists; use --force to overwrite it or --out to choose another file", archive);
      else if (args.resume && file_exists(archive) && !file_exists(ckpt) && !args.force)
        st = pp_error_set(&err, PP_ERR_USAGE,
                          "%s is already complete (no checkpoint to resume); use --force to "
                          "recompute it",
                          archive);
      else if ((st = pp_file_probe(archive, &err))) /* before the search, not after it */
        st = PP_ERR_USAGE;
    }
    if ((st = pp_dist_agree(d, st, &err))) goto done;
  } else if (args.resume) {
    st = pp_error_set(&err, PP_ERR_USAGE, "--resume needs an archive (it continues the run of --out FILE)");
    goto done;
  }
  if (prob.planner == PP_PLANNER_EQUI) {
    st = pp_plan_run_equi(d, &args, g, &prob, archive, t0, out, log, &err);
    goto done;
  }
  double t_enum = pp_now();
  double limit = args.max_memory_use > 0 ? args.max_memory_use : default_memory_use();
  if ((st = pp_plan_downsets(d, g, args.max_downsets, args.max_memory_use, limit, &ds, &err))) goto done;
  t_enum = pp_now() - t_enum;
  st = pp_dp_create(g, &prob, ds, limit, &dp, &err);
  if ((st = pp_dist_agree(d, st, &err))) goto done;
  int first_layer = 1;
  if (args.resume && (st = pp_plan_resume(d, ckpt, identity, &prob, dp, ds, log, &first_layer, &err)))
    goto done;
  cs = (pp_ckpt_state){.d = d,
                       .path = archive[0] ? ckpt : NULL,
                       .identity = identity,
                       .ds = ds,
                       .dp = dp,
                       .every = args.checkpoint_every_set ? args.checkpoint_every : 60.0,
                       .last = pp_now(),
                       .warn = root ? log : NULL};
  pp_progress_init(&pr, root && !args.quiet ? log : NULL);
  pp_dist_stats stats;
  double t_dp = pp_now();
  st = pp_dist_solve(d, dp, g, &prob, ds, first_layer, pp_progress_update, &pr, pp_plan_on_layer, &cs, &stats,
                     &err);
  t_dp = pp_now() - t_dp;
  pp_progress_done(&pr);
  if (st == PP_ERR_INTERRUPTED && root && archive[0])
    fprintf(log, "piper: %s; checkpoint saved to %s; rerun with --resume to continue\n", err.msg, ckpt);
  else if (st == PP_ERR_INTERRUPTED && root)
    fprintf(log, "piper: %s; nothing saved (--no-archive)\n", err.msg);
  if (!st && root && pp_stop_requested(NULL))
    fprintf(log, "piper: stop requested during the last layer: finishing the run instead%s\n",
            archive[0] ? " (the archive follows)" : "");
  if (st) goto done;
  /* rank 0 (which always holds the tables) rebuilds and checks the plan;
   * every rank receives it for the archive */
  st = PP_OK;
  if (root) {
    st = pp_dp_reconstruct(dp, prob.devices, &plan, &err);
    if (!st && plan->feasible)
      st = pp_check_plan_optimum(g, &prob, plan, pp_dp_optimum(dp, prob.devices), &err);
  }
  if ((st = pp_dist_agree(d, st, &err))) goto done;
  if ((st = pp_plan_share(d, &plan, g->n_nodes, &err))) goto done;
  if (env->debug_dist)
    fprintf(log,
            "rank %d: compute %.3f s, exchange %.3f s, sent %.0f bytes, cpu %.3f s, peak_rss_kB %.0f, "
            "pss_kB %.0f, own_table_bytes %.0f, node_shared_table_bytes %.0f\n",
            pp_dist_rank(d), stats.compute_seconds, stats.exchange_seconds, stats.bytes_sent, cpu_seconds(),
            proc_kb("/proc/self/status", "VmHWM:"), proc_kb("/proc/self/smaps_rollup", "Pss:"),
            pp_dp_own_bytes(dp), pp_dist_shared_bytes(d));
  double bytes = pp_dist_sum(d, stats.bytes_received);
  double exchange = pp_dist_max(d, stats.exchange_seconds);
  double rss = pp_dist_max(d, peak_rss_bytes());
  if (archive[0]) {
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    hosts = pp_dist_allgather_names(d, host, 64);
    pp_archive_content c = {.g = g, .p = &prob, .ds = ds, .dp = dp, .plan = plan};
    c.run = (pp_run_record){.ranks = pp_dist_size(d),
                            .hostnames = hosts,
                            .host_width = 64,
                            .seconds_enumerate = t_enum,
                            .seconds_dp = t_dp,
                            .seconds_exchange = exchange,
                            .seconds_total = pp_now() - t0,
                            .bytes_exchanged = bytes,
                            .peak_rss_bytes = rss,
                            .resumed = first_layer > 1};
    if ((st = pp_archive_write(d, archive, &c, &t_write, &err))) goto done;
    if (root && file_exists(ckpt)) unlink(ckpt);
    if (root && !args.quiet) fprintf(log, "piper: archive %s written in %.2f s\n", archive, t_write);
  }
  if (root) {
    pp_run_info info = {.input = args.input,
                        .downsets = ds->count,
                        .pairs = pp_dp_pairs(dp),
                        .seconds = pp_now() - t0,
                        .ranks = pp_dist_size(d),
                        .bytes_exchanged = bytes,
                        .peak_rss = rss,
                        .archive = archive[0] ? archive : NULL,
                        .write_seconds = t_write};
    pp_report(out, args.format == PP_FORMAT_JSON, g, &prob, plan, &info);
  }
  st = plan->feasible ? PP_OK : PP_ERR_INFEASIBLE;
done:
  if (st && st != PP_ERR_INFEASIBLE && st != PP_ERR_INTERRUPTED && root)
    fprintf(log, "piper: error: %s\n", err.msg);
  else if (st == PP_ERR_INTERRUPTED && !dp && root) /* before the DP: the solve did not report it */
    fprintf(log, "piper: %s\n", err.msg);
  free(hosts);
  pp_plan_free(plan);
  pp_dp_free(dp);
  pp_dist_release_tables(d); /* after dp, which views them */
  pp_downsets_free(ds);
  pp_graph_free(g);
  return pp_status_exit_code(st);
}
