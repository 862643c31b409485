/*
 * gen_json.c - the generator's JSON writer.
 *
 * The JSON is written with fprintf in a fixed key order and "%.12g" numbers,
 * so the same configuration gives the same bytes (inputs/ relies on it).  The
 * cost model lives in gen_model.c, the presets in gen_presets.c.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "piper/gen.h"

/* ---- JSON ---- */

/* Writes s as a JSON string literal (quotes included). */
static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(out, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(out, "\\u%04x", *p);
    else
      fputc(*p, out);
  }
  fputc('"', out);
}

/* A number in the fixed output format (finite values only). */
static void num(FILE *out, double v) {
  assert(isfinite(v) && v >= 0);
  if (v == 0.0) v = 0.0; /* no "-0" */
  fprintf(out, "%.12g", v);
}

/* The node list of the chain: kind and name of node i. */
typedef struct node_desc {
  pp_gen_node_kind kind;
  char name[48];
} node_desc;

static int node_count(const pp_gen_config *cfg) {
  int per_layer = cfg->split_blocks ? 2 : 1;
  int final_norm = cfg->model.family == PP_GEN_DECODER ? 1 : 0;
  return 1 + per_layer * cfg->model.layers + final_norm + 1;
}

static node_desc node_at(const pp_gen_config *cfg, int i) {
  node_desc d;
  int n = node_count(cfg);
  int per_layer = cfg->split_blocks ? 2 : 1;
  int blocks_end = 1 + per_layer * cfg->model.layers;
  if (i == 0) {
    d.kind = PP_GEN_EMBEDDING;
    snprintf(d.name, sizeof d.name, "embedding");
  } else if (i < blocks_end) {
    int layer = (i - 1) / per_layer;
    if (!cfg->split_blocks) {
      d.kind = PP_GEN_BLOCK;
      snprintf(d.name, sizeof d.name, "block.%d", layer);
    } else if ((i - 1) % 2 == 0) {
      d.kind = PP_GEN_ATTENTION;
      snprintf(d.name, sizeof d.name, "block.%d.attention", layer);
    } else {
      d.kind = PP_GEN_MLP;
      snprintf(d.name, sizeof d.name, "block.%d.mlp", layer);
    }
  } else if (i == n - 1) {
    d.kind = PP_GEN_HEAD;
    snprintf(d.name, sizeof d.name, "head");
  } else {
    d.kind = PP_GEN_FINAL_NORM;
    snprintf(d.name, sizeof d.name, "final_norm");
  }
  return d;
}

/* Writes {"<id>": bytes} for a neighbour (or {} when id < 0). */
static void sync_map(FILE *out, int id, double bytes) {
  if (id < 0) {
    fputs("{}", out);
    return;
  }
  fprintf(out, "{\"%d\": ", id);
  num(out, bytes);
  fputc('}', out);
}

/* Writes `, "key": v` (v in the fixed number format). */
static void field(FILE *out, const char *key, double v) {
  fprintf(out, ", \"%s\": ", key);
  num(out, v);
}

/* The top-level members before "nodes", from "maxDevices" on. */
static void write_header(const pp_gen_config *cfg, FILE *out) {
  const pp_gen_model *m = &cfg->model;
  fprintf(out, "{\n  \"maxDevices\": %d,\n  \"maxMemoryPerDevice\": ", cfg->devices);
  num(out, cfg->gpu.memory);
  fputs(",\n  \"bandwidth\": ", out);
  num(out, cfg->gpu.network);
  fprintf(out, ",\n  \"mbsInBatch\": %d,\n  \"flopsPerSample\": ", cfg->global_batch / cfg->microbatch);
  /* a sample of the planner is one microbatch of b sequences */
  num(out, 3.0 * pp_gen_forward_flops(m) * cfg->microbatch);
  fprintf(out, ",\n  \"tokensPerSample\": %d,\n  \"peakFlops\": ", m->seq * cfg->microbatch);
  num(out, cfg->gpu.peak_flops);
  if (cfg->two_level) { /* the node of the preset: NVLink per GPU and direction */
    fprintf(out, ",\n  \"devicesPerNode\": %d,\n  \"intraNodeBandwidth\": ", cfg->gpu.gpus_per_node);
    num(out, cfg->gpu.nvlink);
  }
}

/* One TMPC object of node i (of n) without its leading separator; sync is
 * the bytes it adds to each neighbour's syncTime. */
static void write_tmpc(const pp_gen_config *cfg, FILE *out, const pp_gen_tmpc *x, pp_gen_variant v, int i,
                       int n, double sync) {
  fprintf(out, "\n        {\"id\": \"%s\"", pp_gen_variant_id(v));
  field(out, "timePerSample", x->time_per_sample);
  field(out, "parameterSize", x->parameter_size);
  field(out, "memoryUsageA", x->memory_a);
  field(out, "memoryUsageB", x->memory_b);
  if (cfg->memory_parts) {
    field(out, "weightBytes", x->weight_bytes);
    field(out, "gradientBytes", x->gradient_bytes);
    field(out, "optimizerBytes", x->optimizer_bytes);
  }
  fputs(", \"syncTimeFw\": ", out);
  sync_map(out, i > 0 ? i - 1 : -1, sync);
  fputs(", \"syncTimeBw\": ", out);
  sync_map(out, i < n - 1 ? i + 1 : -1, sync);
  fputc('}', out);
}

/* Node i of n with its TMPCs for every degree t allowed; edge_bytes is the
 * boundary activation, max_t the largest t emitted. */
static void write_node(const pp_gen_config *cfg, FILE *out, int i, int n, double edge_bytes, int max_t) {
  const unsigned variants = cfg->variants ? cfg->variants : PP_GEN_DEFAULT_VARIANTS;
  node_desc d = node_at(cfg, i);
  pp_gen_node_cost c;
  pp_gen_node_cost_of(cfg, d.kind, &c);
  fprintf(out, "    {\"id\": %d, \"name\": ", i);
  json_string(out, d.name);
  fputs(", \"TMPCs\": {", out);
  int first_t = 1;
  for (int t = 1; t <= 8; t *= 2) {
    if (!pp_gen_tp_allowed(cfg, t)) continue;
    /* Megatron-LM's scatter/gather (Narayanan et al. 2021, Sec. 4.1): each
     * of a stage's t devices sends and receives 1/t of a boundary
     * activation over its own network link, and the t pieces are
     * all-gathered over NVLink (a few tenths of a millisecond, neglected).
     * The planner charges 2 (communicationCost + syncTime) per boundary
     * edge, so the edge carries the activation / t_max (the largest t
     * emitted) and a TMPC of degree t adds activation (1/t - 1/t_max). */
    double sync = edge_bytes / t - edge_bytes / max_t;
    fprintf(out, "%s\n      \"%d\": [", first_t ? "" : ",", t);
    first_t = 0;
    /* the variants asked for, as they apply to this node at t, each once,
     * in the fixed order of pp_gen_variant */
    unsigned emit = 0;
    for (int v = 0; v < PP_GEN_N_VARIANTS; v++)
      if (variants & (1u << v)) emit |= 1u << pp_gen_variant_effective(cfg, d.kind, t, (pp_gen_variant)v);
    int first_v = 1;
    for (int v = 0; v < PP_GEN_N_VARIANTS; v++) {
      if (!(emit & (1u << v))) continue;
      pp_gen_tmpc x = pp_gen_tmpc_variant(cfg, &c, t, (pp_gen_variant)v);
      if (!first_v) fputc(',', out);
      first_v = 0;
      write_tmpc(cfg, out, &x, (pp_gen_variant)v, i, n, sync);
    }
    fputs("\n      ]", out);
  }
  fprintf(out, "\n    }}%s\n", i < n - 1 ? "," : "");
}

pp_status pp_gen_write_json(const pp_gen_config *cfg, FILE *out, pp_error *err) {
  const pp_gen_model *m = &cfg->model;
  int n = node_count(cfg);
  double elem = cfg->precision == PP_GEN_FP32 ? 4.0 : 2.0;
  /* the b x s x h activation of one sample (a microbatch of b sequences) */
  double edge_bytes = elem * m->seq * m->hidden * cfg->microbatch;
  int max_t = 1;
  for (int t = 1; t <= 8; t *= 2)
    if (pp_gen_tp_allowed(cfg, t)) max_t = t;

  write_header(cfg, out);
  fputs(",\n  \"nodes\": [\n", out);
  for (int i = 0; i < n; i++) write_node(cfg, out, i, n, edge_bytes, max_t);
  fputs("  ],\n  \"edges\": [\n", out);
  for (int i = 0; i + 1 < n; i++) {
    fprintf(out, "    {\"sourceId\": %d, \"destId\": %d, \"communicationCost\": ", i, i + 1);
    num(out, edge_bytes / max_t);
    fprintf(out, "}%s\n", i + 2 < n ? "," : "");
  }
  fputs("  ]\n}\n", out);
  if (ferror(out)) return pp_error_set(err, PP_ERR_IO, "error writing the JSON output");
  return PP_OK;
}
