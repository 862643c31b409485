/*
 * sweep_layout.c - `piper sweep` before it runs (see sweep.h): which rows
 * are done already, the groups of rows one DP answers, and the teams of
 * ranks the groups are dealt to.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sweep.h"

void pp_sweep_out_path(const sweep *s, const char *name, const char *suffix, char *buf, size_t n) {
  snprintf(buf, n, "%s/%s%s", s->a->out_dir, name, suffix);
}

static int same_group(const pp_grid_row *x, const pp_grid_row *y) {
  return strcmp(x->input, y->input) == 0 && x->memory == y->memory && x->bandwidth == y->bandwidth &&
         x->microbatches == y->microbatches && x->no_dp == y->no_dp && x->no_tp == y->no_tp &&
         x->no_recompute == y->no_recompute && x->zero == y->zero &&
         strcmp(x->schedule ? x->schedule : "", y->schedule ? y->schedule : "") == 0;
}

/* mkdir -p */
static pp_status make_dir(const char *path, pp_error *err) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1;; p++) {
    char c = *p;
    if (c != '/' && c != '\0') continue;
    *p = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
      return pp_error_set(err, PP_ERR_IO, "cannot create the folder %s: %s", buf, strerror(errno));
    *p = c;
    if (c == '\0') break;
  }
  return PP_OK;
}

/* Groups over every valid row (so that --part numbers them the same on
 * every rerun), keeping the rows not done before and this part's groups. */
void pp_sweep_make_groups(sweep *s) {
  const pp_grid *gr = s->grid;
  int *first = pp_xmalloc(sizeof(int) * (size_t)(gr->n_rows + 1)), n_all = 0;
  s->groups = pp_xcalloc((size_t)gr->n_rows + 1, sizeof *s->groups);
  int *gi_of = pp_xmalloc(sizeof(int) * (size_t)(gr->n_rows + 1));
  for (int r = 0; r < gr->n_rows; r++) {
    gi_of[r] = -1;
    if (gr->rows[r].error[0]) continue;
    int gi = 0;
    while (gi < n_all && !same_group(&gr->rows[first[gi]], &gr->rows[r])) gi++;
    if (gi == n_all) first[n_all++] = r;
    gi_of[r] = gi;
  }
  int *slot = pp_xmalloc(sizeof(int) * (size_t)(n_all + 1));
  for (int gi = 0; gi < n_all; gi++) {
    slot[gi] = -1;
    if (gi % s->a->parts != s->a->part) continue;
    slot[gi] = s->n_groups++;
    s->groups[slot[gi]].kmax_row = -1;
  }
  for (int r = 0; r < gr->n_rows; r++) {
    if (gi_of[r] < 0 || slot[gi_of[r]] < 0) continue;
    s->rows_total++;
    if (s->done[r]) {
      s->rows_done++;
      if (pp_dist_rank(s->world) == 0) {
        s->counts[N_BEFORE]++;
        if (!s->a->quiet)
          fprintf(s->log, "piper sweep: %s: done already (%s/%s.txt exists), skipping\n", gr->rows[r].name,
                  s->a->out_dir, gr->rows[r].name);
      }
      continue;
    }
    group *g = &s->groups[slot[gi_of[r]]];
    if (!g->rows) g->rows = pp_xmalloc(sizeof(int) * (size_t)gr->n_rows);
    g->rows[g->n++] = r;
    if (g->kmax_row < 0 || gr->rows[r].devices > gr->rows[g->kmax_row].devices) g->kmax_row = r;
  }
  free(first);
  free(gi_of);
  free(slot);
}

/* Estimated work of a group: the DP's cost grows with the budget and with
 * the graph (the input's size stands for it). */
static double group_weight(const sweep *s, const group *g) {
  const pp_grid_row *r = &s->grid->rows[g->kmax_row];
  struct stat sb;
  double bytes = stat(r->input, &sb) == 0 ? (double)sb.st_size : 1e4;
  return bytes * (double)r->devices + 1;
}

/* Teams of ranks and the groups dealt to them: largest estimated work
 * first, each to the least-loaded team (ties to the lower team). */
void pp_sweep_deal_groups(sweep *s) {
  int P = pp_dist_size(s->world), G = 0;
  for (int i = 0; i < s->n_groups; i++) {
    group *g = &s->groups[i];
    g->team = -1;
    if (g->n == 0) continue;
    g->weight = group_weight(s, g);
    s->total_w += g->weight;
    G++;
  }
  s->teams = G < 1 ? 1 : (G < P ? G : P);
  s->team = (int)((long long)pp_dist_rank(s->world) * s->teams / P);
  double *load = pp_xcalloc((size_t)s->teams, sizeof(double));
  for (int n = 0; n < G; n++) {
    int best = -1;
    for (int i = 0; i < s->n_groups; i++)
      if (s->groups[i].n && s->groups[i].team < 0 &&
          (best < 0 || s->groups[i].weight > s->groups[best].weight))
        best = i;
    int tm = 0;
    for (int k = 1; k < s->teams; k++)
      if (load[k] < load[tm]) tm = k;
    s->groups[best].team = tm;
    load[tm] += s->groups[best].weight;
  }
  free(load);
}

/* What world rank 0 finds before the sweep starts. */
typedef struct survey_job {
  sweep *s;
  char *flags; /* n_rows bytes: 1 where the row's report exists */
} survey_job;

static pp_status survey_produce(void *user, pp_pack *out, pp_error *err) {
  survey_job *j = user;
  sweep *s = j->s;
  const int n = s->grid->n_rows;
  pp_status st = make_dir(s->a->out_dir, err);
  for (int r = 0; r < n && !st; r++) {
    const pp_grid_row *row = &s->grid->rows[r];
    char path[4200];
    if (row->error[0]) {
      fprintf(s->log, "%s\n", row->error);
      s->counts[N_BAD]++;
      continue;
    }
    pp_sweep_out_path(s, row->name, ".txt", path, sizeof path);
    j->flags[r] = access(path, F_OK) == 0;
  }
  if (!st && out) pp_pack_bytes(out, j->flags, (size_t)n);
  return st;
}

static pp_status survey_consume(void *user, pp_unpack *in, pp_error *err) {
  survey_job *j = user;
  if (pp_unpack_bytes(in, j->flags, (size_t)j->s->grid->n_rows) || !pp_unpack_done(in))
    return pp_error_set(err, PP_ERR_INTERNAL, "the done flags received from rank 0 are malformed");
  return PP_OK;
}

/* World rank 0 makes the output folder, finds the rows already done
 * (NAME.txt exists) and reports the bad rows; every rank receives the done flags (pp_dist_from_root).
 * Collective. */
pp_status pp_sweep_survey(sweep *s, pp_error *err) {
  survey_job j = {s, pp_xcalloc((size_t)s->grid->n_rows + 1, 1)};
  pp_status st = pp_dist_from_root(s->world, survey_produce, survey_consume, &j, err);
  if (st) {
    free(j.flags);
    return st;
  }
  s->done = (unsigned char *)j.flags;
  return PP_OK;
}
