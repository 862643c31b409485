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

/* What one `piper plan` run holds between its steps (pp_cmd_plan frees it). */
typedef struct plan_run {
  pp_dist *d;
  int root;
  pp_plan_args args;
  pp_graph *g;
  pp_problem prob;
  pp_downsets *ds;
  pp_dp *dp;
  pp_plan *plan;
  char *hosts;
  char archive[4096], ckpt[4200], identity[65]; /* archive "" with --no-archive */
  int first_layer;                              /* first layer computed (> 1 after --resume) */
  double t0, t_enum, t_dp, t_write;             /* start (pp_now) and seconds of the steps */
  pp_dist_stats stats;
  double bytes, exchange, rss; /* over all ranks: summed, largest, largest */
} plan_run;

/* Collective: loads the graph (rank 0 reads, all receive), makes the
 * problem from the options and its identity. */
static pp_status load_problem(plan_run *r, FILE *log, pp_error *err) {
  pp_status st;
  if ((st = pp_dist_load_graph(r->d, r->args.input, r->root ? log : NULL, &r->g, err))) return st;
  if ((st = pp_cli_make_problem(&r->args, r->g, &r->prob, err))) return st;
  const int chunks = pp_problem_chunks(&r->prob);
  if (chunks > r->g->n_nodes)
    return pp_error_set(
        err, PP_ERR_USAGE,
        "--virtual-stages %d: %s has %d nodes, too few for %d chunks on even one device group", chunks,
        r->args.input, r->g->n_nodes, chunks);
  pp_archive_identity(r->g, &r->prob, r->identity);
  return PP_OK;
}

/* Collective: the archive and checkpoint paths (none with --no-archive)
 * and the checks rank 0 makes before the search, not after it: outputs/
 * exists, an existing archive is replaced only with --force or continued
 * only with --resume and its checkpoint, the target can be written. */
static pp_status choose_archive(plan_run *r, pp_error *err) {
  const pp_plan_args *a = &r->args;
  if (a->no_archive) {
    if (a->resume)
      return pp_error_set(err, PP_ERR_USAGE,
                          "--resume needs an archive (it continues the run of --out FILE)");
    return PP_OK;
  }
  if (a->out)
    snprintf(r->archive, sizeof r->archive, "%s", a->out);
  else
    default_archive_path(a->input, &r->prob, r->archive, sizeof r->archive);
  snprintf(r->ckpt, sizeof r->ckpt, "%s.ckpt", r->archive);
  pp_status st = PP_OK;
  if (r->root) {
    if (!a->out && !file_exists("outputs") && mkdir("outputs", 0777) != 0 && errno != EEXIST)
      st = pp_error_set(err, PP_ERR_IO, "cannot create the folder outputs/: %s", strerror(errno));
    else if (file_exists(r->archive) && !a->force && !a->resume)
      st = pp_error_set(err, PP_ERR_USAGE,
                        "%s exists; use --force to overwrite it or --out to choose another file", r->archive);
    else if (a->resume && file_exists(r->archive) && !file_exists(r->ckpt) && !a->force)
      st = pp_error_set(err, PP_ERR_USAGE,
                        "%s is already complete (no checkpoint to resume); use --force to "
                        "recompute it",
                        r->archive);
    else if ((st = pp_file_probe(r->archive, err)))
      st = PP_ERR_USAGE;
  }
  return pp_dist_agree(r->d, st, err);
}

/* Collective: enumerates the downsets, creates the tables within limit
 * bytes and, with --resume, installs the checkpoint's layers. */
static pp_status prepare_tables(plan_run *r, double limit, FILE *log, pp_error *err) {
  pp_status st;
  r->t_enum = pp_now();
  if ((st = pp_plan_downsets(r->d, r->g, r->args.max_downsets, r->args.max_memory_use, limit, &r->ds, err)))
    return st;
  r->t_enum = pp_now() - r->t_enum;
  st = pp_dp_create(r->g, &r->prob, r->ds, limit, &r->dp, err);
  if ((st = pp_dist_agree(r->d, st, err))) return st;
  r->first_layer = 1;
  if (r->args.resume)
    return pp_plan_resume(r->d, r->ckpt, r->identity, &r->prob, r->dp, r->ds, log, &r->first_layer, err);
  return PP_OK;
}

/* Collective: the DP, layer by layer from r->first_layer, with progress on
 * log and checkpoints; rank 0 says on log what a stop left behind. */
static pp_status solve_layers(plan_run *r, FILE *log, pp_error *err) {
  const char *archive = r->archive;
  pp_ckpt_state cs = {.d = r->d,
                      .path = archive[0] ? r->ckpt : NULL,
                      .identity = r->identity,
                      .ds = r->ds,
                      .dp = r->dp,
                      .every = r->args.checkpoint_every_set ? r->args.checkpoint_every : 60.0,
                      .last = pp_now(),
                      .warn = r->root ? log : NULL};
  pp_progress pr;
  pp_progress_init(&pr, r->root && !r->args.quiet ? log : NULL);
  r->t_dp = pp_now();
  pp_status st = pp_dist_solve(r->d, r->dp, r->g, &r->prob, r->ds, r->first_layer, pp_progress_update, &pr,
                               pp_plan_on_layer, &cs, &r->stats, err);
  r->t_dp = pp_now() - r->t_dp;
  pp_progress_done(&pr);
  if (st == PP_ERR_INTERRUPTED && r->root && archive[0])
    fprintf(log, "piper: %s; checkpoint saved to %s; rerun with --resume to continue\n", err->msg, r->ckpt);
  else if (st == PP_ERR_INTERRUPTED && r->root)
    fprintf(log, "piper: %s; nothing saved (--no-archive)\n", err->msg);
  if (!st && r->root && pp_stop_requested(NULL))
    fprintf(log, "piper: stop requested during the last layer: finishing the run instead%s\n",
            archive[0] ? " (the archive follows)" : "");
  return st;
}

/* Collective: rank 0 (which always holds the tables) rebuilds and checks
 * the plan; every rank receives it for the archive. */
static pp_status rebuild_plan(plan_run *r, pp_error *err) {
  pp_status st = PP_OK;
  if (r->root) {
    st = pp_dp_reconstruct(r->dp, r->prob.devices, &r->plan, err);
    if (!st && r->plan->feasible)
      st = pp_check_plan_optimum(r->g, &r->prob, r->plan, pp_dp_optimum(r->dp, r->prob.devices), err);
  }
  if ((st = pp_dist_agree(r->d, st, err))) return st;
  return pp_plan_share(r->d, &r->plan, r->g->n_nodes, err);
}

/* Collective: the run's figures over all ranks; with env->debug_dist each
 * rank first prints its own on log, and the MPI settings it started with. */
static void gather_figures(plan_run *r, const pp_cmd_env *env, FILE *log) {
  if (env->debug_dist)
    fprintf(log,
            "rank %d: compute %.3f s, exchange %.3f s (install %.3f s), sent %.0f bytes, cpu %.3f s, "
            "peak_rss_kB %.0f, pss_kB %.0f, own_table_bytes %.0f, node_shared_table_bytes %.0f, "
            "OMPI_MCA_pml %s, PMIX_MCA_gds %s\n",
            pp_dist_rank(r->d), r->stats.compute_seconds, r->stats.exchange_seconds, r->stats.install_seconds,
            r->stats.bytes_sent, cpu_seconds(), proc_kb("/proc/self/status", "VmHWM:"),
            proc_kb("/proc/self/smaps_rollup", "Pss:"), pp_dp_own_bytes(r->dp), pp_dist_shared_bytes(r->d),
            env->mpi_pml ? env->mpi_pml : "(unset)", env->pmix_gds ? env->pmix_gds : "(unset)");
  r->bytes = pp_dist_sum(r->d, r->stats.bytes_received);
  r->exchange = pp_dist_max(r->d, r->stats.exchange_seconds);
  r->rss = pp_dist_max(r->d, peak_rss_bytes());
}

/* Collective: writes the archive (pp_archive_write) with the run record,
 * then rank 0 removes the checkpoint. */
static pp_status write_archive(plan_run *r, FILE *log, pp_error *err) {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  r->hosts = pp_dist_allgather_names(r->d, host, 64);
  pp_archive_content c = {.g = r->g, .p = &r->prob, .ds = r->ds, .dp = r->dp, .plan = r->plan};
  c.run = (pp_run_record){.ranks = pp_dist_size(r->d),
                          .hostnames = r->hosts,
                          .host_width = 64,
                          .seconds_enumerate = r->t_enum,
                          .seconds_dp = r->t_dp,
                          .seconds_exchange = r->exchange,
                          .seconds_total = pp_now() - r->t0,
                          .bytes_exchanged = r->bytes,
                          .peak_rss_bytes = r->rss,
                          .resumed = r->first_layer > 1};
  pp_status st;
  if ((st = pp_archive_write(r->d, r->archive, &c, &r->t_write, err))) return st;
  if (r->root && file_exists(r->ckpt)) unlink(r->ckpt);
  if (r->root && !r->args.quiet)
    fprintf(log, "piper: archive %s written in %.2f s\n", r->archive, r->t_write);
  return PP_OK;
}

/* Rank 0: the text or JSON report of the checked plan. */
static void print_report(const plan_run *r, FILE *out) {
  pp_run_info info = {.input = r->args.input,
                      .downsets = r->ds->count,
                      .pairs = pp_dp_pairs(r->dp),
                      .seconds = pp_now() - r->t0,
                      .ranks = pp_dist_size(r->d),
                      .bytes_exchanged = r->bytes,
                      .peak_rss = r->rss,
                      .archive = r->archive[0] ? r->archive : NULL,
                      .write_seconds = r->t_write};
  pp_report(out, r->args.format == PP_FORMAT_JSON, r->g, &r->prob, r->plan, &info);
}

int pp_cmd_plan(pp_dist *d, const pp_cmd_env *env, int argc, char **argv, FILE *out, FILE *log) {
  plan_run r = {.d = d, .root = pp_dist_rank(d) == 0, .t0 = pp_now()};
  const int root = r.root;
  pp_error err = {0};
  pp_status st;

  if ((st = pp_cli_parse_plan(argc, argv, &r.args, &err))) goto done;
  if (r.args.help || r.args.version) {
    if (root && r.args.help) pp_cli_help_plan(out);
    if (root && r.args.version) fprintf(out, "piper %s\n", PIPER_VERSION);
    return PP_EXIT_OK;
  }
  pp_signals_install();
  if ((st = load_problem(&r, log, &err))) goto done;
  if ((st = choose_archive(&r, &err))) goto done;
  if (r.prob.planner == PP_PLANNER_EQUI) {
    st = pp_plan_run_equi(d, &r.args, r.g, &r.prob, r.archive, r.t0, out, log, &err);
    goto done;
  }
  const double limit = r.args.max_memory_use > 0 ? r.args.max_memory_use : default_memory_use();
  if ((st = prepare_tables(&r, limit, log, &err))) goto done;
  if ((st = solve_layers(&r, log, &err))) goto done;
  if ((st = rebuild_plan(&r, &err))) goto done;
  gather_figures(&r, env, log);
  if (r.archive[0] && (st = write_archive(&r, log, &err))) goto done;
  if (root) print_report(&r, out);
  st = r.plan->feasible ? PP_OK : PP_ERR_INFEASIBLE;
done:
  if (st && st != PP_ERR_INFEASIBLE && st != PP_ERR_INTERRUPTED && root)
    fprintf(log, "piper: error: %s\n", err.msg);
  else if (st == PP_ERR_INTERRUPTED && !r.dp && root) /* before the DP: the solve did not report it */
    fprintf(log, "piper: %s\n", err.msg);
  free(r.hosts);
  pp_plan_free(r.plan);
  pp_dp_free(r.dp);
  pp_dist_release_tables(d); /* after dp, which views them */
  pp_downsets_free(r.ds);
  pp_graph_free(r.g);
  return pp_status_exit_code(st);
}
