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

/* Rank 0's plan, sent to every rank (for the archive). */
typedef struct plan_job {
  pp_plan **plan;
  int n_nodes;
} plan_job;

static pp_status plan_produce(void *user, pp_pack *out, pp_error *err) {
  const plan_job *j = user;
  if (out) pp_plan_pack(*j->plan, out);
  return PP_OK;
}

static pp_status plan_consume(void *user, pp_unpack *in, pp_error *err) {
  plan_job *j = user;
  pp_plan *p = pp_plan_unpack(in, j->n_nodes);
  if (!p || !pp_unpack_done(in)) {
    pp_plan_free(p);
    return pp_error_set(err, PP_ERR_INTERNAL, "the plan received from rank 0 is malformed");
  }
  pp_plan_free(*j->plan);
  *j->plan = p;
  return PP_OK;
}

pp_status pp_plan_share(pp_dist *d, pp_plan **plan, int n_nodes, pp_error *err) {
  plan_job j = {plan, n_nodes};
  return pp_dist_from_root(d, plan_produce, plan_consume, &j, err);
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

/* A checkpoint read by rank 0 and sent to every rank: whether there is
 * one, the layers it holds and their packed tables. */
typedef struct resume_job {
  const char *path, *identity;
  const pp_downsets *ds;
  const pp_problem *p;
  const pp_dp *dp;
  int present, layers;
  char *buf;
  size_t len;
} resume_job;

static pp_status resume_produce(void *user, pp_pack *out, pp_error *err) {
  resume_job *j = user;
  j->present = access(j->path, F_OK) == 0;
  pp_status st = PP_OK;
  if (j->present)
    st = pp_checkpoint_read(j->path, j->identity, j->ds, j->p, j->dp, &j->layers, &j->buf, &j->len, err);
  if (!st && out) {
    pp_pack_i32(out, j->present);
    pp_pack_i32(out, j->layers);
    pp_pack_bytes(out, j->buf, j->len);
  }
  return st;
}

static pp_status resume_consume(void *user, pp_unpack *in, pp_error *err) {
  resume_job *j = user;
  if (pp_unpack_int_in(in, 0, 1, &j->present) || pp_unpack_i32(in, &j->layers))
    return pp_error_set(err, PP_ERR_INTERNAL, "the checkpoint received from rank 0 is malformed");
  j->len = pp_unpack_left(in);
  j->buf = pp_xmalloc(j->len + 1);
  pp_unpack_bytes(in, j->buf, j->len);
  return PP_OK;
}

pp_status pp_plan_resume(pp_dist *d, const char *path, const char *identity, const pp_problem *p, pp_dp *dp,
                         const pp_downsets *ds, FILE *log, int *first_layer, pp_error *err) {
  *first_layer = 1;
  resume_job j = {.path = path, .identity = identity, .ds = ds, .p = p, .dp = dp};
  pp_status st = pp_dist_from_root(d, resume_produce, resume_consume, &j, err);
  if (st) goto done;
  if (!j.present) {
    if (pp_dist_rank(d) == 0 && log)
      fprintf(log, "piper: no checkpoint at %s; starting from the beginning\n", path);
    goto done;
  }
  if (j.layers < 0 || j.layers >= ds->n_layers) {
    st = pp_error_set(err, PP_ERR_INPUT, "%s: checkpoint has %d layers, the problem %d", path, j.layers,
                      ds->n_layers - 1);
    goto done;
  }
  char what[4200];
  snprintf(what, sizeof what, "%s: checkpoint", path);
  const int K = pp_dp_table(dp, 0)->k_last;
  st = pp_dist_install(d, dp, 1, ds->layer_start[j.layers + 1], K, j.buf, j.len, PP_ERR_INPUT, what, err);
  if (st) goto done;
  *first_layer = j.layers + 1;
  if (pp_dist_rank(d) == 0 && log)
    fprintf(log, "piper: resuming after layer %d of %d from %s\n", j.layers, ds->n_layers - 1, path);
done:
  free(j.buf);
  return pp_dist_agree(d, st, err);
}

pp_status pp_plan_downsets(pp_dist *d, const pp_graph *g, long long max_count, double given, double fallback,
                           pp_downsets **out, pp_error *err) {
  const int capped = given <= 0 && (fallback <= 0 || fallback > PP_DOWNSETS_DEFAULT_BYTES);
  const double limit = given > 0 ? given : capped ? PP_DOWNSETS_DEFAULT_BYTES : fallback;
  pp_status st = pp_dist_downsets(d, g, max_count, limit, out, err);
  if (st == PP_ERR_LIMIT && capped && err && strstr(err->msg, "--max-memory-use")) {
    size_t len = strlen(err->msg);
    snprintf(err->msg + len, sizeof err->msg - len,
             " (1 GiB is the downsets' own limit when --max-memory-use is not given)");
  }
  return st;
}
