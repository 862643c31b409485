/*
 * cmd_sweep.c - `piper sweep GRID.tsv --out-dir DIR`: every row of a grid
 * in one program run.
 *
 * Rows that share input, memory, bandwidth, microbatches and flags form a
 * group: one DP at the group's largest device budget answers all of them
 * (pp_dp_reconstruct at each row's budget, as `piper show --devices` does),
 * and each row gets its own archive, with the tables cut to its budget
 * (pp_dp_restrict: the same tables a `piper plan` of that row writes), and
 * its printed plan.  Under MPI the ranks are split into teams
 * (pp_dist_split), the groups dealt to the teams by estimated work, largest
 * first; a team runs its groups one after the other, each over all its
 * ranks.  Team leaders tell rank 0 when a group is done (pp_dist_note_*),
 * so that rank 0's progress covers the whole grid.  What happens before
 * the run (done rows, groups, teams) is in sweep_layout.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "grid.h"
#include "piper/archive.h"
#include "piper/check.h"
#include "piper/dist.h"
#include "piper/dp.h"
#include "piper/downsets.h"
#include "piper/file.h"
#include "piper/graph.h"
#include "piper/progress.h"
#include "piper/signals.h"
#include "plan_equi.h"
#include "plan_steps.h"
#include "report.h"
#include "sweep.h"

static double default_memory_use(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? 0.8 * (double)pages * (double)size : 0;
}

static double peak_rss_bytes(void) {
  struct rusage ru;
  return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss * 1024.0 : 0;
}

/* World rank 0: takes the notes that arrived (a finished group's index, or
 * -1 when a team has finished) into the progress. */
static void take_note(sweep *s, double v) {
  if (v < 0) {
    s->finals++;
    return;
  }
  const group *g = &s->groups[(int)v];
  s->done_w += g->weight;
  s->rows_done += g->n;
}

static void progress(void *user, int layer, int n_layers, double fraction) {
  (void)layer;
  (void)n_layers;
  sweep *s = user;
  double v;
  while (pp_dist_note_poll(s->world, &v)) take_note(s, v);
  double f = s->total_w > 0 ? (s->done_w + fraction * s->cur_w) / s->total_w : 1;
  if (f > 0.999 && s->rows_done < s->rows_total) f = 0.999; /* 100% once every row is answered */
  pp_progress_update(&s->pr, s->rows_done, s->rows_total, f > 1 ? 1 : f);
}

/* The command-line arguments of `piper plan` for a row with another budget:
 * parsed by pp_cli_parse_plan, so that a group's problem is exactly what
 * `piper plan` makes of the row. */
static pp_status row_plan_args(const pp_grid_row *r, long long devices, const pp_sweep_args *a,
                               pp_plan_args *pa, char store[8][64], pp_error *err) {
  char *argv[24];
  int n = 0;
  argv[n++] = "plan";
  argv[n++] = r->input;
  snprintf(store[0], 64, "--devices=%lld", devices);
  snprintf(store[1], 64, "--memory=%.17g", r->memory);
  snprintf(store[2], 64, "--bandwidth=%.17g", r->bandwidth);
  snprintf(store[3], 64, "--microbatches=%lld", r->microbatches);
  snprintf(store[4], 64, "--max-downsets=%lld", a->max_downsets);
  for (int i = 0; i < 5; i++) argv[n++] = store[i];
  if (r->no_dp) argv[n++] = "--no-dp";
  if (r->no_tp) argv[n++] = "--no-tp";
  if (r->no_recompute) argv[n++] = "--no-recompute";
  if (a->planner == PP_PLANNER_EQUI) argv[n++] = "--planner=equi";
  if (r->zero) {
    snprintf(store[5], 64, "--zero=%d", r->zero);
    argv[n++] = store[5];
  }
  if (r->schedule) {
    snprintf(store[6], 64, "--schedule=%s", r->schedule);
    argv[n++] = store[6];
  }
  argv[n++] = "--no-archive";
  argv[n] = NULL;
  return pp_cli_parse_plan(n, argv, pa, err);
}

/* Every pending row of a group failed for the same reason. */
static void group_failed(sweep *s, const group *g, pp_status st, const pp_error *err) {
  if (pp_dist_rank(s->t) != 0) return;
  for (int i = 0; i < g->n; i++) {
    const pp_grid_row *r = &s->grid->rows[g->rows[i]];
    fprintf(s->log, "%s:%d: %s: %s\n", s->grid->path, r->line, r->name, err->msg);
  }
  s->counts[st == PP_ERR_INPUT || st == PP_ERR_USAGE ? N_BAD : N_FAILED] += g->n;
}

/* What one group's DP left for its rows. */
typedef struct solved {
  const pp_graph *g;
  const pp_problem *p; /* at the group's largest budget */
  const pp_downsets *ds;
  pp_dp *dp;
  pp_run_record run;
  double t0;
} solved;

/* What the text report of one row needs (report_to). */
typedef struct row_report {
  const pp_graph *g;
  const pp_problem *p;
  const pp_plan *plan;
  const pp_run_info *info;
} row_report;

/* pp_report in the form pp_file_write takes. */
static pp_status report_to(FILE *f, void *ctx, pp_error *err) {
  const row_report *x = ctx;
  (void)err;
  pp_report(f, 0, x->g, x->p, x->plan, x->info);
  return PP_OK;
}

/* Writes the printed plan to NAME.txt atomically (pp_file_write). */
static pp_status write_text(const sweep *s, const pp_grid_row *r, const pp_graph *g, const pp_problem *rp,
                            const pp_plan *plan, const pp_run_info *info, pp_error *err) {
  char path[4200];
  pp_sweep_out_path(s, r->name, ".txt", path, sizeof path);
  row_report x = {g, rp, plan, info};
  return pp_file_write(path, report_to, &x, err);
}

/* On the team's rank 0: counts and reports a row's outcome (st, and the
 * plan when st is PP_OK). */
static void row_outcome(sweep *s, const pp_grid_row *r, pp_status st, const pp_plan *plan,
                        const pp_error *err) {
  if (st) {
    fprintf(s->log, "%s:%d: %s: %s\n", s->grid->path, r->line, r->name, err->msg);
    s->counts[N_FAILED]++;
    return;
  }
  s->counts[plan->feasible ? N_OK : N_INFEASIBLE]++;
  if (plan->feasible)
    fprintf(s->out, "%s: time per sample %.12g s, %d of %lld devices\n", r->name, plan->tps,
            plan->devices_used, r->devices);
  else
    fprintf(s->out, "%s: no feasible plan\n", r->name);
  fflush(s->out);
}

/* Collective over the team: the plan of one row from the group's tables,
 * checked, archived with the tables cut to the row's budget, printed. */
static void answer_row(sweep *s, const solved *sv, int row) {
  const pp_grid_row *r = &s->grid->rows[row];
  const int root = pp_dist_rank(s->t) == 0;
  pp_problem rp = *sv->p;
  rp.devices = (int)r->devices;
  pp_plan *plan = NULL;
  pp_dp *rdp = NULL;
  pp_error err = {0};
  pp_status st = PP_OK;
  double t_write = 0;
  char archive[4200];
  pp_sweep_out_path(s, r->name, ".h5", archive, sizeof archive);
  if (root) {
    st = pp_dp_reconstruct(sv->dp, rp.devices, &plan, &err);
    if (!st && plan->feasible)
      st = pp_check_plan_optimum(sv->g, &rp, plan, pp_dp_optimum(sv->dp, rp.devices), &err);
  }
  if ((st = pp_dist_agree(s->t, st, &err))) goto done;
  if ((st = pp_plan_share(s->t, &plan, sv->g->n_nodes, &err))) goto done;
  rdp = pp_dp_restrict(sv->dp, &rp);
  pp_archive_content c = {.g = sv->g, .p = &rp, .ds = sv->ds, .dp = rdp, .plan = plan, .run = sv->run};
  c.run.seconds_total = pp_now() - sv->t0;
  if ((st = pp_archive_write(s->t, archive, &c, &t_write, &err))) goto done;
  if (root) {
    pp_run_info info = {.input = r->input,
                        .downsets = sv->ds->count,
                        .pairs = pp_dp_pairs(sv->dp),
                        .seconds = pp_now() - sv->t0,
                        .ranks = pp_dist_size(s->t),
                        .bytes_exchanged = sv->run.bytes_exchanged,
                        .peak_rss = sv->run.peak_rss_bytes,
                        .archive = archive,
                        .write_seconds = t_write};
    st = write_text(s, r, sv->g, &rp, plan, &info, &err);
  }
  st = pp_dist_agree(s->t, st, &err);
done:
  if (root) row_outcome(s, r, st, plan, &err);
  pp_dp_free(rdp);
  pp_plan_free(plan);
}

/* Collective over the team: resumes the group's DP from its checkpoint if
 * one is there; a checkpoint that does not belong to it is set aside. */
static int resume_group(sweep *s, const char *ckpt, const char *identity, const pp_problem *p, pp_dp *dp,
                        const pp_downsets *ds) {
  int first_layer = 1;
  pp_error err = {0};
  if (pp_plan_resume(s->t, ckpt, identity, p, dp, ds, NULL, &first_layer, &err)) {
    if (pp_dist_rank(s->t) == 0) {
      fprintf(s->log, "piper sweep: ignoring %s (%s); recomputing\n", ckpt, err.msg);
      unlink(ckpt);
    }
    return 1;
  }
  if (first_layer > 1 && pp_dist_rank(s->t) == 0 && !s->a->quiet)
    fprintf(s->log, "piper sweep: %s: resuming after layer %d\n", ckpt, first_layer - 1);
  return first_layer;
}

/* Collective over the team: one row under the equi baseline, planned on
 * its own (the baseline takes seconds and has no tables to share), checked,
 * archived and printed as `piper plan --planner equi` would. */
static void answer_row_equi(sweep *s, const pp_graph *g, pp_plan_args *pa, int row) {
  const pp_grid_row *r = &s->grid->rows[row];
  const int root = pp_dist_rank(s->t) == 0;
  pp_plan *plan = NULL;
  pp_problem rp;
  pp_error err = {0};
  double t0 = pp_now(), t_write = 0;
  char archive[4200];
  pp_sweep_out_path(s, r->name, ".h5", archive, sizeof archive);
  pa->devices = r->devices;
  pp_status st = pp_cli_make_problem(pa, g, &rp, &err);
  if (!st) st = pp_plan_equi_archive(s->t, g, &rp, archive, t0, &plan, &t_write, &err);
  if (!st && root) {
    pp_run_info info = {.input = r->input,
                        .seconds = pp_now() - t0,
                        .ranks = pp_dist_size(s->t),
                        .archive = archive,
                        .write_seconds = t_write};
    st = write_text(s, r, g, &rp, plan, &info, &err);
  }
  st = pp_dist_agree(s->t, st, &err);
  if (root) row_outcome(s, r, st, plan, &err);
  pp_plan_free(plan);
}

/* Frees the kept input (sweep's in_*). */
static void drop_input(sweep *s) {
  pp_downsets_free(s->in_ds);
  pp_graph_free(s->in_g);
  free(s->in_path);
  s->in_ds = NULL;
  s->in_g = NULL;
  s->in_path = NULL;
}

/* Collective over the team: the graph of the input file path into *g and,
 * if ds is not NULL, its downsets into *ds, both owned by s: the last
 * group's if it read the same path, else read (and enumerated) now.  The
 * team's ranks run the same groups in the same order, so all take the same
 * branch.  PP_OK or the agreed failure of reading or enumerating. */
static pp_status team_input(sweep *s, const char *path, pp_graph **g, pp_downsets **ds, pp_error *err) {
  pp_status st = PP_OK;
  if (!s->in_path || strcmp(s->in_path, path) != 0) {
    drop_input(s);
    if ((st = pp_dist_load_graph(s->t, path, pp_dist_rank(s->t) == 0 ? s->log : NULL, &s->in_g, err)))
      return st;
    s->in_path = pp_xstrdup(path);
  }
  if (ds && !s->in_ds &&
      (st = pp_plan_downsets(s->t, s->in_g, s->a->max_downsets, s->a->max_memory_use, s->mem_limit, &s->in_ds,
                             err)))
    return st;
  *g = s->in_g;
  if (ds) *ds = s->in_ds;
  return PP_OK;
}

/* Collective over the team: a group under the equi baseline: one graph,
 * each row on its own. */
static void run_group_equi(sweep *s, group *gp) {
  const pp_grid_row *big = &s->grid->rows[gp->kmax_row];
  pp_graph *g = NULL;
  char store[8][64];
  pp_plan_args pa;
  pp_error err = {0};
  pp_status st = row_plan_args(big, big->devices, s->a, &pa, store, &err);
  if (!st) st = team_input(s, big->input, &g, NULL, &err);
  if (st)
    group_failed(s, gp, st, &err);
  else
    for (int i = 0; i < gp->n; i++) answer_row_equi(s, g, &pa, gp->rows[i]);
}

/* Collective over the team: one group, from the input to its rows' files. */
static void run_group(sweep *s, group *gp) {
  if (s->a->planner == PP_PLANNER_EQUI) {
    run_group_equi(s, gp);
    return;
  }
  const pp_grid_row *big = &s->grid->rows[gp->kmax_row];
  const int root = pp_dist_rank(s->t) == 0;
  pp_graph *g = NULL;
  pp_downsets *ds = NULL;
  pp_dp *dp = NULL;
  char *hosts = NULL, store[8][64], ckpt[4200], identity[65];
  pp_plan_args pa;
  pp_problem prob;
  pp_error err = {0};
  pp_status st;
  solved sv = {.t0 = pp_now()};
  if ((st = row_plan_args(big, big->devices, s->a, &pa, store, &err))) goto fail;
  double t_enum = pp_now(); /* (0 for an input kept from the group before) */
  if ((st = team_input(s, big->input, &g, &ds, &err))) goto fail;
  t_enum = pp_now() - t_enum;
  if ((st = pp_cli_make_problem(&pa, g, &prob, &err))) goto fail;
  st = pp_dp_create(g, &prob, ds, s->mem_limit, &dp, &err);
  if ((st = pp_dist_agree(s->t, st, &err))) goto fail;
  pp_archive_identity(g, &prob, identity);
  pp_sweep_out_path(s, big->name, ".h5.ckpt", ckpt, sizeof ckpt);
  int first_layer = resume_group(s, ckpt, identity, &prob, dp, ds);
  pp_ckpt_state cs = {.d = s->t,
                      .path = ckpt,
                      .identity = identity,
                      .ds = ds,
                      .dp = dp,
                      .every = s->a->checkpoint_every,
                      .last = pp_now()};
  pp_dist_stats stats;
  s->cur_w = gp->weight;
  double t_dp = pp_now();
  st = pp_dist_solve(s->t, dp, g, &prob, ds, first_layer, pp_dist_rank(s->world) == 0 ? progress : NULL, s,
                     pp_plan_on_layer, &cs, &stats, &err);
  t_dp = pp_now() - t_dp;
  if (st == PP_ERR_INTERRUPTED) {
    if (root) fprintf(s->log, "piper sweep: %s; checkpoint saved to %s\n", err.msg, ckpt);
    s->stopped = 1;
    goto done;
  }
  if (st) goto fail;
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  hosts = pp_dist_allgather_names(s->t, host, 64);
  sv.g = g;
  sv.p = &prob;
  sv.ds = ds;
  sv.dp = dp;
  sv.run = (pp_run_record){.ranks = pp_dist_size(s->t),
                           .hostnames = hosts,
                           .host_width = 64,
                           .seconds_enumerate = t_enum,
                           .seconds_dp = t_dp,
                           .seconds_exchange = pp_dist_max(s->t, stats.exchange_seconds),
                           .bytes_exchanged = pp_dist_sum(s->t, stats.bytes_received),
                           .peak_rss_bytes = pp_dist_max(s->t, peak_rss_bytes()),
                           .resumed = first_layer > 1};
  for (int i = 0; i < gp->n; i++) answer_row(s, &sv, gp->rows[i]);
  if (root) unlink(ckpt);
  goto done;
fail:
  group_failed(s, gp, st, &err);
done:
  free(hosts);
  pp_dp_free(dp);
  pp_dist_release_tables(s->t); /* after dp, which views them */
}

/* Runs this rank's team's groups; team leaders tell world rank 0. */
static void run_groups(sweep *s) {
  const int lead = pp_dist_rank(s->t) == 0, world_root = pp_dist_rank(s->world) == 0;
  for (int i = 0; i < s->n_groups && !s->stopped; i++) {
    group *gp = &s->groups[i];
    if (gp->team != s->team) continue;
    pp_error err = {0};
    if (pp_dist_agree(s->t, pp_stop_requested(NULL) ? PP_ERR_INTERRUPTED : PP_OK, &err)) {
      s->stopped = 1;
      break;
    }
    run_group(s, gp);
    if (s->stopped) break;
    if (world_root) {
      take_note(s, i);
      progress(s, 0, 0, 0);
    } else if (lead) {
      pp_dist_note_send(s->world, i);
    }
  }
  if (lead && !world_root) pp_dist_note_send(s->world, -1);
  if (world_root)
    while (s->finals < s->teams - 1) {
      take_note(s, pp_dist_note_wait(s->world));
      progress(s, 0, 0, 0);
    }
}

static int exit_code(const sweep *s) {
  if (s->stopped) return PP_EXIT_TEMPFAIL;
  if (s->counts[N_FAILED] > 0) return PP_EXIT_FAILURE;
  if (s->counts[N_BAD] > 0) return PP_EXIT_INVALID;
  return PP_EXIT_OK;
}

int pp_cmd_sweep(pp_dist *d, const pp_cmd_env *env, int argc, char **argv, FILE *out, FILE *log) {
  (void)env;
  const int root = pp_dist_rank(d) == 0;
  pp_sweep_args a;
  pp_error err = {0};
  sweep s = {.a = &a, .world = d, .out = out, .log = log};
  double t0 = pp_now();
  pp_status st = pp_cli_parse_sweep(argc, argv, &a, &err);
  if (!st && a.help) {
    if (root) pp_cli_help_sweep(out);
    return PP_EXIT_OK;
  }
  if (st) goto fail;
  pp_signals_install();
  s.mem_limit = a.max_memory_use > 0 ? a.max_memory_use : default_memory_use();
  if ((st = pp_dist_agree(d, pp_grid_read(a.grid, &s.grid, &err), &err))) goto fail;
  if ((st = pp_sweep_survey(&s, &err))) goto fail;
  pp_sweep_make_groups(&s);
  pp_sweep_deal_groups(&s);
  s.t = s.teams > 1 ? pp_dist_split(d, s.team, pp_dist_rank(d)) : d;
  pp_progress_init(&s.pr, root && !a.quiet ? log : NULL);
  s.pr.unit = "rows done";
  if (root && !a.quiet)
    fprintf(log,
            "piper sweep: %s: %d rows (%d bad, %d done before), %d groups to run on %d team(s) of ranks\n",
            a.grid, s.grid->n_rows, (int)s.counts[N_BAD], (int)s.counts[N_BEFORE],
            s.teams > 0 ? s.n_groups : 0, s.teams);
  run_groups(&s);
  pp_progress_done(&s.pr);
  pp_dist_wait_all(d); /* teams finish at different times: the early ones sleep */
  for (int i = 0; i < N_COUNTS; i++) s.counts[i] = pp_dist_sum(d, s.counts[i]);
  s.stopped = pp_dist_max(d, s.stopped) > 0;
  double secs = pp_now() - t0, answered = s.counts[N_OK] + s.counts[N_INFEASIBLE];
  if (root)
    fprintf(out,
            "sweep: %.0f rows planned (%.0f feasible, %.0f infeasible), %.0f done before, %.0f bad, %.0f "
            "failed%s; "
            "%.2f s, %.1f rows/s\n",
            answered, s.counts[N_OK], s.counts[N_INFEASIBLE], s.counts[N_BEFORE], s.counts[N_BAD],
            s.counts[N_FAILED], s.stopped ? ", stopped: rerun the same command to continue" : "", secs,
            secs > 0 ? answered / secs : 0);
  int rc = exit_code(&s);
  drop_input(&s);
  if (s.t != d) pp_dist_free(s.t);
  for (int i = 0; i < s.n_groups; i++) free(s.groups[i].rows);
  free(s.groups);
  free(s.done);
  pp_grid_free(s.grid);
  return rc;
fail:
  if (root) fprintf(log, "piper sweep: error: %s\n", err.msg);
  pp_grid_free(s.grid);
  return pp_status_exit_code(st);
}
