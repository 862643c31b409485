/*
 * plan_steps.c - the steps of planning that `piper plan` and `piper sweep`
 * share: sending the plan to every rank, checkpoints after a layer, and
 * resuming from a checkpoint (see plan_steps.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "plan_steps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "piper/archive.h"
#include "piper/progress.h"

void pp_plan_share(pp_dist *d, pp_plan **plan) {
  if (pp_dist_size(d) == 1) return;
  char *buf = NULL;
  size_t len = 0, cap = 0;
  if (pp_dist_rank(d) == 0) {
    const pp_plan *p = *plan;
    int head[4] = {p->feasible, p->devices_used, p->sum_d, p->n_stages};
    pp_bytes_put(&buf, &len, &cap, head, sizeof head);
    pp_bytes_put(&buf, &len, &cap, &p->tps, sizeof p->tps);
    for (int i = 0; i < p->n_stages; i++) {
      const pp_plan_stage *s = &p->stages[i];
      int sh[4] = {s->n_nodes, s->d, s->t, s->y};
      double sv[2] = {s->load, s->memory};
      pp_bytes_put(&buf, &len, &cap, sh, sizeof sh);
      pp_bytes_put(&buf, &len, &cap, sv, sizeof sv);
      pp_bytes_put(&buf, &len, &cap, s->nodes, sizeof(int) * (size_t)s->n_nodes);
      pp_bytes_put(&buf, &len, &cap, s->tmpc, sizeof(int) * (size_t)s->n_nodes);
    }
  }
  pp_dist_bcast_bytes(d, &buf, &len);
  if (pp_dist_rank(d) != 0) {
    size_t pos = 0;
    int head[4];
    pp_bytes_get(buf, &pos, head, sizeof head);
    pp_plan *p = pp_plan_new(head[3]);
    p->feasible = head[0];
    p->devices_used = head[1];
    p->sum_d = head[2];
    pp_bytes_get(buf, &pos, &p->tps, sizeof p->tps);
    for (int i = 0; i < p->n_stages; i++) {
      pp_plan_stage *s = &p->stages[i];
      int sh[4];
      double sv[2];
      pp_bytes_get(buf, &pos, sh, sizeof sh);
      pp_bytes_get(buf, &pos, sv, sizeof sv);
      s->n_nodes = sh[0];
      s->d = sh[1];
      s->t = sh[2];
      s->y = sh[3];
      s->load = sv[0];
      s->memory = sv[1];
      s->nodes = pp_xmalloc(sizeof(int) * (size_t)s->n_nodes);
      s->tmpc = pp_xmalloc(sizeof(int) * (size_t)s->n_nodes);
      pp_bytes_get(buf, &pos, s->nodes, sizeof(int) * (size_t)s->n_nodes);
      pp_bytes_get(buf, &pos, s->tmpc, sizeof(int) * (size_t)s->n_nodes);
    }
    pp_plan_free(*plan);
    *plan = p;
  }
  free(buf);
}

pp_status pp_plan_on_layer(void *user, int layer, int stopping, pp_error *err) {
  pp_ckpt_state *c = user;
  if (!c->path || pp_dist_rank(c->d) != 0) return PP_OK;
  double now = pp_now();
  if (!stopping && now - c->last < c->every) return PP_OK;
  if (layer >= c->ds->n_layers - 1) return PP_OK; /* the archive follows */
  pp_status st = pp_checkpoint_write(c->path, c->identity, c->ds, c->dp, layer, err);
  c->last = now;
  if (st && !stopping) {
    if (c->warn) fprintf(c->warn, "piper: warning: no checkpoint after layer %d: %s\n", layer, err->msg);
    return PP_OK;
  }
  if (st) pp_error_prefix(err, "stopping, but the checkpoint could not be written");
  return st;
}

pp_status pp_plan_resume(pp_dist *d, const char *path, const char *identity, const pp_problem *p, pp_dp *dp,
                         const pp_downsets *ds, FILE *log, int *first_layer, pp_error *err) {
  *first_layer = 1;
  int present = pp_dist_rank(d) == 0 && access(path, F_OK) == 0;
  char *buf = NULL;
  size_t len = 0;
  int layers = 0;
  pp_status st = PP_OK;
  if (pp_dist_rank(d) == 0 && present)
    st = pp_checkpoint_read(path, identity, ds, p, &layers, &buf, &len, err);
  if ((st = pp_dist_agree(d, st, err))) goto done;
  {
    /* share (present, layers) then the tables */
    char meta[32];
    snprintf(meta, sizeof meta, "%d %d", present, layers);
    char *mb = meta;
    size_t ml = strlen(meta) + 1;
    pp_dist_bcast_bytes(d, &mb, &ml);
    if (pp_dist_rank(d) != 0) {
      if (sscanf(mb, "%d %d", &present, &layers) != 2) present = 0;
      free(mb);
    }
  }
  if (!present) {
    if (pp_dist_rank(d) == 0 && log)
      fprintf(log, "piper: no checkpoint at %s; starting from the beginning\n", path);
    goto done;
  }
  pp_dist_bcast_bytes(d, &buf, &len);
  if (layers < 0 || layers >= ds->n_layers) {
    st = pp_error_set(err, PP_ERR_INPUT, "%s: checkpoint has %d layers, the problem %d", path, layers,
                      ds->n_layers - 1);
    goto done;
  }
  size_t pos = 0;
  int expected = ds->layer_start[layers + 1] - 1, got = 0;
  while (pos < len) {
    int id;
    pp_stairs *t = pp_stairs_unpack(buf, len, &pos, &id);
    if (!t || id < 1 || id >= ds->layer_start[layers + 1] || t->k_first != 0 ||
        t->k_last != pp_dp_table(dp, 0)->k_last) {
      pp_stairs_free(t);
      st = pp_error_set(err, PP_ERR_INPUT, "%s: checkpoint tables are damaged", path);
      goto done;
    }
    pp_dp_set_table(dp, id, t);
    got++;
  }
  if (got != expected) {
    st = pp_error_set(err, PP_ERR_INPUT, "%s: checkpoint holds %d tables, expected %d", path, got, expected);
    goto done;
  }
  *first_layer = layers + 1;
  if (pp_dist_rank(d) == 0 && log)
    fprintf(log, "piper: resuming after layer %d of %d from %s\n", layers, ds->n_layers - 1, path);
done:
  free(buf);
  return pp_dist_agree(d, st, err);
}
